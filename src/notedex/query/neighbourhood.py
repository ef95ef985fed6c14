"""`graph --around NOTE --depth N`: the part of the link graph within N links of one note."""

from __future__ import annotations

from collections import deque
from typing import Any


def around(data: dict[str, Any], centre: str, depth: int) -> dict[str, Any]:
    """``graph``'s document cut to the nodes at most ``depth`` links from ``centre`` (links
    followed either way) and the edges between them, in ``graph``'s order."""
    neighbours: dict[str, set[str]] = {}
    for edge in data["edges"]:
        neighbours.setdefault(edge["source"], set()).add(edge["target"])
        neighbours.setdefault(edge["target"], set()).add(edge["source"])
    distance = {centre: 0}
    queue = deque([centre])
    while queue:
        node = queue.popleft()
        if distance[node] == depth:
            continue
        for other in neighbours.get(node, ()):
            if other not in distance:
                distance[other] = distance[node] + 1
                queue.append(other)
    return {
        "nodes": [n for n in data["nodes"] if n["id"] in distance],
        "edges": [e for e in data["edges"] if e["source"] in distance and e["target"] in distance],
    }
