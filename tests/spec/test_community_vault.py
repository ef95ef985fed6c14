"""examples/community/generate.py and examples/community-cases.json (issue 30).

The generator is deterministic and writes a well-formed vault: every note parses without an
error, every link resolves to the note the generator meant (checked with notedex's own
resolver), and the cases name only notes that exist. A no-answer case's subject occurs nowhere
in the vault. Whether lookup passes the cases is `notedex eval`'s business, not this file's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import REPO, run_inprocess

_GENERATE = REPO / "examples" / "community" / "generate.py"
_CASES = REPO / "examples" / "community-cases.json"
_DEMO_CASES = REPO / "examples" / "demo-cases.json"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("community_generate", _GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def community(
    generator: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    vault = tmp_path_factory.mktemp("community") / "vault"
    return vault, generator.generate(vault)


def _tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            full = Path(dirpath, name)
            out[unicodedata.normalize("NFC", full.relative_to(root).as_posix())] = full.read_bytes()
    return out


def _cases(path: Path) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return cases


def test_same_seed_gives_the_same_vault(
    generator: ModuleType, community: tuple[Path, dict[str, Any]]
) -> None:
    vault, _manifest = community  # built by its own call of the generator
    first, _ = generator.build(generator.DEFAULT_SEED)
    on_disk = {
        path: data.decode("utf-8") for path, data in _tree(vault).items() if path.endswith(".md")
    }
    assert on_disk == first.files
    other, _ = generator.build(generator.DEFAULT_SEED + 1)
    assert other.files != first.files
    assert set(other.files) >= set(generator.seed_notes())


def test_the_vault_looks_like_a_community_vault(community: tuple[Path, dict[str, Any]]) -> None:
    from notedex.vault.parse import read_note

    vault, manifest = community
    notes = manifest["notes"]
    assert 3000 <= len(notes) <= 5000
    folders = Counter(path.split("/", 1)[0] for path in notes)
    for folder in ("Plugins", "People", "Themes", "Guides", "Sync", "MOCs", "Forum", "中文"):
        assert folders[folder] >= 4, folder
    assert folders["Plugins"] >= 1000 and folders["People"] >= 500
    parsed = {path: read_note(vault / path, path) for path in notes}
    assert [path for path, note in parsed.items() if note.errors] == []
    # Plugins are named by ids, people by handles: the name is in the aliases, and for plugins
    # and most people in the H1 too.
    for path, note in parsed.items():
        if path.startswith(("Plugins/", "People/")):
            assert " " not in note.stem and note.aliases, path
        if path.startswith("Plugins/"):
            assert note.first_h1 == note.aliases[0], path
    people = [note for path, note in parsed.items() if path.startswith("People/")]
    assert sum(note.first_h1 == note.aliases[0] for note in people) / len(people) > 0.5
    assert any(note.first_h1 is None for note in people)
    assert any(note.first_h1 and note.first_h1.startswith("@") for note in people)
    tags = Counter(tag.name for note in parsed.values() for tag in note.tags)
    assert tags["plugin"] >= 1000 and tags["person"] >= 500 and tags["moc"] >= 5
    hubs = sorted(parsed.values(), key=lambda note: len(note.links), reverse=True)
    assert hubs[0].path.startswith("MOCs/") and len(hubs[0].links) >= 500
    texts = [link.display for note in parsed.values() for link in note.links if link.display]
    assert sum(1 for text in texts if " " in text) >= 1000, "link texts like [[jdoe42|Jane Doe]]"


def test_every_link_resolves_as_the_generator_meant(
    community: tuple[Path, dict[str, Any]],
) -> None:
    from notedex.vault.parse import read_note
    from notedex.vault.resolve import Resolver
    from notedex.vault.walk import walk_vault

    vault, manifest = community
    walked = walk_vault(vault)
    assert sorted(f.path for f in walked.files if f.is_note) == manifest["notes"]
    assert sorted(f.path for f in walked.files if not f.is_note) == manifest["attachments"]
    resolver = Resolver(f.path for f in walked.files)
    seed = set(manifest["seed"])
    diffs: list[str] = []
    broken: set[str] = set()
    for path in manifest["notes"]:
        note = read_note(vault / path, path)
        got = []
        for link in note.links:
            resolution = resolver.resolve(link.linkpath, path)
            got.append((link.linkpath, resolution.target))
            if resolution.ambiguous:
                diffs.append(f"{path}: {link.raw} resolved by a tie-break")
            if resolution.target is None:
                broken.add(link.linkpath)
        if path in seed:
            diffs += [f"{path}: [[{key}]] is broken" for key, target in got if target is None]
        elif got != [tuple(pair) for pair in manifest["links"][path]]:
            diffs.append(f"{path}: links {got} != {manifest['links'][path]}")
    assert diffs[:10] == []
    assert broken == {"Obsidian 2.0 wishlist", "Plugin review checklist"}


def test_every_case_names_notes_of_the_vault(community: tuple[Path, dict[str, Any]]) -> None:
    _vault, manifest = community
    notes = set(manifest["notes"])
    missing = [
        (case["name"], ref)
        for case in _cases(_CASES)
        for ref in [*case["targets"], *case.get("expectOrder", []), *case.get("hardNegatives", [])]
        if ref not in notes
    ]
    assert missing == []


def test_the_cases_file_is_what_eval_reads(
    community: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """eval accepts the file and finds every note it names in a real index (not: all pass)."""
    vault, _manifest = community
    out = run_inprocess(
        "eval", _CASES, "--vault", vault, "--db", tmp_path / "c.db", "--json", timeout=120
    )
    assert out.code in (0, 1), out.stderr
    report = out.json()
    assert report["unmatchedTargets"] == []
    assert report["total"] == len(_cases(_CASES))


def _absent_words(case: dict[str, Any]) -> list[str]:
    found = re.search(r"subject absent: ([^()]+)", case.get("notes", ""))
    assert found, f"{case['name']}: a no-answer case names its absent subject in its notes"
    return [word.strip() for word in found.group(1).split(",") if word.strip()]


def test_a_no_answer_subject_occurs_nowhere_in_the_vault(
    community: tuple[Path, dict[str, Any]],
) -> None:
    """Not in a name, a tag, a link text or a body: the whole text of every file and its path."""
    vault, _manifest = community
    text = "\n".join(
        f"{path}\n{data.decode('utf-8', 'replace')}" for path, data in _tree(vault).items()
    ).casefold()
    words = set(re.findall(r"\w+", text))
    no_answer = [case for case in _cases(_CASES) if not case["targets"]]
    present = []
    for case in no_answer:
        for word in _absent_words(case):
            latin = word.isascii()
            if (word.casefold() in words) if latin else (word in text):
                present.append((case["name"], word))
    assert present == []


def test_absent_word_check_can_fail(community: tuple[Path, dict[str, Any]]) -> None:
    """The twin of the check above: a word the vault does hold is caught."""
    assert _absent_words({"name": "x", "notes": "no answer; subject absent: kanban, 整理"}) == [
        "kanban",
        "整理",
    ]
    vault, _manifest = community
    text = (vault / "Plugins" / "obsidian-kanban-plugin.md").read_text(encoding="utf-8")
    assert "kanban" in set(re.findall(r"\w+", text.casefold()))


def test_the_project_cases_reach_the_issue_counts() -> None:
    """Issue 30: more than 150 cases on the demo and community vaults, 25 or more no-answer."""
    cases = _cases(_CASES) + _cases(_DEMO_CASES)
    assert len(cases) > 150
    assert sum(1 for case in cases if not case.get("targets")) >= 25
    names = Counter(case["name"] for case in cases)
    assert [name for name, count in names.items() if count > 1] == []


def test_cli_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.md").write_text("mine\n", encoding="utf-8")
    for extra in ([], ["--force"]):
        cmd = [sys.executable, str(_GENERATE), str(foreign), *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert done.returncode == 2, done.stderr
        assert (foreign / "keep.md").read_text(encoding="utf-8") == "mine\n"
        assert "not empty" in done.stderr


@pytest.mark.slow  # writes a whole second community vault (about 1 s of CPU)
def test_cli_replaces_a_vault_it_made_with_force(generator: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "vault"
    out.mkdir()
    (out / generator.MARKER).write_text("{}\n", encoding="utf-8")
    (out / "stale.md").write_text("from an older run\n", encoding="utf-8")
    cmd = [sys.executable, str(_GENERATE), str(out), "--force", "--seed", "3"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert not (out / "stale.md").exists()
    notes = sum(1 for path in _tree(out) if path.endswith(".md"))
    assert done.stdout.startswith(f"{notes} notes, ")
    assert (out / "Sync" / "Resolver.md").is_file() and (out / generator.MARKER).is_file()
