"""Issue 35, the forms that still built their whole answer: each streams now, byte-identical
to the whole-answer builders' document, with memory that does not grow with the vault.

(1) Byte identity: the CLI's stdout (a child process, stdout a pipe) against the whole-answer
builders (``query.listing.scan``/``graph`` with ``render_scan``/``render_graph``/``render_dot``
or ``compact_json``), which the streaming writers do not use, on a generated vault with odd
names. (2) Memory: the CLI run in this process, its output thrown away as it comes, the peak of
Python's traced allocations (tracemalloc) on a vault of N notes and of 4N: a writer that holds
a list of the answer's rows grows by about a kilobyte a note, one that streams does not grow.
SQLite's own memory (page cache, sorter) is not Python's and is bounded by its settings.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from notedex.query.filters import NoteFilter
from notedex.query.listing import graph, scan
from notedex.query.output import Renderer, compact_json
from notedex.query.render import render_dot, render_graph, render_scan
from notedex.query.reports import finding_paths
from notedex.store.connect import connect_readonly
from tests.helpers import load_genvault, write
from tests.system.test_streaming import _odd_notes


def _index(vault: Path, db: Path) -> None:
    out = _cli(vault, db, "index")
    assert out.returncode == 0, out.stderr


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("forms")
    vault, db = base / "vault", base / "state" / "index.db"
    load_genvault().generate(vault, 800, 35)
    _odd_notes(vault)
    # Properties to sort by, some notes without them (they go last), ties broken by path.
    for i in range(40):
        status = "" if i % 5 == 0 else f"status: {['b', 'a', 'C', 'ä'][i % 4]}\n"
        # Links for a filtered graph: to kept notes and not kept ones (笔记/..., Gone.md), an
        # attachment, broken keys shared with the unfiltered vault and a key that spells a path.
        links = f"[[p{(i + 1) % 40:02}]] [[p{(i + 1) % 40:02}]] [[missing {i % 3}]]"
        links += ["", " [[笔记/东京 ノート]]", " [[Gone.md.md]] [[Gone]]", " [[x.png]] [[Gone]]"][
            i % 4
        ]
        # For health: a broken link inside a comment, a broken anchor, an orphan.
        links += ["", " %%[[hidden gone]]%%", " [[p00#No such heading]]", "", ""][i % 5]
        links = "" if i in (38, 39) else links  # p39: an orphan
        write(
            vault / "Props" / f"p{i:02}.md",
            f"---\n{status}rank: {i % 7}\ntags: [t{i % 3}]\n---\n{links}\n",
        )
    write(vault / "Props" / "unused.png", "png")
    _index(vault, db)
    return vault, db


def _cli(vault: Path, db: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "notedex", *args, "--vault", str(vault), "--db", str(db)],
        capture_output=True,
        timeout=300,
    )


def _whole(db: Path, vault: Path, build: Any, render: Any | None) -> bytes:
    """The whole-answer document: ``build``'s data through ``render`` (text), or compact JSON."""
    conn = connect_readonly(db)
    with conn:
        data = build(conn)
    if render is None:
        return (compact_json(data) + "\n").encode()
    out = io.StringIO()
    render(Renderer(vault, out), data)
    return out.getvalue().encode()


SORTED_SCANS = [
    (("--sort", "title"), NoteFilter(sort="title")),
    (("--sort", "modified", "--reverse"), NoteFilter(sort="modified", reverse=True)),
    (("--sort", "created"), NoteFilter(sort="created")),
    (("--sort", "path", "--reverse"), NoteFilter(sort="path", reverse=True)),
    (("--sort", "status"), NoteFilter(sort="status")),
    (("--sort", "rank", "--reverse"), NoteFilter(sort="rank", reverse=True)),
    (("--folder", "Props", "--sort", "status"), NoteFilter(folders=("Props",), sort="status")),
    (("--tag", "旅行", "--sort", "title"), NoteFilter(tags=("旅行",), sort="title")),
]


@pytest.mark.parametrize("json_or_text", ["json", "text"])
@pytest.mark.parametrize(
    ("options", "nf"), SORTED_SCANS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_a_sorted_scan_streams_the_whole_answers_bytes(
    indexed: tuple[Path, Path], options: tuple[str, ...], nf: NoteFilter, json_or_text: str
) -> None:
    vault, db = indexed
    flag = ("--json",) if json_or_text == "json" else ()
    got = _cli(vault, db, "scan", *options, *flag, "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    render = None if json_or_text == "json" else render_scan
    expected = _whole(db, vault, lambda conn: scan(conn, nf), render)
    assert got.stdout == expected
    assert expected.count(b"Props/p") >= 40 if not nf.active else b".md" in expected


SCAN_PAGES = [
    (("--limit", "5"), None, 0, 5),
    (("--offset", "3", "--limit", "4"), None, 3, 4),
    (("--offset", "2"), None, 2, None),
    (("--offset", "100000", "--limit", "2"), None, 100000, 2),
    (
        ("--limit", "3", "--sort", "title", "--reverse"),
        NoteFilter(sort="title", reverse=True),
        0,
        3,
    ),
    (("--folder", "Props", "--offset", "38"), NoteFilter(folders=("Props",)), 38, None),
    (("--limit", "1000"), None, 0, 1000),
]


@pytest.mark.parametrize("json_or_text", ["json", "text"])
@pytest.mark.parametrize(
    ("options", "nf", "offset", "limit"),
    SCAN_PAGES,
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_a_paged_scan_streams_the_whole_answers_page(
    indexed: tuple[Path, Path],
    options: tuple[str, ...],
    nf: NoteFilter | None,
    offset: int,
    limit: int | None,
    json_or_text: str,
) -> None:
    from notedex.query.paging import paginate

    vault, db = indexed
    flag = ("--json",) if json_or_text == "json" else ()
    got = _cli(vault, db, "scan", *options, *flag, "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    render = None if json_or_text == "json" else render_scan
    build = lambda conn: paginate(scan(conn, nf), ("notes", "errors"), offset, limit)  # noqa: E731
    assert got.stdout == _whole(db, vault, build, render)


GRAPH_FILTERS = [
    (("--folder", "Props"), NoteFilter(folders=("Props",))),
    (("--tag", "t1"), NoteFilter(tags=("t1",))),
    (("--folder", "Props", "--where", "status=a"), None),
    (("--tag", "旅行"), NoteFilter(tags=("旅行",))),
    (("--folder", "Nowhere"), NoteFilter(folders=("Nowhere",))),
    (("--folder", ""), NoteFilter(folders=("",))),
]


@pytest.mark.parametrize("form", ["json", "text", "dot"])
@pytest.mark.parametrize(
    ("options", "nf"), GRAPH_FILTERS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_a_filtered_graph_streams_the_whole_answers_bytes(
    indexed: tuple[Path, Path], options: tuple[str, ...], nf: NoteFilter | None, form: str
) -> None:
    vault, db = indexed
    if nf is None:  # a --where: the filter the command line builds
        from notedex.query.filters import parse_where

        nf = NoteFilter(folders=("Props",), where=(parse_where("status=a"),))
    flag = {"json": ("--json",), "text": (), "dot": ("--format", "dot")}[form]
    got = _cli(vault, db, "graph", *options, *flag, "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    render = {"json": None, "text": render_graph, "dot": render_dot}[form]
    expected = _whole(db, vault, lambda conn: graph(conn, nf), render)
    assert got.stdout == expected


GRAPH_PAGES = [
    (("--limit", "7"), None, 0, 7),
    (("--offset", "5", "--limit", "9"), None, 5, 9),
    (("--offset", "3"), None, 3, None),
    (("--offset", "100000", "--limit", "1"), None, 100000, 1),
    (
        ("--folder", "Props", "--offset", "30", "--limit", "20"),
        NoteFilter(folders=("Props",)),
        30,
        20,
    ),
]


@pytest.mark.parametrize("form", ["json", "text", "dot"])
@pytest.mark.parametrize(
    ("options", "nf", "offset", "limit"),
    GRAPH_PAGES,
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_a_paged_graph_streams_the_whole_answers_page(
    indexed: tuple[Path, Path],
    options: tuple[str, ...],
    nf: NoteFilter | None,
    offset: int,
    limit: int | None,
    form: str,
) -> None:
    from notedex.query.paging import paginate

    vault, db = indexed
    flag = {"json": ("--json",), "text": (), "dot": ("--format", "dot")}[form]
    got = _cli(vault, db, "graph", *options, *flag, "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    render = {"json": None, "text": render_graph, "dot": render_dot}[form]
    build = lambda conn: paginate(graph(conn, nf), ("nodes", "edges"), offset, limit)  # noqa: E731
    assert got.stdout == _whole(db, vault, build, render)


def test_the_filtered_graph_holds_the_odd_cases(indexed: tuple[Path, Path]) -> None:
    """The comparison above meets a kept note's link to a note the filter left out, to an
    attachment, and a broken key whose id must step past a file node."""
    _vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        nodes = {n["id"]: n for n in graph(conn, NoteFilter(folders=("Props",)))["nodes"]}
    assert nodes["笔记/东京 ノート.md"] == {
        "id": "笔记/东京 ノート.md",
        "label": "东京 ノート",
        "kind": "note",
    }
    assert nodes["x.png"]["kind"] == "attachment"
    assert nodes["Gone.md (unresolved)"]["kind"] == "unresolved"
    assert nodes["missing 2"]["kind"] == "unresolved"


HEALTH_CHOICES = [
    ("--only", "broken-link"),
    ("--only", "in-comment"),
    ("--ignore", "in-comment", "--ignore", "orphan"),
    ("--ignore", "Props/"),
    ("--only", "broken-anchor", "--only", "bad-yaml"),
    ("--folder", "Props"),
    ("--folder", "Props", "--only", "unused-attachment"),
    ("--tag", "t1"),
    ("--folder", "Props", "--where", "status=a", "--ignore", "in-comment"),
    ("--folder", "笔记"),
    ("--folder", "Nowhere"),
]


def _health_answer(args: tuple[str, ...]) -> Any:
    """The whole-answer builder of ``health ARGS``: ``reports.health`` with the note filter,
    then ``reports.selected`` with the codes and globs, as the command builds them."""
    import argparse

    from notedex.codes import selection
    from notedex.query.filters import from_options
    from notedex.query.reports import health, selected

    parsed = argparse.ArgumentParser()
    for name in ("--only", "--ignore", "--folder", "--tag"):
        parsed.add_argument(name, action="append")
    parsed.add_argument("--where", action="append")
    ns = parsed.parse_args(args)
    nf = from_options(lambda dest: getattr(ns, dest, None), None)
    choice, _ = selection(ns.only or (), ns.ignore or (), ())

    def build(conn: Any) -> Any:
        data = health(conn, nf if nf.active else None)
        return data if choice.empty else selected(data, choice)

    return build


@pytest.mark.parametrize("json_or_text", ["json", "text"])
@pytest.mark.parametrize("args", HEALTH_CHOICES, ids=" ".join)
def test_a_filtered_or_selected_health_streams_the_whole_answers_bytes(
    indexed: tuple[Path, Path], args: tuple[str, ...], json_or_text: str
) -> None:
    from notedex.query.render import render_health
    from notedex.query.reports import findings_count

    vault, db = indexed
    flag = ("--json",) if json_or_text == "json" else ()
    got = _cli(vault, db, "health", *args, *flag, "--no-refresh")
    build = _health_answer(args)
    render = None if json_or_text == "json" else render_health
    assert got.stdout == _whole(db, vault, build, render)
    conn = connect_readonly(db)
    with conn:
        found = findings_count(build(conn))
    assert got.returncode == (1 if found else 0), got.stderr
    assert got.stderr == b""


HEALTH_PAGES = [
    (("--limit", "3"), 0, 3),
    (("--offset", "2", "--limit", "5"), 2, 5),
    (("--offset", "4"), 4, None),
    (("--offset", "100000"), 100000, None),
    (("--folder", "Props", "--limit", "2", "--offset", "1"), 1, 2),
    (("--only", "broken-link", "--limit", "1000"), 0, 1000),
]


@pytest.mark.parametrize("json_or_text", ["json", "text"])
@pytest.mark.parametrize(
    ("args", "offset", "limit"),
    HEALTH_PAGES,
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_a_paged_health_streams_the_whole_answers_page(
    indexed: tuple[Path, Path],
    args: tuple[str, ...],
    offset: int,
    limit: int | None,
    json_or_text: str,
) -> None:
    from notedex.query.paging import paginate
    from notedex.query.render import render_health
    from notedex.query.reports import HEALTH_LISTS, findings_count

    vault, db = indexed
    flag = ("--json",) if json_or_text == "json" else ()
    got = _cli(vault, db, "health", *args, *flag, "--no-refresh")
    chosen = tuple(a for a in args if not a.isdigit() and a not in ("--limit", "--offset"))
    whole = _health_answer(chosen)

    def build(conn: Any) -> Any:
        return paginate(whole(conn), HEALTH_LISTS, offset, limit)

    render = None if json_or_text == "json" else render_health
    assert got.stdout == _whole(db, vault, build, render)
    conn = connect_readonly(db)
    with conn:
        found = findings_count(build(conn))
    assert got.returncode == (1 if found else 0), got.stderr
    assert got.stderr == b""


def test_the_health_choices_meet_the_odd_cases(indexed: tuple[Path, Path]) -> None:
    _vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        props = _health_answer(("--folder", "Props"))(conn)
        comments = _health_answer(("--only", "in-comment"))(conn)
    assert props["brokenLinkCount"] and props["brokenAnchorCount"] and props["orphanNotes"]
    assert [a["path"] for a in props["unusedAttachments"]] == ["Props/unused.png"]
    assert comments["counts"]["in-comment"] > 0


PATH_FORMS = [
    (("scan",), lambda conn: [n["path"] for n in scan(conn)["notes"]]),
    (
        ("scan", "--sort", "modified", "--reverse"),
        lambda conn: [
            n["path"] for n in scan(conn, NoteFilter(sort="modified", reverse=True))["notes"]
        ],
    ),
    (
        ("scan", "--folder", "Props", "--sort", "status"),
        lambda conn: [
            n["path"] for n in scan(conn, NoteFilter(folders=("Props",), sort="status"))["notes"]
        ],
    ),
    *(
        (("health", *args), lambda conn, args=args: finding_paths(_health_answer(args)(conn)))
        for args in [(), ("--only", "orphan"), ("--folder", "Props"), ("--ignore", "Props/")]
    ),
]


@pytest.mark.parametrize("nul", [False, True], ids=["paths", "nul"])
@pytest.mark.parametrize(
    ("command", "listed"), PATH_FORMS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_paths_stream_the_whole_answers_paths(
    indexed: tuple[Path, Path], command: tuple[str, ...], listed: Any, nul: bool
) -> None:
    from notedex.query.reports import findings_count

    vault, db = indexed
    got = _cli(vault, db, *command, "-0" if nul else "--paths", "--no-refresh")
    conn = connect_readonly(db)
    with conn:
        paths = listed(conn)
        found = findings_count(_health_answer(command[1:])(conn)) if command[0] == "health" else 0
    assert len(paths) > 3
    end = "\0" if nul else "\n"
    assert got.stdout == "".join(p + end for p in paths).encode()
    assert got.returncode == (1 if found else 0), got.stderr
    assert got.stderr == b""


def _health_page(conn: Any) -> Any:
    from notedex.query.paging import paginate
    from notedex.query.reports import HEALTH_LISTS

    return paginate(_health_answer(())(conn), HEALTH_LISTS, 3, None)


TTY_FORMS = [
    (("scan",), lambda conn: scan(conn), 0),
    (
        ("scan", "--sort", "title", "--limit", "9"),
        lambda conn: _paginate(scan(conn, NoteFilter(sort="title")), ("notes", "errors"), 0, 9),
        0,
    ),
    (("graph", "--folder", "Props"), lambda conn: graph(conn, NoteFilter(folders=("Props",))), 0),
    (("graph",), lambda conn: graph(conn), 0),
    (("health",), lambda conn: _health_answer(())(conn), 1),
    (("health", "--only", "orphan"), lambda conn: _health_answer(("--only", "orphan"))(conn), 0),
    (("health", "--offset", "3"), _health_page, 1),
]


def _paginate(*args: Any) -> Any:
    from notedex.query.paging import paginate

    return paginate(*args)


@pytest.mark.parametrize(
    ("command", "build", "code"),
    TTY_FORMS,
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_json_on_a_terminal_streams_the_indented_document(
    indexed: tuple[Path, Path], command: tuple[str, ...], build: Any, code: int
) -> None:
    """On a terminal ``--json`` is indented (``emit_json``: ``json.dumps(indent=2)``); the
    streamed document is indented as it goes (``stream_indented.Indented``), byte for byte."""
    import json

    from notedex.cli import main

    vault, db = indexed
    raw = io.BytesIO()
    out = _Terminal(raw, encoding="utf-8", errors="surrogateescape")
    saved, sys.stdout = sys.stdout, out
    try:
        got = main([*command, "--json", "--no-refresh", "--vault", str(vault), "--db", str(db)])
        out.flush()
    finally:
        sys.stdout = saved
        out.detach()
    conn = connect_readonly(db)
    with conn:
        data = build(conn)
    expected = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    assert raw.getvalue().decode() == expected
    assert got == code


# -- memory --------------------------------------------------------------------------------


class _Sink(io.RawIOBase):
    """A stdout that throws its bytes away, counting them."""

    def __init__(self) -> None:
        self.count = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        self.count += size
        return size


class _Terminal(io.TextIOWrapper):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _peak(vault: Path, db: Path, args: tuple[str, ...]) -> tuple[int, int]:
    """(peak traced bytes above the start, bytes written) of ``notedex ARGS`` in this process,
    its stdout a pipe-like stream (no terminal; ARGS starting with "tty": a terminal) that
    keeps nothing."""
    from notedex.cli import main

    sink = _Sink()
    kind = _Terminal if args[0] == "tty" else io.TextIOWrapper
    args = args[1:] if args[0] == "tty" else args
    out = kind(io.BufferedWriter(sink), encoding="utf-8", errors="surrogateescape")
    saved = sys.stdout
    sys.stdout = out
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        code = main([*args, "--no-refresh", "--vault", str(vault), "--db", str(db)])
        out.flush()
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
        sys.stdout = saved
        out.detach()
    assert code in (0, 1)
    return peak, sink.count


@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, Path]]:
    """Two generated vaults, of N and 4N notes, indexed."""
    out = {}
    for notes in (MEMORY_NOTES, 4 * MEMORY_NOTES):
        base = tmp_path_factory.mktemp(f"mem{notes}")
        vault, db = base / "vault", base / "index.db"
        load_genvault().generate(vault, notes, 7)
        _index(vault, db)
        out[notes] = vault, db
    return out


MEMORY_NOTES = 300
GROWTH_BOUND = 100_000
"""Bytes the peak may grow from N to 4N notes, with chunks of ``SMALL_CHUNK`` characters (a
streamed answer's peak is then flat within a few kB): far below what a whole answer adds, a
Row, a dict and its lists a note (900 notes: 0.4 MB and more)."""
SMALL_CHUNK = 4096
"""``stream.CHUNK`` for the memory test: the vaults' answers (50-200 kB) fill many chunks, so
the peak of the small vault's does not stay below a whole chunk's."""

MEMORY_FORMS = [
    ("scan", "--json", "--sort", "title"),
    ("scan", "--sort", "modified", "--reverse"),
    ("graph", "--json", "--where", "!no-note-has-this"),  # a filter that keeps every note
    ("graph", "--format", "dot", "--where", "!no-note-has-this"),
    ("health", "--json", "--ignore", "in-comment"),
    ("health", "--where", "!no-note-has-this"),
    ("scan", "--paths", "--sort", "title"),
    ("scan", "--json", "--limit", "100000"),
    ("health", "-0"),
    ("health", "--json", "--offset", "1"),
    ("graph", "--json", "--limit", "100000"),
    ("tty", "scan", "--json", "--sort", "title"),  # indented for a terminal
    ("tty", "graph", "--json"),
]


@pytest.mark.parametrize("args", MEMORY_FORMS, ids=" ".join)
def test_a_streamed_form_needs_no_more_memory_for_a_larger_vault(
    sized: dict[int, tuple[Path, Path]], args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    from notedex.query import stream

    monkeypatch.setattr(stream, "CHUNK", SMALL_CHUNK)
    small, large = sized[MEMORY_NOTES], sized[4 * MEMORY_NOTES]
    _peak(*small, args)  # imports and caches, once
    peaks = {}
    for name, (vault, db) in (("small", small), ("large", large)):
        # The least of three runs: a collection or a cache filled mid-run only adds.
        runs = [_peak(vault, db, args) for _ in range(3)]
        peaks[name] = min(peak for peak, _ in runs), runs[0][1]
    assert peaks["large"][1] > 3 * peaks["small"][1]  # the answer did grow about 4x
    growth = peaks["large"][0] - peaks["small"][0]
    assert growth < GROWTH_BOUND, (peaks, growth)
