"""body_store.z: each note's segmented body, zlib-compressed with the index's preset dictionary.

The body index keeps every segmented body so that FTS5 can read a row's old text back when
the writer deletes it (ARCHITECTURE "The body index"). Compressed one by one, a note of 1.7 kB
has no history to refer back to and zlib gets it to about half; with a preset dictionary, 32 kB
of the vault's own text that every body may refer back to, to about a quarter (issue 35, size:
body_store was a third of the file). The dictionary is taken once per index, from the first
batch of notes that has text enough, and stored in ``body_dict``; rows written before it stay
plain. A zlib stream names the dictionary it needs (FDICT and the dictionary's Adler-32 in its
header), so ``inflater`` reads each row alone, whichever way it was written.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Sequence

DICT_SIZE = 32 * 1024
"""zlib's window: a longer dictionary would not be read."""
DICT_MIN_TEXT = 2 * DICT_SIZE
"""A batch makes the dictionary once its bodies hold this many bytes: a sample of many notes,
not the few of a small batch."""
LEVEL = 4
"""Level 4: within 0.3% of level 6 on genvault's bodies, 15-30% faster (docs/benchmarks.md)."""
_FDICT = 0x20  # in a zlib stream's second byte: a dictionary's Adler-32 follows


def compressor(conn: sqlite3.Connection, bodies: Sequence[str]) -> Callable[[str], bytes]:
    """The function that compresses one body for ``body_store``: with the index's dictionary,
    made from ``bodies`` (and stored) when there is none yet and they hold text enough; plain
    zlib while there is none. Called by the writer, in its transaction."""
    row = conn.execute("SELECT adler, d FROM body_dict ORDER BY adler LIMIT 1").fetchone()
    if row is None:
        zdict = _sample(bodies)
        if zdict is None:
            return _plain
        row = (zlib.adler32(zdict), zdict)
        conn.execute("INSERT INTO body_dict(adler, d) VALUES (?, ?)", row)
    primed = zlib.compressobj(
        LEVEL, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, row[1]
    )

    def deflate(text: str) -> bytes:
        # A copy of a primed compressor: priming one per body cost as much as compressing it.
        one = primed.copy()
        return one.compress(text.encode("utf-8")) + one.flush()

    return deflate


def _plain(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), LEVEL)


def _sample(bodies: Sequence[str]) -> bytes | None:
    """About ``DICT_SIZE`` bytes of whole bodies taken evenly through ``bodies`` (cut from its
    start: zlib refers back to a dictionary's end most cheaply), or None when they hold fewer
    than ``DICT_MIN_TEXT`` characters."""
    total = sum(len(body) for body in bodies)
    if total < DICT_MIN_TEXT:
        return None
    taken: list[bytes] = []
    size = 0
    for body in bodies[:: total // DICT_SIZE]:
        taken.append(body.encode("utf-8"))
        size += len(taken[-1])
        if size >= DICT_SIZE:
            break
    return b"".join(taken)[-DICT_SIZE:]


def inflater(conn: sqlite3.Connection) -> Callable[[bytes | None], str]:
    """``nx_inflate`` of ``conn``: a stored body's text, with the dictionary its stream names,
    read from ``conn``'s ``body_dict`` the first time (kept per connection: two indexes open in
    one process may hold different dictionaries)."""
    known: dict[int, bytes] = {}

    def inflate(blob: bytes | None) -> str:
        if not blob:
            return ""
        if not blob[1] & _FDICT:
            return zlib.decompress(blob).decode("utf-8")
        adler = int.from_bytes(blob[2:6], "big")
        zdict = known.get(adler)
        if zdict is None:
            row = conn.execute("SELECT d FROM body_dict WHERE adler = ?", (adler,)).fetchone()
            if row is None:
                raise ValueError(f"body_store: no dictionary {adler:08x}")
            zdict = known[adler] = row[0]
        one = zlib.decompressobj(zdict=zdict)
        return (one.decompress(blob) + one.flush()).decode("utf-8")

    return inflate
