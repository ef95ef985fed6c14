"""indexing.pool: what a parse worker hands the writer."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from notedex.indexing.pool import findings_helper, parse_chunk
from notedex.store.noterows import prepare
from notedex.store.outline import encode_outline
from notedex.vault.parse import read_note
from notedex.vault.text import exact_name_key, segment


def test_a_parsed_note_crosses_without_its_body_and_with_its_segmented_text(
    tmp_path: Path,
) -> None:
    """The body is dropped in place on the worker's own Note: every other field as parsed."""
    note_file = tmp_path / "n.md"
    note_file.write_text("---\ntags: [a]\n---\n# 框架 title\n\nSee [[Other#H]] #t 框架設計\n")
    empty = tmp_path / "e.md"
    empty.write_text("")
    [(note, body, derived), (blank, blank_body, _)] = parse_chunk(
        [(str(note_file), "n.md"), (str(empty), "e.md")], 1000, True
    )
    parsed = read_note(str(note_file), "n.md", max_bytes=1000)
    assert note.body == "" and parsed.body != ""
    # What only the rows read crosses as rows (issue 35, build35b), not as objects.
    assert parsed.links and parsed.tags and parsed.headings and parsed.properties
    assert note == dataclasses.replace(
        parsed, body="", links=(), tags=(), headings=(), properties={}
    )
    assert body == segment(parsed.body)
    assert blank_body == "" and blank == read_note(str(empty), "e.md", max_bytes=1000)
    [(_, no_text, _)] = parse_chunk([(str(note_file), "n.md")], 1000, False)
    assert no_text == ""
    # The rows' keys, outline and search texts come computed with the note, as the writer
    # would compute them.
    titles, aliases, outline, fts_texts, prepared = derived
    assert prepared == prepare(parsed)
    assert [row[9:] for row in prepared[6]] == [("other", "other")]
    assert titles == {exact_name_key("n"), exact_name_key("框架 title")} and aliases == set()
    assert outline == encode_outline(parsed) and outline is not None
    assert fts_texts == (segment("n  框架 title"), "a t", "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="spawn elsewhere: never a fork")
def test_a_worker_is_not_a_fork_of_the_writer() -> None:
    """Issue 35: a forked worker starts with every page of the writer mapped (at 1M notes the
    walk's files alone are about 450 MB), which the process tree's memory counted once per
    worker. The workers come from the forkserver instead: their parent is not the writer,
    and what the writer made after its start is not in them."""
    _MARK.append("made by the writer")
    with findings_helper(2) as offload:
        parent = offload(os.getppid).result()
        seen = offload(_marks).result()
    assert parent != os.getpid()
    assert seen == []


_MARK: list[str] = []


def _marks() -> list[str]:
    return list(_MARK)


def test_a_parsed_notes_rows_cross_as_tuples_not_objects(tmp_path: Path) -> None:
    """Issue 35 (build35b): the writer's thread is a cold build's critical path. A worker
    makes a note's rows (``noterows.prepare``: links with their folded linkpath and name key,
    tags, aliases, tasks, properties) and the note crosses without the objects they came
    from: the writer's process unpickles no ``Link``, ``Tag``, ``Task`` or ``Heading`` (each
    a call of its class) and makes no row from them."""
    import pickle
    import pickletools

    note_file = tmp_path / "n.md"
    note_file.write_text(
        "---\ntags: [a, b]\naliases: [Al]\nk: 1\n---\n# H\n\n## H2\n\n"
        "[[One]] ![[p.png]] [x](Two.md) #t ^blk\n- [ ] task #t\n"
    )
    parsed = parse_chunk([(str(note_file), "n.md")], 10_000, True)
    globals_used = {
        arg.rpartition(" ")[2] if isinstance(arg, str) else arg
        for op, arg, _ in pickletools.genops(pickle.dumps(parsed))
        if op.name in ("GLOBAL", "STACK_GLOBAL", "SHORT_BINUNICODE")
    }
    for name in ("Link", "Tag", "Task", "Heading", "BlockId"):
        assert name not in globals_used
    [(_, _, derived)] = parsed
    full = read_note(str(note_file), "n.md", max_bytes=10_000)
    assert len(full.links) == 3 and full.tags and full.tasks and full.headings
    assert derived[4] == prepare(full)
    assert len(derived[4][6]) == 3 and len(derived[4][5]) == 1


def test_a_chunk_is_parsed_without_a_garbage_collection(tmp_path: Path) -> None:
    """Issue 35 (build35c): a chunk's objects are acyclic, and the cyclic collector's passes
    over them (one every 700 allocations) were about 4% of a parse worker's CPU. None runs
    while a chunk is parsed; the collector is on again after it."""
    import gc

    items = []
    for index in range(40):
        note_file = tmp_path / f"n{index}.md"
        note_file.write_text(
            f"---\ntags: [a, b]\naliases: [Al {index}]\n---\n# H {index}\n\n"
            + "[[One]] ![[p.png]] [x](Two.md) #t 框架設計 word\n" * 20
        )
        items.append((str(note_file), f"n{index}.md"))
    collections: list[str] = []

    def seen(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(phase)

    assert gc.isenabled()
    gc.callbacks.append(seen)
    try:
        parsed = parse_chunk(items, 100_000, True)
    finally:
        gc.callbacks.remove(seen)
    assert len(parsed) == 40 and all(len(rows[4][6]) == 60 for _, _, rows in parsed)
    assert collections == []
    assert gc.isenabled()


def test_a_worker_makes_no_json_encoder_per_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35 (build35d): ``json.dumps`` with options makes an encoder per call; the rows'
    JSON (properties, task tags, the outline) is written by encoders made once."""
    import json

    made: list[object] = []
    init = json.JSONEncoder.__init__

    def counted(self: json.JSONEncoder, *args: object, **kwargs: object) -> None:
        made.append(self)
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    items = []
    for index in range(10):
        note_file = tmp_path / f"n{index}.md"
        note_file.write_text(f"---\nk: {index}\n---\n# H\n\n- [ ] task #t\n")
        items.append((str(note_file), note_file.name))
    monkeypatch.setattr(json.JSONEncoder, "__init__", counted)
    parsed = parse_chunk(items, 10_000, True)
    assert made == []
    for _, _, derived in parsed:  # each kind of JSON was written
        assert derived[2] is not None and derived[4][0][7] and derived[4][5][0][6]
