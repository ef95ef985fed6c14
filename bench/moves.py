"""Large moves through the daemon (issue 17): a folder rename and a `git checkout` that move about
10% of the notes, and SIGTERM during a large batch. ``bench/run.py`` takes these rows at every
size; run alone for a quick look at one vault:

    python bench/moves.py --vault bench/out/v100k --db /tmp/v100k.db     # indexes it first

- ``folder_rename_visible_s``: ``os.rename`` of the largest top folders (together about 10% of the
  notes) to new names, until the index shows them under the new paths; the median of the move
  and the move back.
- ``git_checkout_moves_visible_s``: the same folders rewritten as git does (every file written
  anew under the new path, a new inode and mtime, the old one unlinked), from the last file
  written until the index shows the move; ``git_checkout_moves_total_s`` from the first.
- ``sigterm_exit_s``: those folders copied into the vault under new names (a batch of new notes,
  parsed in chunks); SIGTERM once the first chunk is visible, until the daemon has exited.

A reader polls the database (the path range of each folder) every 10 ms. The moves start at
READY: the daemon's writer keeps no link index to prepare after it (issue 35). The
vault is put back as it was (paths and bytes; the rewritten files keep their new mtimes).

``--mv`` measures ``notedex mv`` instead (issue 33): a folder of 1,000 notes is planted in the
vault (``Mv bench/``) with 2,000 notes elsewhere holding 5,000 links into it, written with a
path (wikilinks with the folder, Markdown links relative and from the root, headings and display
text), so every one of them must be rewritten; the vault is indexed, then ``notedex mv`` moves
the folder into ``Archive/`` and back, each run as a subprocess from start to exit (plan,
renames, writes, index refresh, health's count), wall and CPU. Use a copy of the vault: the
planted notes stay.

    python bench/moves.py --mv --vault /tmp/v10k-copy --db /tmp/v10k-copy.db
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

SHARE = 0.10
POLL_S = 0.01


class DaemonLike(Protocol):
    proc: subprocess.Popen[bytes] | None

    def start(self, timeout: float) -> float: ...

    def stop(self) -> int | None: ...


def pick_folders(vault: Path, share: float = SHARE) -> list[tuple[str, int]]:
    """The largest top-level folders (name, notes) until they hold ``share`` of the notes."""
    counts = []
    total = 0
    for entry in sorted(os.scandir(vault), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        notes = sum(1 for p in Path(entry.path).rglob("*.md"))
        counts.append((entry.name, notes))
        total += notes
    total += sum(1 for p in vault.glob("*.md"))
    chosen: list[tuple[str, int]] = []
    for name, notes in sorted(counts, key=lambda c: (-c[1], c[0])):
        if sum(n for _, n in chosen) >= share * total:
            break
        chosen.append((name, notes))
    return chosen


def count_under(conn: sqlite3.Connection, folders: Sequence[str]) -> int:
    """Indexed files under these folders (a path-range scan on the unique path index)."""
    total = 0
    for folder in folders:
        # "/" + 1 is "0": every path under folder/ sorts in [folder/, folder0).
        row = conn.execute(
            "SELECT count(*) FROM files WHERE path >= ? AND path < ?", (folder + "/", folder + "0")
        ).fetchone()
        total += int(row[0])
    return total


@contextmanager
def reader(db: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def wait_for(check: Callable[[], bool], timeout: float) -> float | None:
    """Poll ``check`` every 10 ms; the time it first held, or None after ``timeout``."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if check():
            return time.perf_counter()
        time.sleep(POLL_S)
    return None


def files_of(vault: Path, folders: Sequence[str]) -> int:
    """The vault files under these folders (hidden paths are not vault files)."""
    return sum(
        1
        for f in folders
        for p in (vault / f).rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )


def rename_all(vault: Path, pairs: Sequence[tuple[str, str]]) -> None:
    for old, new in pairs:
        os.rename(vault / old, vault / new)


def rewrite_all(vault: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """Move as git checkout does: each file written anew under its new path, the old unlinked."""
    for old, new in pairs:
        for src in sorted((vault / old).rglob("*")):
            if not src.is_file():
                continue
            dst = vault / new / src.relative_to(vault / old)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
            src.unlink()
        shutil.rmtree(vault / old)


def _moved(conn: sqlite3.Connection, old: Sequence[str], new: Sequence[str], n: int) -> bool:
    return count_under(conn, new) == n and count_under(conn, old) == 0


def measure(
    vault: Path, db: Path, daemon: DaemonLike, *, timeout: float = 120.0, say: Callable[[str], None]
) -> dict[str, Any]:
    """The three rows, with ``daemon`` (not running) started and stopped here."""
    folders = pick_folders(vault)
    names = [name for name, _ in folders]
    notes = sum(n for _, n in folders)
    files = files_of(vault, names)
    moved = [f"{name} moved" for name in names]
    figures: dict[str, Any] = {"moves_notes": notes, "moves_folders": len(names)}
    say(f"moves: {len(names)} folders, {notes} notes, {files} files")
    daemon.start(600.0)
    try:
        with reader(db) as conn:
            rename_times = []
            for src, dst in ((names, moved), (moved, names)):
                started = time.perf_counter()
                stamps = [_clock()]
                rename_all(vault, list(zip(src, dst, strict=True)))
                seen = wait_for(lambda s=src, d=dst: _moved(conn, s, d, files), timeout)
                say(f"moves: renamed at {stamps[0]}, visible at {_clock()}")
                rename_times.append(None if seen is None else seen - started)
            say(f"moves: folder rename visible after {rename_times}")
            checkout_after, checkout_total = [], []
            for src, dst in ((names, moved), (moved, names)):
                started = time.perf_counter()
                stamps = [_clock()]
                rewrite_all(vault, list(zip(src, dst, strict=True)))
                written = time.perf_counter()
                stamps.append(_clock())
                seen = wait_for(lambda s=src, d=dst: _moved(conn, s, d, files), timeout)
                say(f"moves: checkout from {stamps[0]} to {stamps[1]}, visible at {_clock()}")
                checkout_after.append(None if seen is None else seen - written)
                checkout_total.append(None if seen is None else seen - started)
            say(f"moves: checkout visible {checkout_after} after the last file, {checkout_total}")
    finally:
        daemon.stop()
    figures["folder_rename_visible_s"] = _median(rename_times)
    figures["git_checkout_moves_visible_s"] = _median(checkout_after)
    figures["git_checkout_moves_total_s"] = _median(checkout_total)
    figures["sigterm_exit_s"] = _sigterm(vault, db, daemon, names, timeout)
    say(f"moves: SIGTERM to exit during a large batch {figures['sigterm_exit_s']}")
    return figures


def _sigterm(
    vault: Path, db: Path, daemon: DaemonLike, names: Sequence[str], timeout: float
) -> float | None:
    aside = vault.parent / f"{vault.name}.copies"
    shutil.rmtree(aside, ignore_errors=True)
    aside.mkdir()
    copies = [f"{name} copy" for name in names]
    try:
        for name, copy in zip(names, copies, strict=True):
            shutil.copytree(vault / name, aside / copy)
        daemon.start(600.0)
        try:
            with reader(db) as conn:
                for copy in copies:
                    os.rename(aside / copy, vault / copy)
                if wait_for(lambda: count_under(conn, copies) > 0, timeout) is None:
                    return None
            assert daemon.proc is not None
            started = time.perf_counter()
            daemon.proc.send_signal(signal.SIGTERM)
            daemon.proc.wait(timeout=timeout)
            return time.perf_counter() - started
        finally:
            daemon.stop()
    finally:
        for copy in copies:
            shutil.rmtree(vault / copy, ignore_errors=True)
        shutil.rmtree(aside, ignore_errors=True)


MV_FOLDER = "Mv bench"


def plant_mv_folder(vault: Path, notes: int = 1000, links: int = 5000) -> None:
    """The ``--mv`` scene: ``notes`` notes in ``Mv bench/``, and ``links`` links into them from
    ``links // 2.5`` new notes spread over the vault's top folders (a linker note sits one
    folder deep: its relative links climb with ``../``)."""
    folder = vault / MV_FOLDER
    folder.mkdir()
    for i in range(notes):
        (folder / f"Target {i}.md").write_text(f"# Target {i}\n\n## Part\n\nText {i}.\n")
    tops = sorted(
        e.name
        for e in os.scandir(vault)
        if e.is_dir(follow_symlinks=False) and not e.name.startswith(".") and e.name != MV_FOLDER
    ) or [""]
    linkers = int(links / 2.5)
    styles = (
        "[[{f}/Target {i}]]",
        "[[{f}/Target {i}#Part|part {i}]]",
        "[t](../{e}/Target%20{i}.md)",
        "[t](/{e}/Target%20{i}.md#Part)",
        "![[{f}/Target {i}]]",
    )
    written = 0
    for n in range(linkers):
        count = (links - written) // (linkers - n)
        body = [
            styles[(n + k) % len(styles)].format(
                f=MV_FOLDER, e=MV_FOLDER.replace(" ", "%20"), i=(n * 7 + k * 131) % notes
            )
            for k in range(count)
        ]
        written += count
        top = vault / tops[n % len(tops)]
        (top / f"Mv linker {n}.md").write_text(f"# Linker {n}\n\n" + "\n".join(body) + "\n")


def measure_mv(vault: Path, db: Path, *, say: Callable[[str], None]) -> dict[str, Any]:
    """``notedex mv`` of the planted folder into ``Archive/`` (its 5,000 links rewritten) and
    back (with Obsidian's default link format the links are bare names by then: none is):
    wall and CPU seconds (user + system of the child) of each run."""
    where = ["--vault", str(vault), "--db", str(db)]
    figures: dict[str, Any] = {}
    runs = ((MV_FOLDER, f"Archive/{MV_FOLDER} moved"), (f"Archive/{MV_FOLDER} moved", MV_FOLDER))
    for label, (src, dst) in zip(("mv_folder", "mv_folder_back"), runs, strict=True):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "notedex", "mv", src, dst, "--json", *where],
            capture_output=True,
            env=_child_env(),
            check=False,
        )
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if done.returncode != 0:
            raise RuntimeError(f"mv exited {done.returncode}: {done.stderr.decode()[-2000:]}")
        data = json.loads(done.stdout)
        say(
            f"mv {src} -> {dst}: {seconds:.2f}s wall, {cpu:.2f}s CPU, {len(data['moves'])} "
            f"moved, {data['links']} links in {len(data['written'])} files, "
            f"newBroken {data['newBroken']}"
        )
        figures[f"{label}_s"] = round(seconds, 2)
        figures[f"{label}_cpu_s"] = round(cpu, 2)
        figures[f"{label}_links"] = data["links"]
    return figures


def _child_env() -> dict[str, str]:
    """The environment without PYTHONDONTWRITEBYTECODE: a daemon without .pyc files starts
    slower than a user's would."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _clock() -> str:
    """Wall-clock time of day (UTC, ms), to line the bench up with the daemon's log."""
    return time.strftime("%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}"


def _median(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else statistics.median(values)  # type: ignore[type-var]


class _Daemon:
    """The daemon of the current interpreter, ready when its log says so (standalone use)."""

    def __init__(self, vault: Path, db: Path, log: Path) -> None:
        self.argv = [sys.executable, "-m", "notedex", "daemon", "--vault", str(vault)]
        self.argv += ["--db", str(db)]
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float) -> float:
        started = time.perf_counter()
        size = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_child_env()
            )

        def ready() -> bool:
            with open(self.log, "rb") as log:
                log.seek(size)
                return b'"ready"' in log.read()

        if wait_for(ready, timeout) is None:
            raise RuntimeError(f"the daemon was not ready; see {self.log}")
        return time.perf_counter() - started

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=120)
        self.proc = None
        return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/moves.py", description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--mv", action="store_true", help="measure notedex mv (issue 33)")
    args = parser.parse_args(argv)
    index = [sys.executable, "-m", "notedex", "index", "--vault", str(args.vault)]
    quiet: dict[str, Any] = {"check": True, "stdout": subprocess.DEVNULL, "env": _child_env()}
    if args.mv:
        plant_mv_folder(args.vault)
        subprocess.run([*index, "--db", str(args.db)], **quiet)
        print(measure_mv(args.vault, args.db, say=print))
        return 0
    subprocess.run([*index, "--db", str(args.db)], **quiet)
    log = args.db.with_name(args.db.name + ".moves.log")
    figures = measure(args.vault, args.db, _Daemon(args.vault, args.db, log), say=print)
    print(figures)
    subprocess.run([*index, "--db", str(args.db)], **quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
