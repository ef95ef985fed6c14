"""issue 33: `health --json` gives each suggestion its `confidence` (0-1), from the rule `fix`
reads (vault.fixes.broken_link_confidence, vault.anchors.anchor_confidence), and a suggestion
below the threshold (semantics.md 8.10) is not offered: `suggestion`, `reason` and
`confidence` are null together."""

from __future__ import annotations

import json
from pathlib import Path

from notedex.store.database import _offered_link_confidence
from notedex.store.findings_anchors import _offered
from notedex.vault.fixes import SUGGESTION_THRESHOLD
from tests.helpers import run_cli, write


def _vault(tmp_path: Path) -> list[str]:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(
        vault / "Ops" / "Kubernetes.md",
        "---\naliases: [k8s cluster]\n---\n# Kubernetes\n## Installation\n",
    )
    write(vault / "link.md", "# link\n")
    write(
        vault / "Src.md",
        "[[Kubernete|my k8s]]\n"  # typo (one edit on ten letters)
        "[[k8s cluster]]\n"  # alias
        "[[Elsewhere/Kubernetes]]\n"  # folder
        "[[Kubernetes#Instal]]\n"  # anchor: prefix
        "[[ink]]\n"  # one edit on three letters: noise, no suggestion
        "[[Nothing like it]]\n",
    )
    return ["--vault", str(vault), "--db", str(tmp_path / "index.db")]


def _by_place(items: list[dict[str, object]]) -> dict[tuple[object, ...], dict[str, object]]:
    return {(i["source"], i["line"], i["column"]): i for i in items}


def test_health_json_gives_each_suggestion_the_confidence_fix_applies(tmp_path: Path) -> None:
    where = _vault(tmp_path)
    health = run_cli("health", "--json", *where)
    assert health.code == 1, health.stderr
    data = json.loads(health.stdout)
    items = [*data["brokenLinks"], *data["brokenAnchors"]]
    assert all("confidence" in item for item in items)
    reasons = {(i["line"], i["reason"], i["confidence"]) for i in items}
    assert reasons == {
        (1, "typo", 0.78),
        (2, "alias", 0.9),
        (3, "folder", 0.95),
        (4, "prefix", 0.75),
        (5, None, None),
        (6, None, None),
    }
    for item in items:  # offered, or nothing at all
        assert (
            (item["suggestion"] is None) == (item["confidence"] is None) == (item["reason"] is None)
        )
        if item["confidence"] is not None:
            assert item["confidence"] >= SUGGESTION_THRESHOLD
    fix = run_cli("fix", "--json", *where)
    edits = _by_place(json.loads(fix.stdout)["edits"])
    offered = _by_place([i for i in items if i["suggestion"] is not None])
    assert edits.keys() == offered.keys()
    for place, edit in edits.items():
        assert (edit["confidence"], edit["reason"]) == (
            offered[place]["confidence"],
            offered[place]["reason"],
        )
    # The built report (a selection filters it) has the same objects as the streamed one.
    ignored = run_cli("health", "--json", "--ignore", "orphan", *where)
    kept = json.loads(ignored.stdout)
    assert kept["brokenLinks"] == data["brokenLinks"]
    assert kept["brokenAnchors"] == data["brokenAnchors"]


def test_a_suggestion_below_the_threshold_is_not_offered() -> None:
    """The stored rows apply the threshold with the same rule: an anchor that shares one word
    of three with a heading (0.33), a typo on three letters (0.33)."""
    assert _offered("#Sponsor this author", ("#Author of", "words")) == (None, None, None)
    assert _offered("#Instal", ("#Installation", "prefix")) == ("#Installation", "prefix", 0.75)
    assert _offered("#Instal", None) == (None, None, None)
    assert _offered_link_confidence("typo", "ink") is None
    assert _offered_link_confidence("typo", "Kubernete") == 0.78
    assert _offered_link_confidence(None, "Kubernete") is None
