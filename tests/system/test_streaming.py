"""Issue 35: `graph`, `scan` and `health` stream their piped ``--json`` row by row, byte-identical to the
document the whole-answer builders (``query.listing.graph``, ``scan``, ``query.reports.health``)
give for the same index.

The oracle is those builders, which the streaming writer does not use: the test builds the
expected bytes in-process from the same SQLite file and compares them with the CLI's stdout.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from notedex.query.filters import NoteFilter
from notedex.query.listing import graph, scan
from notedex.query.output import compact_json
from notedex.query.reports import findings_count, health
from notedex.store.connect import connect_readonly
from tests.helpers import load_genvault, write


def _odd_notes(vault: Path) -> None:
    """Names and links the generator never makes: CJK, quotes, a newline in a name, broken
    links whose keys collide with file paths or with each other's " (unresolved)" ids."""
    write(
        vault / "笔记" / "东京 ノート.md",
        "---\ntags: [旅行, 'a\"b']\naliases: [東京]\n---\n# 東京\n[[Gone]] [[Gone.md]] [[不在]]\n",
    )
    write(
        vault / 'say "hi".md',
        '# Quote "me"\n[[笔记/东京 ノート]] [[say "hi"]] [[Gone (unresolved)]]\n',
    )
    write(
        vault / "Gone.md",
        "---\nstatus: 'x\\ny'\n---\n[[Gone.md.md]] [[Gone (unresolved)]] [[x.png]] [[Gone.md]]\n",
    )
    write(vault / "x.png", "png")
    write(vault / "a\nb.md", "[[a\nb]] [[Gone]] [[nowhere]]\n")
    write(vault / "bad yaml.md", "---\ntags: [unclosed\n---\n[[Gone]]\n")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("stream")
    vault, db = base / "vault", base / "state" / "index.db"
    load_genvault().generate(vault, 2000, 35)
    _odd_notes(vault)
    out = _cli(vault, db, "index")
    assert out.returncode == 0, out.stderr
    return vault, db


def _cli(vault: Path, db: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "notedex", *args, "--vault", str(vault), "--db", str(db)],
        capture_output=True,
        timeout=300,
    )


def _expected(db: Path, build: object) -> bytes:
    conn = connect_readonly(db)
    with conn:
        data = build(conn)  # type: ignore[operator]
    return (compact_json(data) + "\n").encode()


@pytest.mark.parametrize(
    ("command", "build"),
    [
        (("graph",), graph),
        (("scan",), scan),
        (("scan", "--tag", "旅行"), lambda conn: scan(conn, NoteFilter(tags=("旅行",)))),
        (
            ("scan", "--type", "nothing-has-this"),
            lambda conn: scan(conn, NoteFilter(note_type="x-none")),
        ),
    ],
    ids=["graph", "scan", "scan-tag", "scan-type-empty"],
)
def test_streamed_json_is_byte_identical_to_the_whole_answer(
    indexed: tuple[Path, Path], command: tuple[str, ...], build: object
) -> None:
    vault, db = indexed
    got = _cli(vault, db, *command, "--json", "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stderr == b""
    expected = _expected(db, build)
    assert got.stdout == expected


def test_the_odd_names_are_in_the_documents(indexed: tuple[Path, Path]) -> None:
    """The comparison above covers the odd cases: they are really in the index."""
    _vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        nodes = {n["id"]: n for n in graph(conn)["nodes"]}
        paths = {n["path"] for n in scan(conn)["notes"]}
    assert "笔记/东京 ノート.md" in paths and 'say "hi".md' in paths
    assert nodes["Gone (unresolved)"]["kind"] == "unresolved"
    assert nodes["不在"]["kind"] == "unresolved"
    assert any(n["kind"] == "attachment" for n in nodes.values())


@pytest.mark.parametrize("name", ["graph", "scan", "health"])
def test_no_write_holds_the_whole_document(indexed: tuple[Path, Path], name: str) -> None:
    """The document goes out in chunks of about CHUNK characters while rows are read: many
    writes, none much longer than a chunk, together the whole answer's bytes."""
    from notedex.query import stream

    form = import_module(f"notedex.query.stream_{name}")
    _vault, db = indexed
    writes: list[str] = []
    conn = connect_readonly(db)
    with conn:
        stream.streamed(conn, getattr(form, f"{name}_json"), writes.append)
    expected = _expected(db, {"graph": graph, "scan": scan, "health": health}[name]).decode()
    assert "".join(writes) == expected
    assert len(expected) > 4 * stream.CHUNK
    assert len(writes) >= len(expected) // stream.CHUNK
    assert max(len(w) for w in writes) < stream.CHUNK + 4096


def test_a_failure_after_the_first_byte_says_the_document_is_cut() -> None:
    from notedex.error_kinds import StreamCut
    from notedex.errors import EXIT_OK
    from notedex.query import stream

    def failing(after: int) -> object:
        def body(_conn: object, doc: stream.Document) -> None:
            doc.add("[" + "1," * after)
            raise OSError("disk gone")

        return body

    writes: list[str] = []
    with pytest.raises(OSError, match="disk gone"):  # before any byte: the error itself
        stream.streamed(None, failing(10), writes.append)  # type: ignore[arg-type]
    assert writes == []
    with pytest.raises(StreamCut) as cut:
        stream.streamed(None, failing(stream.CHUNK), writes.append)  # type: ignore[arg-type]
    assert cut.value.exit_code != EXIT_OK
    assert writes and not writes[-1].endswith("\n")


def test_streamed_health_is_byte_identical_and_exits_by_its_findings(
    indexed: tuple[Path, Path],
) -> None:

    vault, db = indexed
    got = _cli(vault, db, "health", "--json", "--no-refresh")
    expected = _expected(db, health)
    assert got.stdout == expected
    conn = connect_readonly(db)
    with conn:
        found = findings_count(health(conn))
    assert found > 0
    assert got.returncode == 1, got.stderr


@pytest.mark.parametrize("fmt", ["text", "dot"])
def test_streamed_graph_text_and_dot_are_byte_identical(
    indexed: tuple[Path, Path], fmt: str
) -> None:
    import io

    from notedex.query.output import Renderer
    from notedex.query.render import render_dot, render_graph

    vault, db = indexed
    got = _cli(vault, db, "graph", "--no-refresh", "--format", fmt)
    assert got.returncode == 0, got.stderr
    conn = connect_readonly(db)
    with conn:
        data = graph(conn)
    out = io.StringIO()
    (render_dot if fmt == "dot" else render_graph)(Renderer(vault, out), data)
    assert got.stdout.decode() == out.getvalue()


def _export_oracle(stdout: bytes) -> bytes:
    """What the whole-document writer made of the same document: ``json.dumps`` with
    ``indent=2`` and a newline (the export's format before issue 35), byte for byte."""
    import json

    return (json.dumps(json.loads(stdout), ensure_ascii=False, indent=2) + "\n").encode()


@pytest.mark.parametrize(
    "since", [None, "2000-01-01", "2999-01-01"], ids=["all", "since-old", "since-none"]
)
def test_streamed_export_is_byte_identical_to_the_whole_document(
    indexed: tuple[Path, Path], since: str | None
) -> None:
    vault, db = indexed
    extra = ("--changed-since", since) if since else ()
    got = _cli(vault, db, "export", *extra, "--no-refresh")
    assert got.returncode == 0, got.stderr
    assert got.stdout == _export_oracle(got.stdout)
    import json

    records = json.loads(got.stdout)["records"]
    conn = connect_readonly(db)
    with conn:
        notes = scan(conn)["noteCount"]
    assert len(records) == (0 if since == "2999-01-01" else notes)
    odd = next(r for r in records if r["id"] == "obsidian:笔记/东京 ノート.md") if records else None
    assert odd is None or {"link:Gone.md", "link:不在", "旅行"} <= set(odd["tags"])


def test_export_to_a_file_is_the_same_document(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    vault, db = indexed
    out = tmp_path / "out.json"
    got = _cli(vault, db, "export", "--out", str(out), "--no-refresh")
    assert got.returncode == 0, got.stderr
    body = out.read_bytes()
    assert body == _export_oracle(body)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_no_export_write_holds_the_whole_document(indexed: tuple[Path, Path]) -> None:
    """As for the JSON answers above: the export goes out chunk by chunk while notes are read."""
    from notedex.query import stream
    from notedex.query.export import export_connector

    vault, db = indexed
    writes: list[str] = []
    conn = connect_readonly(db)
    with conn:
        stream.streamed(conn, lambda c, doc: export_connector(c, doc, vault), writes.append)
    whole = "".join(writes)
    assert whole.encode() == _export_oracle(whole.encode())
    assert len(whole) > 4 * stream.CHUNK
    # A chunk closes after the record that fills it: records of a few kB overshoot it a little.
    assert len(writes) >= len(whole) // (2 * stream.CHUNK)
    assert max(len(w) for w in writes) < 2 * stream.CHUNK


def _rendered(vault: Path, db: Path, build: object, render: object) -> str:
    import io

    from notedex.query.output import Renderer

    conn = connect_readonly(db)
    with conn:
        data = build(conn)  # type: ignore[operator]
    out = io.StringIO()
    render(Renderer(vault, out), data)  # type: ignore[operator]
    return out.getvalue()


@pytest.mark.parametrize(
    ("command", "build", "code"),
    [
        (("scan",), scan, 0),
        (("scan", "--tag", "旅行"), lambda conn: scan(conn, NoteFilter(tags=("旅行",))), 0),
        (
            ("scan", "--type", "nothing-has-this"),
            lambda conn: scan(conn, NoteFilter(note_type="x-none")),
            0,
        ),
        (("health",), health, 1),
    ],
    ids=["scan", "scan-tag", "scan-type-empty", "health"],
)
def test_streamed_scan_and_health_text_are_byte_identical(
    indexed: tuple[Path, Path], command: tuple[str, ...], build: object, code: int
) -> None:
    from notedex.query.render import render_health, render_scan

    vault, db = indexed
    got = _cli(vault, db, *command, "--no-refresh")
    assert got.returncode == code, got.stderr
    assert got.stderr == b""
    render = render_health if command[0] == "health" else render_scan
    assert got.stdout.decode() == _rendered(vault, db, build, render)


@pytest.mark.parametrize("name", ["scan", "health"])
def test_no_text_write_holds_the_whole_answer(indexed: tuple[Path, Path], name: str) -> None:
    from notedex.query import stream
    from notedex.query.render import render_health, render_scan

    form = import_module(f"notedex.query.stream_{name}")
    vault, db = indexed
    writes: list[str] = []
    conn = connect_readonly(db)
    with conn:
        stream.streamed(conn, getattr(form, f"{name}_text"), writes.append)
    expected = _rendered(
        vault,
        db,
        scan if name == "scan" else health,
        render_scan if name == "scan" else render_health,
    )
    assert "".join(writes) == expected
    assert len(expected) > 2 * stream.CHUNK
    assert len(writes) >= len(expected) // stream.CHUNK
    assert max(len(w) for w in writes) < stream.CHUNK + 4096
