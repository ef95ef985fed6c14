"""bench/genvault.py: deterministic output, and the parser + resolver agree with its truth.

The truth is the generator's own bookkeeping, never notedex's output, so the acceptance test
below is an independent check of SEMANTICS 2-8 over a few thousand varied notes (issue 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import REPO, load_genvault

_GENVAULT = REPO / "bench" / "genvault.py"


@pytest.fixture(scope="module")
def genvault() -> ModuleType:
    return load_genvault()


def _tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            full = Path(dirpath, name)
            out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


@pytest.mark.slow
def test_same_seed_gives_identical_vault_and_truth(genvault: ModuleType, tmp_path: Path) -> None:
    first = genvault.generate(tmp_path / "a" / "vault", 400, 7)
    second = genvault.generate(tmp_path / "b" / "vault", 400, 7)
    assert first == second
    tree_a, tree_b = _tree(tmp_path / "a" / "vault"), _tree(tmp_path / "b" / "vault")
    assert tree_a.keys() == tree_b.keys()
    assert [k for k in tree_a if tree_a[k] != tree_b[k]] == []
    truth_a = (tmp_path / "a" / "vault.truth.json").read_bytes()
    assert truth_a == (tmp_path / "b" / "vault.truth.json").read_bytes()

    other = genvault.generate(tmp_path / "c" / "vault", 400, 8)
    assert other["notes"] != first["notes"]


@pytest.mark.slow
def test_truth_covers_the_promised_variety(genvault: ModuleType, tmp_path: Path) -> None:
    truth = genvault.generate(tmp_path / "vault", 2000, 3)
    notes = truth["notes"]
    assert len(notes) == 2000
    files = {unicodedata.normalize("NFC", path) for path in _tree(tmp_path / "vault")}
    assert all(path in files for path in notes)
    assert all(path in files for path in truth["attachments"])
    assert not any(path in truth["notes"] for path in truth["ignored"])

    links = [link for note in notes.values() for link in note["links"]]
    kinds = Counter(link["kind"] for link in links)
    assert set(kinds) == {"wikilink", "embed", "markdown", "markdown-embed", "frontmatter"}
    targets = {link["target"] for link in links if link["target"] is not None}
    assert targets <= set(notes) | set(truth["attachments"])
    assert 0.08 <= len(truth["orphans"]) / len(notes) <= 0.15
    assert 0.01 <= len(truth["broken"]) / len(links) <= 0.08
    assert len(truth["invalid_yaml"]) >= 3

    stems = Counter(path.rsplit("/", 1)[-1].lower() for path in notes)
    assert any(count > 1 for count in stems.values()), "no shared stems"
    assert any(path.count("/") == 3 for path in notes), "no notes at folder depth 3"
    assert any(" " in path.split("/")[0] and "/" in path for path in notes)
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in path) for path in notes)
    assert sum(1 for path, note in notes.items() if note["title"] != _stem(path)) >= 40
    tags = {tag for note in notes.values() for tag in note["tags"]}
    assert {"yes", "筆記"} <= tags and any(tag.count("/") == 2 for tag in tags)
    assert any(note["aliases"] for note in notes.values())


def test_cli_writes_truth_beside_the_vault_and_refuses_to_clobber(tmp_path: Path) -> None:
    out = tmp_path / "v"
    cmd = [sys.executable, str(_GENVAULT), "--notes", "30", "--seed", "1", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    truth = json.loads((tmp_path / "v.truth.json").read_text(encoding="utf-8"))
    assert len(truth["notes"]) == 30

    again = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "not empty" in again.stderr
    forced = subprocess.run([*cmd, "--force"], capture_output=True, text=True, check=False)
    assert forced.returncode == 0, forced.stderr

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.md").write_text("mine\n", encoding="utf-8")
    cmd = [sys.executable, str(_GENVAULT), "--notes", "5", "--out", str(foreign), "--force"]
    refused = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and (foreign / "keep.md").exists()


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1][:-3]


def _first_diffs(diffs: list[str], total_notes: int) -> str:
    shown = "\n".join(diffs[:10])
    return f"{len(diffs)} mismatches over {total_notes} notes; first 10:\n{shown}"


@pytest.mark.slow
def test_parser_and_resolver_match_generated_truth(genvault: ModuleType, tmp_path: Path) -> None:
    """Issue 2 acceptance: every note's title, tags, aliases and link targets equal the truth."""
    from notedex.vault.parse import read_note
    from notedex.vault.resolve import Resolver, broken_key
    from notedex.vault.walk import walk_vault

    vault = tmp_path / "vault"
    truth: dict[str, Any] = genvault.generate(vault, 3000, 2024)
    walked = walk_vault(vault)
    notes_on_disk = {f.path: f for f in walked.files if f.is_note}
    attachments = sorted(f.path for f in walked.files if not f.is_note)
    assert set(notes_on_disk) ^ set(truth["notes"]) == set(), "walked notes differ from truth"
    assert set(attachments) ^ set(truth["attachments"]) == set(), "walked attachments differ"

    resolver = Resolver(f.path for f in walked.files)
    diffs: list[str] = []
    outgoing: set[str] = set()
    incoming: set[str] = set()
    broken: list[tuple[str, str, str]] = []
    invalid: list[str] = []
    raw_of: dict[tuple[str, int], str] = {}
    for path, expected in truth["notes"].items():
        note = read_note(notes_on_disk[path].disk_path, path)
        got: dict[str, Any] = {
            "title": note.title,
            "first_h1": note.first_h1,
            "id": note.id,
            "type": note.type,
            "status": note.status,
            "tags": [tag.name for tag in note.tags],
            "aliases": list(note.aliases),
        }
        for field, value in got.items():
            if value != expected[field]:
                diffs.append(f"{path}: {field} expected {expected[field]!r}, got {value!r}")
        got_links: list[tuple[str, str, str | None]] = []
        for link in note.links:
            resolution = resolver.resolve(link.linkpath, path)
            got_links.append((link.kind, link.linkpath, resolution.target))
            raw_of[(path, len(got_links) - 1)] = link.raw
            if resolution.ambiguous:
                diffs.append(f"{path}: {link.raw!r} resolved by a tie-break (never generated)")
            if link.is_self:
                continue
            outgoing.add(path)
            if resolution.target is None:
                broken.append((path, link.linkpath, broken_key(link.linkpath)))
            elif resolution.target != path:
                incoming.add(resolution.target)
        want_links = [(k["kind"], k["linkpath"], k["target"]) for k in expected["links"]]
        if got_links != want_links:
            diffs.append(_link_diff(path, want_links, got_links, raw_of))
        # SEMANTICS 2: bad frontmatter is listed under errors; nothing else here is an error.
        if note.errors:
            invalid.append(path)
            if path not in truth["invalid_yaml"]:
                diffs.append(f"{path}: unexpected errors {note.errors!r}")

    orphans = sorted(set(truth["notes"]) - outgoing - incoming)
    if orphans != truth["orphans"]:
        extra = sorted(set(orphans) - set(truth["orphans"]))[:5]
        missing = sorted(set(truth["orphans"]) - set(orphans))[:5]
        diffs.append(f"orphans: unexpected {extra}, missing {missing}")
    want_broken = [(b["source"], b["linkpath"], b["key"]) for b in truth["broken"]]
    if sorted(broken) != sorted(want_broken):
        extra_b = sorted(set(broken) - set(want_broken))[:5]
        missing_b = sorted(set(want_broken) - set(broken))[:5]
        diffs.append(f"broken: unexpected {extra_b}, missing {missing_b}")
    missing_errors = sorted(set(truth["invalid_yaml"]) - set(invalid))
    if missing_errors:
        diffs.append(f"invalid frontmatter without an error: {missing_errors}")
    assert not diffs, _first_diffs(diffs, len(truth["notes"]))


def _link_diff(
    path: str,
    want: list[tuple[str, str, str | None]],
    got: list[tuple[str, str, str | None]],
    raw_of: dict[tuple[str, int], str],
) -> str:
    """The first differing link as (kind, linkpath, target), with the raw text the parser saw."""
    for index, (w, g) in enumerate(zip(want, got)):
        if w != g:
            return f"{path}: link #{index} expected {w!r}, got {g!r} from {raw_of[path, index]!r}"
    if len(want) > len(got):
        return f"{path}: missing links {want[len(got) :]!r}"
    extra = [raw_of[path, i] for i in range(len(want), len(got))]
    return f"{path}: unexpected links {got[len(want) :]!r} from {extra!r}"
