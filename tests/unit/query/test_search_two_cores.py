"""Every hit with its line on two cores (issue 35, lines35d): one forked child per search, which
renders its half of the hits; a hit's line taken from its line alone; the frontmatter's end
from the bytes up to the first line that may close it. The answers are the one process's."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from notedex.query import positions
from notedex.query import search as search_module
from tests.helpers import counted_forks, load_genvault, run_inprocess

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="one process without fork")


@pytest.fixture(scope="module")
def vault_and_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("search-two-cores")
    vault = base / "vault"
    load_genvault().generate(vault, 200, 7)
    db = base / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code in (0, 1), result.stderr  # 1: genvault's planted invalid frontmatter
    return vault, db


def _output(vault: Path, db: Path, *extra: str) -> tuple[int, str, str]:
    result = run_inprocess(
        "search", "book", "--vault", vault, "--db", db, "--no-refresh", "--limit", "1000", *extra
    )
    return result.code, result.stdout, result.stderr


@needs_fork
@pytest.mark.parametrize("mode", ["text", "json"])
def test_one_child_does_the_second_half_of_every_batch(
    vault_and_db: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A long search forks once, not once per batch (each fork of a large process costs both
    processes thousands of copy-on-write faults), and its answer is the one process's."""
    vault, db = vault_and_db
    extra = ("--json",) if mode == "json" else ()
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 10**9)
    reference = _output(vault, db, *extra)
    assert reference[0] == 0 and reference[1].count("book") > 20, reference
    forks = counted_forks(monkeypatch)
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 2)
    monkeypatch.setattr(search_module, "HITS_AT_ONCE", 7)  # many batches
    assert _output(vault, db, *extra) == reference
    assert forks == [1]


@needs_fork
def test_the_child_renders_its_half(
    vault_and_db: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child sends its hits rendered (the JSON of each), so the parent encodes only its
    own half of every batch, and the answer is the one process's."""
    from notedex.query import output

    vault, db = vault_and_db
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 10**9)
    reference = _output(vault, db, "--json")
    parent = os.getpid()
    encoded: list[int] = []
    real_encoder = output.compact_encoder

    def counting_encoder() -> Any:
        encode = real_encoder()

        def counting(data: Any) -> str:
            if os.getpid() == parent:
                encoded.append(1)
            return encode(data)

        return counting

    monkeypatch.setattr(output, "compact_encoder", counting_encoder)
    monkeypatch.setattr(positions, "_cores", lambda: 2)
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 2)
    monkeypatch.setattr(search_module, "HITS_AT_ONCE", 7)
    assert _output(vault, db, "--json") == reference
    shown = reference[1].count('"matchStart":')
    batches = [min(7, shown - start) for start in range(0, shown, 7)]
    assert len(encoded) == 1 + sum(size // 2 for size in batches)  # the head, then its halves


def test_a_hit_found_as_written_is_placed_from_its_line_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the word found in the bytes is the indexed first instance, the position comes from
    the match's line (``positions._in_line``), not from scanning and counting the whole
    decoded prefix (``positions._position``); the position is the text path's."""
    scanned: list[int] = []
    real_position = positions._position

    def counting(*args: Any) -> Any:
        scanned.append(1)
        return real_position(*args)

    monkeypatch.setattr(positions, "_position", counting)
    needles = positions._needles("book")
    cases = [
        (b"---\ntitle: x\n---\nintro line\nthe book and a Book\n", 3),
        ("Über naïve résumé\n读书笔记 then the book\n".encode(), 9),
        (b"\xef\xbb\xbfone\r\ntwo book\r\n", 2),
        ("数据 book".encode(), 2),
    ]
    for raw, offset in cases:
        fast = positions._from_bytes(raw, offset, needles)
        assert fast is not None and fast["match"] == "book", raw
        assert scanned == [], raw
        assert fast == positions._from_text(raw, offset, "book"), raw
        scanned.clear()  # the text path scans, as it should


def test_the_body_starts_where_the_whole_files_frontmatter_ends() -> None:
    """``positions._body_start`` reads the frontmatter's bounds from the bytes up to its first
    possible closing line when the block closes there, else from the whole: the same body
    start as ``frontmatter_bounds`` of the whole file, for every arrangement of these lines."""
    from notedex.vault.files import frontmatter_bounds

    lines = [b"---", b"----", b"--- ", b"---\r", b"a: 1", b"", b"body"]
    checked = 0
    for count in range(1, 5):
        for rest in itertools.product(lines, repeat=count):
            for end in (b"", b"\n"):
                for bom in (b"", b"\xef\xbb\xbf"):
                    raw = bom + b"\n".join((b"---", *rest)) + end
                    start = len(bom)
                    bounds = frontmatter_bounds(raw[start:].decode("latin-1"))
                    expected = start if bounds is None else start + bounds[2]
                    assert positions._body_start(raw, start) == expected, raw
                    checked += 1
    assert checked > 10_000
