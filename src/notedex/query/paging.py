"""Pages of an answer's lists (``offset``/``limit``), one rule for the CLI and the MCP server.

``total`` is the first list's length for ``scan`` (its notes), else the longest list's; every
list's own length is in ``totals``; ``hasMore`` says whether any list goes on.
"""

from __future__ import annotations

from typing import Any


def paginate(
    data: dict[str, Any],
    lists: tuple[str, ...],
    offset: int,
    limit: int | None,
    totals: dict[str, int] | None = None,
) -> dict[str, Any]:
    """``data`` with each of ``lists`` cut to ``[offset:offset + limit]`` (no limit: to the end),
    plus ``totals``, ``total``, ``offset``, ``limit`` and ``hasMore``. Given ``totals`` (each
    list's whole length), the lists are that page already (cut by the query's SQL)."""
    end = None if limit is None else offset + limit
    if totals is None:
        totals = {name: len(data[name]) for name in lists}
        for name in lists:
            data[name] = data[name][offset:end]
    data["totals"] = totals
    data["total"] = totals[lists[0]] if lists[0] == "notes" else max(totals.values())
    more = end is not None and any(n > end for n in totals.values())
    data.update(offset=offset, limit=limit, hasMore=more)
    return data
