"""Test helpers: run the CLI (in-process or as a subprocess), wait for conditions, compare indexes."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from notedex.vault.model import Note

REPO = Path(__file__).resolve().parent.parent
DEMO_VAULT = REPO / "examples" / "demo-vault"


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(
    *args: str | Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    cwd: Path | None = None,
) -> Result:
    """Run `python -m notedex ARGS` in a subprocess and capture everything."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "notedex", *map(str, args)],
        capture_output=True,
        text=True,
        env=full_env,
        input=input,
        timeout=timeout,
        cwd=cwd,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_inprocess(
    *args: str | Path,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 30,
) -> Result:
    """Run ``notedex.cli.main(ARGS)`` in this process, captured like `run_cli` captures a child.

    stdout and stderr are fresh non-TTY streams with a byte ``.buffer`` (the CLI writes text,
    the C JSON encoder's output and, for stdin, reads ``sys.stdin.buffer``), encoded as the
    child's would be (UTF-8; surrogateescape on stdout) and decoded as ``subprocess.run(text=True)``
    decodes (strict UTF-8, universal newlines). argparse's ``SystemExit`` becomes the exit code.
    The streams, ``os.environ`` and the working directory are restored afterwards, whatever happens.
    A call that runs past ``timeout`` seconds fails the test (a SIGALRM, on the main thread), so
    "never hangs" cases keep the bound a child process had.
    """
    from notedex.cli import main

    raw = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    out, err = io.BytesIO(), io.BytesIO()
    fake_in = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    fake_out = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", write_through=True)
    fake_err = io.TextIOWrapper(
        err, encoding="utf-8", errors="backslashreplace", write_through=True
    )
    sys.stdin, sys.stdout, sys.stderr = fake_in, fake_out, fake_err
    try:
        if env:
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        alarm = _Alarm(timeout)
        try:
            with alarm:
                code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                fake_err.write(exc.code + "\n")
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for fake in (fake_out, fake_err):
            fake.flush()
            fake.detach()  # keep the BytesIO open: a collected wrapper would close it
    return Result(code, _as_child_text(out.getvalue()), _as_child_text(err.getvalue()))


class CallTimeout(BaseException):
    """A CLI call ran too long; a BaseException, so the CLI's ``except Exception`` can't swallow it."""


class _Alarm:
    """Raise `CallTimeout` in the main thread after ``seconds`` (a no-op off the main thread)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = threading.current_thread() is threading.main_thread()

    def _ring(self, signum: int, frame: object) -> None:
        raise CallTimeout(f"notedex.cli.main ran past {self.seconds}s")

    def __enter__(self) -> None:
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def _as_child_text(data: bytes) -> str:
    """Bytes decoded the way ``subprocess.run(text=True)`` decodes a pipe."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None).read()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = 20.0,
    interval: float = 0.05,
    message: str = "condition",
) -> Any:
    """Poll until predicate() is truthy; never sleep for luck (STYLE 13)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # the index may be mid-creation
            last = exc
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}; last value: {last!r}")


class SpecVault:
    """A vault on disk and its index, driven through the CLI only (in-process, `run_inprocess`)."""

    READ_ONLY = frozenset({"scan", "health", "graph", "show", "lookup", "status"})

    def __init__(self, root: Path, db: Path) -> None:
        self.root = root
        self.db = db
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        # answers of read-only commands, keyed by the exact state of the vault on disk: asking
        # the same question of an unchanged vault twice only costs time
        self._answers: dict[tuple[Any, ...], str] = {}

    def fingerprint(self) -> tuple[tuple[Any, ...], ...]:
        """Every entry under the vault (names as bytes, lstat facts): changes with any edit."""
        facts = []
        for dirpath, dirs, files in os.walk(os.fsencode(self.root)):
            for name in dirs + files:
                st = os.lstat(os.path.join(dirpath, name))
                facts.append((dirpath, name, st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(sorted(facts))

    def write(self, rel: str, text: str) -> Path:
        return write(self.root / rel, text)

    def write_bytes(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def run(self, *args: str | Path, input: str | None = None) -> Result:
        return run_inprocess(*args, "--vault", self.root, "--db", self.db, "--json", input=input)

    def json(self, *args: str | Path, ok: tuple[int, ...] = (0,), input: str | None = None) -> Any:
        key = None
        if input is None and str(args[0]) in self.READ_ONLY:
            key = (tuple(map(str, args)), ok, self.fingerprint())
            if key in self._answers:
                return json.loads(self._answers[key])
        result = self.run(*args, input=input)
        data = pure_json(result, ok)
        if key is not None:
            self._answers[key] = result.stdout
        return data

    # shorthands
    def scan(self, *extra: str) -> dict[str, Any]:
        data: dict[str, Any] = self.json("scan", *extra)
        return data

    def health(self) -> dict[str, Any]:
        data: dict[str, Any] = self.json("health", ok=(0, 1))
        return data

    def graph(self) -> dict[str, Any]:
        data: dict[str, Any] = self.json("graph")
        return data

    def show(self, note: str) -> dict[str, Any]:
        data: dict[str, Any] = self.json("show", note)
        return data

    def paths(self) -> list[str]:
        return sorted(n["path"] for n in self.scan()["notes"])

    def note(self, path: str) -> dict[str, Any]:
        """The scan fields of one note, read through `show` (test_scan_and_show_agree pins that
        both commands carry the same facts)."""
        shown = self.show(path)
        return {k: shown[k] for k in ("id", "title", "type", "status", "path", "tags", "aliases")}

    def links(self, note: str) -> list[tuple[str, str | None, bool, str | None]]:
        """(kind, target, broken, key) per occurrence, in file order."""
        return [
            (lk["kind"], lk["target"], lk["broken"], lk["key"]) for lk in self.show(note)["links"]
        ]

    def targets(self, note: str) -> list[str | None]:
        return [
            lk["target"] if not lk["broken"] else f"BROKEN:{lk['key']}"
            for lk in self.show(note)["links"]
        ]


def pure_json(result: Result, ok: tuple[int, ...] = (0,)) -> Any:
    """Exactly one JSON document on stdout, an expected exit code, never a traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code in ok, (result.code, result.stdout, result.stderr)
    return json.loads(result.stdout)  # raises on anything before or after the one document


def cli_json(vault: Path, db: Path, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    """``notedex ARGS --vault VAULT --db DB --json`` in-process, checked by `pure_json`."""
    return pure_json(run_inprocess(*args, "--vault", vault, "--db", db, "--json"), ok)


def by_line(show: dict[str, Any]) -> dict[int, list[str]]:
    """`show`'s links grouped by line: the target path, or ``BROKEN:key``."""
    out: dict[int, list[str]] = {}
    for lk in show["links"]:
        out.setdefault(lk["line"], []).append(
            lk["target"] if not lk["broken"] else f"BROKEN:{lk['key']}"
        )
    return out


def broken(health: dict[str, Any]) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (b["source"], b["line"], b["column"], b["text"], b["target"]) for b in health["brokenLinks"]
    )


def warned_paths(health: dict[str, Any]) -> set[str]:
    return {w["path"] for w in health["warnings"]}


def paths_of(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["path"] for i in items)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def parse_text(text: str, path: str = "Src.md") -> Note:
    """``parse_note`` of ``text`` as UTF-8: the pure parser, no vault."""
    from notedex.vault.parse import parse_note

    return parse_note(text.encode("utf-8"), path)


def tag_names(text: str) -> list[str]:
    return [tag.name for tag in parse_text(text).tags]


def link_rows(text: str) -> list[tuple[str, str, int]]:
    return [(link.kind, link.linkpath, link.column) for link in parse_text(text).links]


def dump_index(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every fact of the index, keyed by paths rather than row ids, sorted: for equality checks."""
    from notedex.store.database import add_sql_functions
    from notedex.store.schema import BROKEN_LINK_DOC, LINK_TEXT, NOTE_TITLE

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    add_sql_functions(conn)  # note_fts's content is the view note_fts_text
    try:
        q = conn.execute
        files = "(SELECT id, path FROM files)"
        out = {
            "files": q(
                "SELECT path, is_note, size, mtime_ns, inode, coalesce(disk_rel, '') FROM files"
            ).fetchall(),
            "bases": q(
                f"SELECT f.path, doc, error FROM bases b JOIN {files} f ON f.id = b.file_id"
            ).fetchall(),
            "notes": q(
                f"SELECT f.path, stem, {NOTE_TITLE}, frontmatter_title, first_h1, note_id, type, status, "
                f"excluded, content_hash, properties, outline FROM notes n JOIN {files} f ON f.id = n.file_id"
            ).fetchall(),
            "tags": q(
                f"SELECT f.path, k.tag, k.tag_key, t.inline, t.position FROM tags t "
                f"JOIN tag_names k ON k.id = t.tag_id JOIN {files} f ON f.id = t.file_id"
            ).fetchall(),
            "aliases": q(
                f"SELECT f.path, position, alias, alias_key FROM aliases a JOIN {files} f ON f.id = a.file_id"
            ).fetchall(),
            "links": q(
                f"SELECT s.path, seq, kind, {LINK_TEXT}, raw, linkpath, subpath, display, line, col, name_key, "
                f"t.path, ambiguous "
                f"FROM links l JOIN {files} s ON s.id = l.source_id LEFT JOIN {files} t ON t.id = l.target_id"
            ).fetchall(),
            "problems": q("SELECT path, severity, kind, message FROM problems").fetchall(),
            # issue 33: the declared file findings (orphans, unlinked, dead ends, unused)
            "file_findings": q("SELECT code, path, title FROM file_findings").fetchall(),
            # A `renamed` suggestion comes from the rename history, which is not a fact of the
            # vault: a fresh index cannot have it (tests/spec/test_fixes.py checks it apart).
            "broken_links": q(
                "SELECT source, line, col, seq, text, target, "
                "CASE WHEN reason = 'renamed' THEN NULL ELSE suggestion END, "
                "nullif(reason, 'renamed') FROM broken_links"
            ).fetchall(),
            # issue 33: the declared link findings (self-links) and the links' comment flag
            "link_findings": q(
                f"SELECT code, s.path, seq FROM link_findings x JOIN {files} s "
                "ON s.id = x.source_id"
            ).fetchall(),
            "links_in_comment": q(
                f"SELECT s.path, seq, in_comment FROM links l JOIN {files} s ON s.id = l.source_id"
            ).fetchall(),
            # lookup's tier 1 keys, kept by store/notes.py (a move re-keys the stem)
            "exact_names": q(
                f"SELECT key, f.path, alias FROM exact_names x JOIN {files} f ON f.id = x.file_id"
            ).fetchall(),
            # SEMANTICS 13: kept by store/notes.py with the note's rows (a move keeps them)
            "tasks": q(
                f"SELECT f.path, seq, line, col, status, state, text, tags, due, scheduled, "
                f"start, created, done, cancelled FROM tasks x JOIN {files} f ON f.id = x.file_id"
            ).fetchall(),
            "broken_anchors": q(
                f"SELECT s.path, seq, t.path, kind, suggestion, reason FROM broken_anchors b "
                f"JOIN {files} s ON s.id = b.source_id JOIN {files} t ON t.id = b.target_id"
            ).fetchall(),
            # Derived by triggers and store/tagcounts.py: equal to a fresh index's, and no
            # change left marked after a transaction.
            "broken_anchor_docs": q(
                "SELECT source, line, col, seq, doc FROM broken_anchor_docs"
            ).fetchall(),
            # health's brokenLinks objects, as health renders them from the rows
            "broken_link_docs": q(
                f"SELECT source, line, col, seq, CASE WHEN reason = 'renamed' "
                f"THEN json_set(j, '$.suggestion', NULL, '$.reason', NULL, '$.confidence', NULL) "
                f"ELSE j END FROM (SELECT *, {BROKEN_LINK_DOC} AS j FROM broken_links)"
            ).fetchall(),
            "tag_uses": q(
                "SELECT k.tag, u.notes FROM tag_uses u JOIN tag_names k ON k.id = u.tag_id"
            ).fetchall(),
            "tag_rollup": q("SELECT tag_key, notes FROM tag_rollup").fetchall(),
            "tagged_notes": q(
                f"SELECT f.path FROM tagged_notes x JOIN {files} f ON f.id = x.file_id"
            ).fetchall(),
            "tag_note_keys": q(
                f"SELECT f.path, (SELECT json_group_array(k.tag) FROM (SELECT n.tag FROM "
                f"json_each(x.tag_ids) j JOIN tag_names n ON n.id = j.value ORDER BY n.tag) k) "
                f"FROM tag_note_keys x JOIN {files} f ON f.id = x.file_id"
            ).fetchall(),
            "tag_marks": q("SELECT file_id FROM tagged_dirty").fetchall(),
            "note_fts": q(
                f"SELECT f.path, title, tags, aliases FROM note_fts x JOIN {files} f ON f.id = x.rowid"
            ).fetchall(),
            "link_fts": q(
                f"SELECT f.path, anchors, unresolved FROM link_fts x JOIN {files} f ON f.id = x.rowid"
            ).fetchall(),
            "body_fts": q(
                f"SELECT f.path, body FROM body_fts x JOIN {files} f ON f.id = x.rowid"
            ).fetchall(),
        }
    finally:
        conn.close()
    return {k: sorted(v, key=repr) for k, v in out.items()}


def fts_integrity_ok(db: Path) -> bool:
    """FTS5 integrity-check with rank 1 (compares the index with its content) on every FTS table."""
    from tests.indexcheck import fts_problems

    return not fts_problems(db)


def fresh_full_index(vault: Path, tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Index the vault from scratch into a new database and dump it."""
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    db = tmp / f"fresh-{time.monotonic_ns()}.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
    return dump_index(db)


def indexed_demo(base: Path) -> tuple[Path, Path]:
    """A private copy of the demo vault under ``base``, indexed through the CLI in-process: (vault, db)."""
    import shutil

    vault = base / "vault"
    shutil.copytree(DEMO_VAULT, vault)
    db = base / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db


def load_genvault() -> ModuleType:
    """bench/genvault.py as a module (the generated vaults with their ground truth), loaded once
    per process: its dataclasses look their module up in ``sys.modules``."""
    if "genvault" in sys.modules:
        return sys.modules["genvault"]
    import importlib.util

    path = REPO / "bench" / "genvault.py"
    spec = importlib.util.spec_from_file_location("genvault", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["genvault"] = module
    spec.loader.exec_module(module)
    return module


def calls_to(monkeypatch: Any, owner: Any, name: str) -> list[Any]:
    """From now on every call of ``owner.name`` still runs, and adds its first argument to the
    list returned (what a work-count test counts: the paths keyed, the names hashed)."""
    real = getattr(owner, name)
    seen: list[Any] = []

    def recorded(first: Any, *rest: Any, **named: Any) -> Any:
        seen.append(first)
        return real(first, *rest, **named)

    monkeypatch.setattr(owner, name, recorded)
    return seen


def counted_forks(monkeypatch: Any) -> list[int]:
    """From now on every ``os.fork`` adds a 1 to the list returned, and ``query.positions``
    takes two cores for granted (issue 35: a long search forks one child to locate half)."""
    from notedex.query import positions

    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    monkeypatch.setattr(positions, "_cores", lambda: 2)
    return forks


def traced_lookups(vault: Path, db: Path, *questions: str) -> list[tuple[Any, list[str]]]:
    """``vault`` indexed into ``db``, then each question looked up in turn on one connection:
    its answer and the statements it ran."""
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    from notedex.query.lookup import lookup
    from notedex.store.connect import connect_readonly

    conn = connect_readonly(db)
    out: list[tuple[Any, list[str]]] = []
    try:
        for question in questions:
            asked: list[str] = []
            conn.set_trace_callback(asked.append)
            out.append((lookup(conn, question), asked))
    finally:
        conn.close()
    return out


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (which must print nothing
    on its last line): what a step costs in imports, seen where nothing else loaded them."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines()[-1].split())
