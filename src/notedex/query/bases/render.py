"""``base`` as text: the view's table (grouped when it groups), its summaries; ``--list`` and
``--check`` reports."""

from __future__ import annotations

from notedex.query.bases.run import cell_text

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    from typing import Any

    from notedex.query.output import Renderer


def render_base(r: Renderer, data: dict[str, Any]) -> None:
    headers = [c["name"] for c in data["columns"]]
    ids = [c["id"] for c in data["columns"]]
    by_path = {row["path"]: row for row in data["rows"]}
    if data["groups"] is None:
        r.table(headers, [[cell_text(row[i]) for i in ids] for row in data["rows"]])
    else:
        for group in data["groups"]:
            r.line(f"## {cell_text(group['key']) or '(empty)'}")
            r.table(headers, [[cell_text(by_path[p][i]) for i in ids] for p in group["paths"]])
            r.line()
    for column, value in data["summaries"].items():
        r.line(f"{column}: {cell_text(value)}")
    count = len(data["rows"])
    r.line(f"{count} {'row' if count == 1 else 'rows'} ({data['view'] or 'view'})")


def render_list(r: Renderer, data: dict[str, Any]) -> None:
    for base in data["bases"]:
        if base["error"]:
            r.line(f"{r.path(base['path'])}  error: {base['error']}")
        else:
            r.line(f"{r.path(base['path'])}  {', '.join(base['views'])}")


def render_check(r: Renderer, data: dict[str, Any]) -> None:
    for view in data["views"]:
        r.line(f"view {view['view']!r}")
        r.line(f"  evaluates: {', '.join(view['evaluates'])}")
        for refused in view["refuses"]:
            r.line(f"  refuses: {refused['construct']} ({refused['reason']})")
