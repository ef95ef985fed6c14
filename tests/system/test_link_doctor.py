"""Issue 12 acceptance: health, tags and mentions against bench/genvault.py's truth at 3k notes
(its planted link-doctor cases and what follows from its bookkeeping), then renames made while
the daemon runs (STYLE 11: a real vault, a real index, the CLI as a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import load_genvault, run_cli, wait_until
from tests.system.daemons import Daemons


def _json(vault: Path, db: Path, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    result = run_cli(*args, "--vault", vault, "--db", db, "--json")
    assert result.code in ok, result.stderr
    return json.loads(result.stdout)


def _expected_dead_ends(truth: dict[str, Any]) -> list[str]:
    """SEMANTICS 8.8 from the generator's bookkeeping: no link out but self-links."""
    generated = [
        path
        for path, note in truth["notes"].items()
        if not any(link["linkpath"] and link["target"] != path for link in note["links"])
    ]
    return sorted(generated + truth["doctor"]["deadEnds"])


def _expected_unused(truth: dict[str, Any]) -> list[str]:
    used = {link["target"] for note in truth["notes"].values() for link in note["links"]}
    return sorted([a for a in truth["attachments"] if a not in used] + ["Doctor/zx-unused.png"])


def _expected_tags(truth: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """SEMANTICS 4.10: folded tag -> (notes with it or a nested tag, notes with exactly it)."""
    under: dict[str, set[str]] = {}
    exact: dict[str, set[str]] = {}
    for path, note in truth["notes"].items():
        for tag in note["tags"]:
            key = tag.lower()
            exact.setdefault(key, set()).add(path)
            parts = key.split("/")
            for depth in range(1, len(parts) + 1):
                under.setdefault("/".join(parts[:depth]), set()).add(path)
    return {key: (len(paths), len(exact.get(key, ()))) for key, paths in under.items()}


@pytest.mark.slow
def test_health_tags_and_mentions_match_the_truth_and_follow_renames(tmp_path: Path) -> None:
    vault, db = tmp_path / "gen", tmp_path / "state" / "index.db"
    truth = load_genvault().generate(vault, 3000, 12, doctor=True)
    doctor = truth["doctor"]

    health = _json(vault, db, "health", ok=(1,))
    anchors = [a for a in health["brokenAnchors"] if a["source"].startswith("Doctor/")]
    assert anchors == doctor["brokenAnchors"]
    assert [d["path"] for d in health["deadEnds"]] == _expected_dead_ends(truth)
    assert [u["path"] for u in health["unusedAttachments"]] == _expected_unused(truth)
    assert health["deadEndCount"] == len(health["deadEnds"])

    tags = _json(vault, db, "tags")
    got = {t["tag"].lower(): (t["count"], t["direct"]) for t in tags["tags"]}
    assert got == _expected_tags(truth)

    for target, places in doctor["mentions"].items():
        data = _json(vault, db, "mentions", target)
        assert [
            [m["source"], m["line"], m["column"], m["text"]] for m in data["mentions"]
        ] == places

    # Renames while the daemon runs: a move within the vault, then a move again.
    group = Daemons(vault, db, tmp_path)
    try:
        group.start()
        for rename in doctor["renames"]:
            new = vault / rename["to"]
            new.parent.mkdir(parents=True, exist_ok=True)
            (vault / rename["from"]).rename(new)
            wanted = [tuple(link) for link in rename["brokenLinks"]]

            def suggested(wanted: list[tuple[str, ...]] = wanted) -> bool:
                data = _json(vault, db, "health", "--no-refresh", ok=(1,))
                fixes = {
                    (b["source"], b["text"], b["suggestion"])
                    for b in data["brokenLinks"]
                    if b["reason"] == "renamed"
                }
                return set(wanted) <= fixes

            wait_until(suggested, timeout=60, message="renamed suggestions")
            # Renamed once more: the suggestion follows the note.
            again = new.with_name("Zx Final name.md")
            new.rename(again)
            wait_until(
                lambda: any(
                    b["suggestion"] == "[[Zx Final name]]" and b["reason"] == "renamed"
                    for b in _json(vault, db, "health", "--no-refresh", ok=(1,))["brokenLinks"]
                ),
                timeout=60,
                message="the suggestion follows a second rename",
            )
    finally:
        group.kill_all()
