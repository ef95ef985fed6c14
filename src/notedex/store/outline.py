"""notes.outline: a note's headings and block ids (SEMANTICS 10.1, 10.2) as one compact JSON
column, written with the note and read back by the anchor check. One row per note, not one per
heading: a cold index of 100k notes writes no extra table."""

from __future__ import annotations

import json

from notedex.vault.model import BlockId, Heading, Note

Outline = tuple[tuple[Heading, ...], tuple[BlockId, ...]]
EMPTY_OUTLINE: Outline = ((), ())

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""``json.dumps`` with these options, made once: ``dumps`` makes an encoder per call when
given any (issue 35, build35d: a parse worker encodes an outline for most notes)."""


def encode_outline(note: Note) -> str | None:
    """The note's headings and block ids, NULL when it has neither."""
    if not note.headings and not note.block_ids:
        return None
    return _ENCODER.encode(
        {
            "h": [[h.level, h.text, h.line, h.column] for h in note.headings],
            "b": [[b.id, b.line, b.column] for b in note.block_ids],
        }
    )


def decode_outline(text: str | None) -> Outline:
    if not text:
        return EMPTY_OUTLINE
    data = json.loads(text)
    return (
        tuple(Heading(*h) for h in data.get("h", ())),
        tuple(BlockId(*b) for b in data.get("b", ())),
    )
