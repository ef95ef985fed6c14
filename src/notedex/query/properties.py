"""`properties`: every property with its type and note count, or one property's values with
their counts (issue 32). Types as SEMANTICS 15.2 and 15.4 give them. Stdlib only."""

from typing import TYPE_CHECKING

from notedex.store import properties as stored
from notedex.store.connect import read_transaction
from notedex.vault.properties import LIST, fold_name

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping
    from typing import Any

    from notedex.query.filters import NoteFilter
    from notedex.query.output import Renderer

_NOT_A_TYPE = ("null", "object")


def _type_of(kinds: "dict[str, tuple[int, int]]", declared: "str | None") -> str:
    """SEMANTICS 15.4: the declared type; else the type most of its notes' values have (a list
    when most notes hold a list), ties to the first by name; "text" when every value is empty."""
    if declared is not None:
        return declared
    notes = max((n for n, _ in kinds.values()), default=0)
    listed = max((lists for _, lists in kinds.values()), default=0)
    if listed * 2 > notes:
        return LIST
    typed = [(-n, kind) for kind, (n, _) in kinds.items() if kind not in _NOT_A_TYPE]
    return min(typed)[1] if typed else "text"


def properties(
    conn: "sqlite3.Connection",
    declared: "Mapping[str, str]",
    nf: "NoteFilter | None" = None,
) -> "dict[str, Any]":
    """Every property of the notes listed (``nf``'s when active): name (folded, SEMANTICS
    15.1), type, whether the vault declares it, and how many notes have it; by name."""
    with read_transaction(conn):
        rows = stored.property_kinds(conn, nf)
        totals = {key: stored.property_notes(conn, key, nf) for key in {r[0] for r in rows}}
    kinds: dict[str, dict[str, tuple[int, int]]] = {}
    for key, kind, notes, lists in rows:
        kinds.setdefault(key, {})[kind] = (notes, lists)
    found = [
        {
            "name": key,
            "type": _type_of(by_kind, declared.get(key)),
            "declared": key in declared,
            "count": totals[key],
        }
        for key, by_kind in sorted(kinds.items())
    ]
    return {"properties": found, "propertyCount": len(found)}


def property_values(
    conn: "sqlite3.Connection",
    name: str,
    declared: "Mapping[str, str]",
    nf: "NoteFilter | None" = None,
) -> "dict[str, Any]":
    """One property's values (list items one by one, text without case) and the notes with
    each, most first; its type and note count as ``properties`` gives them."""
    key = fold_name(name)
    with read_transaction(conn):
        rows = stored.property_values(conn, key, nf)
        kinds = {
            kind: (notes, lists)
            for k, kind, notes, lists in stored.property_kinds(conn, nf)
            if k == key
        }
        total = stored.property_notes(conn, key, nf)
    return {
        "name": key,
        "type": _type_of(kinds, declared.get(key)),
        "declared": key in declared,
        "count": total,
        "values": [
            {"value": spelling, "type": kind, "count": notes} for _, spelling, kind, notes in rows
        ],
        "valueCount": len(rows),
    }


def render_properties(r: "Renderer", data: "dict[str, Any]") -> None:
    """Text: one property a line (its notes, name, type), or one value a line."""
    if "values" in data:
        r.line(f"{data['name']} ({data['type']}): {data['count']} notes")
        for item in data["values"]:
            r.line(f"  {item['count']:>6}  {item['value']}")
        return
    for item in data["properties"]:
        mark = "" if not item["declared"] else " (types.json)"
        r.line(f"{item['count']:>6}  {item['name']}  {item['type']}{mark}")
    r.line(f"{data['propertyCount']} properties")
