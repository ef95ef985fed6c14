"""Issue 33: a streamed `health --json` hands the JSON the index holds to stdout's buffer as
UTF-8, without decoding it into str and encoding it again, in batches of rows; the document
stays byte-identical to the whole answer's, and a text stream that is not UTF-8 still gets
the same text.

The oracle is ``query.reports.health`` (the whole answer, built as dicts) through
``compact_json``, which the streamed writer does not use.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from notedex.query import stream, stream_health
from notedex.query.output import compact_json
from notedex.query.reports import health
from notedex.store import health_lists
from notedex.store.connect import connect_readonly
from tests.helpers import load_genvault, write


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("health-bytes")
    vault, db = base / "vault", base / "state" / "index.db"
    load_genvault().generate(vault, 600, 33)
    # Non-ASCII in every list that has rows: paths, link text, anchors, a bad YAML error.
    write(vault / "笔记" / "东京 ノート.md", "# 東京\n## Café\n[[不在]] [[东京 ノート#Nöpe]] «x»\n")
    write(vault / "über.md", '---\ntags: [unclosed\n---\n[[笔记/东京 ノート#Café]] [[Gone "é"]]\n')
    done = _cli(vault, db, "index")
    assert done.returncode == 0, done.stderr
    return vault, db


def _cli(
    vault: Path, db: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "notedex", *args, "--vault", str(vault), "--db", str(db)],
        capture_output=True,
        timeout=300,
        env=env,
    )


def _expected(db: Path) -> bytes:
    conn = connect_readonly(db)
    with conn:
        return (compact_json(health(conn)) + "\n").encode()


def test_the_document_reaches_a_text_streams_buffer_in_order_and_in_chunks() -> None:
    """Text and UTF-8 bytes added in turn come out in the order added, through a real text
    stream and its buffer, no write longer than a chunk."""
    out = io.BytesIO()
    writes: list[int] = []

    class Buffer(io.BufferedWriter):
        def write(self, data: object) -> int:
            writes.append(len(memoryview(data)))  # type: ignore[arg-type]
            return super().write(data)  # type: ignore[arg-type]

    text = io.TextIOWrapper(Buffer(out, buffer_size=1 << 20), encoding="utf-8")  # type: ignore[arg-type]
    doc = stream.Document(text.write, chunk=100, raw=text.buffer.write, sync=text.flush)
    pieces: list[str] = []
    for i in range(40):
        piece = f"«{i}»" * (i % 7)
        pieces.append(piece)
        if i % 3:
            doc.add(piece)
        else:
            doc.add_bytes(piece.encode())
    doc.flush()
    text.flush()
    assert out.getvalue() == "".join(pieces).encode()
    assert writes and max(writes) <= 100
    assert doc.written > 0


def test_streamed_health_through_a_buffer_is_the_whole_answer(
    indexed: tuple[Path, Path],
) -> None:
    _vault, db = indexed
    raw: list[bytes] = []
    text: list[str] = []
    conn = connect_readonly(db)
    with conn:
        doc = stream.Document(text.append, raw=lambda b: raw.append(bytes(b)), sync=lambda: None)
        stream.streamed(conn, stream_health.health_json, doc=doc)
    expected = _expected(db)
    assert not text  # every byte went to the buffer: the text was encoded around the JSON
    assert b"".join(raw) == expected
    assert "ノート".encode() in expected and "Nöpe".encode() in expected
    assert len(raw) >= len(expected) // stream.CHUNK
    assert max(len(w) for w in raw) <= stream.CHUNK


def test_the_batches_cover_every_list_in_report_order(indexed: tuple[Path, Path]) -> None:
    """Small batches join to the same objects, with the same count, as one large one."""
    from notedex.query.reports import HEALTH_LISTS

    _vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        for name in HEALTH_LISTS:
            one = list(health_lists.health_json_batches(conn, name, size=1_000_000))
            small = list(health_lists.health_json_batches(conn, name, size=3))
            assert b",".join(data for _, data in small) == b",".join(data for _, data in one)
            assert sum(n for n, _ in small) == sum(n for n, _ in one)
            assert all(n <= 3 for n, _ in small)
            rows = list(health_lists.health_json_rows(conn, name))
            assert ",".join(rows).encode() == b",".join(data for _, data in one)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "latin-1:backslashreplace"])
def test_health_json_on_a_pipe_is_the_same_text_in_any_stdout_encoding(
    indexed: tuple[Path, Path], encoding: str
) -> None:
    """UTF-8 stdout gets the index's bytes as they are; another encoding gets the text
    encoded as Python's text stream encodes it, as before."""
    vault, db = indexed
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONIOENCODING")}
    env["PYTHONIOENCODING"] = encoding
    got = _cli(vault, db, "health", "--json", "--no-refresh", env=env)
    assert got.returncode == 1, got.stderr
    name, _, errors = encoding.partition(":")
    expected = _expected(db).decode().encode(name, errors or "strict")
    assert got.stdout == expected


def test_mvs_broken_count_is_healths(indexed: tuple[Path, Path]) -> None:
    """`mv` counts broken links and anchors in their tables, not by building the report: the
    same number as health's (its exit code's findings)."""
    from notedex.query.reports import broken_count, findings_count

    _vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        report = health(conn)
        assert report["brokenLinkCount"] > 0 and report["brokenAnchorCount"] > 0
        assert broken_count(conn) == findings_count(report)
