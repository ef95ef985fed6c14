"""A terminal's JSON as it streams (ARCHITECTURE "Streaming answers"): compact JSON, given in
pieces cut anywhere, written indented as ``query.output.emit_json`` shows a whole document.
Loaded only when stdout is a terminal (``cli.handlers``).
"""

from __future__ import annotations

from collections.abc import Callable  # loaded anyway: Indented needs re, which loads collections


class Indented:
    """A writer of compact JSON (``compact_json``'s, in pieces cut anywhere) that passes it
    on to ``write`` as ``json.dumps(..., ensure_ascii=False, indent=2)`` writes the same
    document: what ``query.output.emit_json`` shows on a terminal, written as it streams.
    It holds its place in the document (depth, inside a string, an open bracket whose first
    item has not come), never the document."""

    def __init__(self, write: Callable[[str], object]) -> None:
        import re  # a terminal's JSON only

        self._write = write
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the last character of a string was a lone backslash
        self._opened = False  # an open bracket waits: "[]" stays as it is
        self._outside = re.compile(r'[{}\[\],:"]')
        self._inside = re.compile(r'["\\]')

    def __call__(self, text: str) -> None:
        out: list[str] = []
        i, size = 0, len(text)
        while i < size:
            if self._in_string:
                if self._escaped:  # the character after a backslash, whatever it is
                    out.append(text[i])
                    self._escaped = False
                    i += 1
                    continue
                found = self._inside.search(text, i)
                if found is None:
                    out.append(text[i:])
                    break
                j = found.start()
                out.append(text[i : j + 1])
                if text[j] == "\\":
                    self._escaped = True
                else:
                    self._in_string = False
                i = j + 1
                continue
            ch = text[i]
            if self._opened:
                self._opened = False
                if ch in "]}":  # an empty list or object
                    out.append(ch)
                    i += 1
                    continue
                self._depth += 1
                out.append("\n" + "  " * self._depth)
            found = self._outside.search(text, i)
            if found is None:
                out.append(text[i:])
                break
            j = found.start()
            out.append(text[i:j])
            ch = text[j]
            if ch == '"':
                out.append(ch)
                self._in_string = True
            elif ch in "{[":
                out.append(ch)
                self._opened = True
            elif ch in "}]":
                self._depth -= 1
                out.append("\n" + "  " * self._depth + ch)
            elif ch == ",":
                out.append(",\n" + "  " * self._depth)
            else:  # ":"
                out.append(": ")
            i = j + 1
        self._write("".join(out))
