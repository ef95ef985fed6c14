"""`notedex mv` (docs/cli.md): a move or rename keeps every link landing on the same file, in
its own style, and breaks nothing; a differential property over random moves."""

from __future__ import annotations

import importlib.util
import random
import shutil
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import REPO, SpecVault


def mv(v: SpecVault, *args: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    data: dict[str, Any] = v.json("mv", *args, ok=ok)
    return data


def test_a_rename_rewrites_every_kind_of_link_and_the_canvas(v: SpecVault) -> None:
    v.write("Projects/Old plan.md", "# Plan\n## Goals\n")
    v.write(
        "Index.md",
        '---\nup: "[[Old plan]]"\n---\n'
        "See [[Old plan#Goals|the plan]], [p](Projects/Old%20plan.md), ![[Old plan#Goals]]\n"
        "| a | b |\n|---|---|\n| [[Old plan]] | x |\n",
    )
    v.write("Projects/Sub.md", "Up: [x](../Index.md) and [r](<./Old plan.md#Goals>)\n")
    v.write("board.canvas", '{"nodes":[{"id":"1","type":"file","file":"Projects/Old plan.md"}]}')
    dry = mv(v, "Projects/Old plan.md", "Archive/Roadmap 2026.md", "--dry-run")
    assert dry["moves"] == [{"from": "Projects/Old plan.md", "to": "Archive/Roadmap 2026.md"}]
    assert (v.root / "Projects/Old plan.md").exists() and "+See [[Roadmap 2026#Goals" in dry["diff"]
    done = mv(v, "Projects/Old plan.md", "Archive/Roadmap 2026.md")
    assert sorted(done["written"]) == ["Index.md", "Projects/Sub.md", "board.canvas"]
    assert done["newBroken"] == 0
    assert (v.root / "Index.md").read_text() == (
        '---\nup: "[[Roadmap 2026|Old plan]]"\n---\n'
        "See [[Roadmap 2026#Goals|the plan]], [p](Archive/Roadmap%202026.md), "
        "![[Roadmap 2026#Goals]]\n"
        "| a | b |\n|---|---|\n| [[Roadmap 2026\\|Old plan]] | x |\n"
    )
    assert (v.root / "Projects/Sub.md").read_text() == (
        "Up: [x](../Index.md) and [r](<../Archive/Roadmap 2026.md#Goals>)\n"
    )
    assert '"file":"Archive/Roadmap 2026.md"' in (v.root / "board.canvas").read_text()
    assert v.health()["brokenLinkCount"] == 0 and v.health()["brokenAnchorCount"] == 0


def test_a_name_that_becomes_ambiguous_gets_enough_path(v: SpecVault) -> None:
    v.write("Dup.md", "")
    v.write("Other.md", "")
    v.write("X/Src.md", "[[Dup]]\n")
    mv(v, "Other.md", "X/Dup.md")
    # From X/, a bare [[Dup]] would now land on X/Dup.md (same folder first).
    assert (v.root / "X/Src.md").read_text() == "[[/Dup|Dup]]\n"
    assert [lk["target"] for lk in v.show("X/Src.md")["links"]] == ["Dup.md"]


def test_the_index_after_a_move_is_updated_for_the_changed_paths_not_by_a_walk(
    v: SpecVault, monkeypatch: Any
) -> None:
    """The update after the move costs the changed files, not the vault: once the files are
    moved and written, neither the etag walk nor a reconcile of the whole vault runs, and the
    index is right."""
    from notedex.edit import move
    from notedex.indexing import etagcheck, reconcile

    v.write("Old/Note.md", "# Note\n")
    v.write("Old/Other.md", "[n](Note.md)\n")
    v.write("Index.md", "[[Old/Note]] [o](Old/Other.md)\n")
    calls: list[str] = []
    real_carry_out = move.carry_out

    def carry_out(*args: Any) -> Any:
        done = real_carry_out(*args)
        calls.append("carried out")
        return done

    monkeypatch.setattr(move, "carry_out", carry_out)
    for module, name in ((etagcheck, "current_file_count"), (reconcile, "reconcile")):
        real = getattr(module, name)

        def spy(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    done = mv(v, "Old", "New")
    assert done["written"] == ["Index.md"] and done["newBroken"] == 0
    assert calls[calls.index("carried out") :] == ["carried out"]
    monkeypatch.undo()
    assert [lk["target"] for lk in v.show("Index.md")["links"]] == ["New/Note.md", "New/Other.md"]
    assert [lk["target"] for lk in v.show("New/Other.md")["links"]] == ["New/Note.md"]
    index = v.run("index").json()
    assert (index["added"], index["changed"], index["removed"]) == (0, 0, 0)


# --- .obsidian/app.json: the path style of a rewritten link (docs/design/writing.md) ---

LINKERS = {
    "Index.md": "[[Projects/Plan#Goals|the plan]] [p](Projects/Plan.md) ![[Plan]]\n",
    "Deep/Sub/Note.md": "[[Plan]] [r](../../Projects/Plan.md#Goals)\n",
}
OWN_STYLE = {
    "Index.md": "[[Archive/2026/Roadmap#Goals|the plan]] [p](Archive/2026/Roadmap.md) "
    "![[Roadmap]]\n",
    "Deep/Sub/Note.md": "[[Roadmap|Plan]] [r](../../Archive/2026/Roadmap.md#Goals)\n",
}
SHORTEST = {
    "Index.md": "[[Roadmap#Goals|the plan]] [p](Roadmap.md) ![[Roadmap]]\n",
    "Deep/Sub/Note.md": "[[Roadmap|Plan]] [r](Roadmap.md#Goals)\n",
}
RELATIVE = {
    "Index.md": "[[Archive/2026/Roadmap#Goals|the plan]] [p](Archive/2026/Roadmap.md) "
    "![[Archive/2026/Roadmap]]\n",
    "Deep/Sub/Note.md": "[[../../Archive/2026/Roadmap|Plan]] [r](../../Archive/2026/Roadmap.md#Goals)\n",
}
ABSOLUTE = {
    "Index.md": RELATIVE["Index.md"],
    "Deep/Sub/Note.md": "[[Archive/2026/Roadmap|Plan]] [r](Archive/2026/Roadmap.md#Goals)\n",
}


@pytest.mark.parametrize(
    ("app_json", "expected"),
    [
        ('{"newLinkFormat": "shortest"}', SHORTEST),
        ('{"newLinkFormat": "relative"}', RELATIVE),
        ('{"newLinkFormat": "absolute", "useMarkdownLinks": true}', ABSOLUTE),
        ('{"useMarkdownLinks": false}', SHORTEST),  # Obsidian's default: shortest
        ('{"newLinkFormat": "shortest", "useMarkdownLinks": true}', SHORTEST),
        (None, OWN_STYLE),  # no app.json: each link keeps its own style
        ("{not json", OWN_STYLE),
        ('["newLinkFormat", "absolute"]', OWN_STYLE),
        ('{"newLinkFormat": "longest"}', OWN_STYLE),
        ("\ufeff{}", OWN_STYLE),  # a BOM: malformed to JSON, never a crash
    ],
)
def test_a_rewritten_link_takes_the_vaults_link_format(
    v: SpecVault, app_json: str | None, expected: dict[str, str]
) -> None:
    """newLinkFormat chooses the path of each rewritten link; useMarkdownLinks never changes
    a link's kind (Obsidian's updater keeps it: the setting is for new links); a missing or
    malformed app.json keeps each link's own style."""
    if app_json is not None:
        v.write(".obsidian/app.json", app_json)
    v.write("Projects/Plan.md", "# Plan\n## Goals\n")
    for rel, text in LINKERS.items():
        v.write(rel, text)
    done = mv(v, "Projects/Plan.md", "Archive/2026/Roadmap.md")
    assert done["newBroken"] == 0 and done["skipped"] == []
    assert {rel: (v.root / rel).read_text() for rel in LINKERS} == expected
    for rel in LINKERS:
        assert {lk["target"] for lk in v.show(rel)["links"]} == {"Archive/2026/Roadmap.md"}


def test_the_shortest_format_writes_enough_path_for_a_shared_name(v: SpecVault) -> None:
    v.write(".obsidian/app.json", '{"newLinkFormat": "shortest"}')
    v.write("Projects/Plan.md", "")
    v.write("Other/Roadmap.md", "")
    v.write("Index.md", "[[Projects/Plan]] [p](Projects/Plan.md)\n")
    mv(v, "Projects/Plan.md", "Archive/Roadmap.md")
    assert (v.root / "Index.md").read_text() == (
        "[[Archive/Roadmap|Projects/Plan]] [p](Archive/Roadmap.md)\n"
    )
    assert [lk["target"] for lk in v.show("Index.md")["links"]] == ["Archive/Roadmap.md"] * 2


def test_usage_errors(v: SpecVault) -> None:
    v.write("A.md", "")
    v.write("B.md", "")
    assert v.run("mv", "A.md", "B.md").code == 2  # never replaces
    assert v.run("mv", "Nope.md", "C.md").code == 2
    assert v.run("mv", "A.md", "../outside.md").code == 2
    assert v.run("mv", "A.md", ".hidden/A.md").code == 2
    assert sorted(p.name for p in v.root.iterdir() if p.suffix == ".md") == ["A.md", "B.md"]


# --- the differential property: after random moves the link graph, by identity, is the same ---

FOLDERS = ["", "A/", "A/B/", "C/"]
NAMES = ["Alpha", "Beta", "Gamma", "Delta"]


@st.composite
def vaults(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {"img/pic.png": "png"}
    paths = []
    for name in NAMES:
        for folder in draw(st.lists(st.sampled_from(FOLDERS), min_size=1, max_size=2, unique=True)):
            paths.append(f"{folder}{name}.md")
    for path in paths:
        links = []
        for target in draw(st.lists(st.sampled_from([*paths, "img/pic.png"]), max_size=4)):
            stem = target.rpartition("/")[2].removesuffix(".md")
            folder = path.rpartition("/")[0]
            rel = "/".join([".."] * (folder.count("/") + 1 if folder else 0) + [target])
            links.append(
                draw(
                    st.sampled_from(
                        [
                            f"[[{target.removesuffix('.md')}]]",
                            f"[[{target.removesuffix('.md')}|shown]]",
                            f"[t]({target.replace(' ', '%20')})",
                            f"[t]({rel})" if folder else f"[t](./{target})",
                            f"![[{stem}]]" if target.endswith(".png") else f"[[{target}#H]]",
                        ]
                    )
                )
            )
        files[path] = "# H\n" + " ".join(links) + "\n"
    return files


def edges(v: SpecVault) -> Counter[tuple[str, str]]:
    graph = v.graph()
    kinds = {node["id"]: node["kind"] for node in graph["nodes"]}
    return Counter(
        {
            (e["source"], e["target"]): e["count"]
            for e in graph["edges"]
            if kinds.get(e["target"]) != "unresolved"
        }
    )


@settings(max_examples=15, deadline=None)
@given(files=vaults(), data=st.data())
def test_random_moves_keep_the_link_graph(
    tmp_path_factory: Any, files: dict[str, str], data: st.DataObject
) -> None:
    root = Path(tmp_path_factory.mktemp("vault"))
    v = SpecVault(root, root.parent / "index.db")
    for rel, text in files.items():
        v.write(rel, text)
    identity = {path: path for path in files}  # original path -> where it is now
    before = edges(v)
    broken = v.health()
    for _ in range(data.draw(st.integers(1, 3))):
        here = sorted(identity.values())
        folders = sorted({p.rpartition("/")[0] for p in here if "/" in p})
        src = data.draw(st.sampled_from(here + folders))
        dst = data.draw(st.sampled_from(["Moved/", "A/", "Z/Y/", ""])) + data.draw(
            st.sampled_from(["New", "Alpha", "Deep/Er"])
        )
        if src in here and src.endswith(".md"):
            dst += ".md"
        elif src in here:
            dst += ".png"
        result = v.run("mv", src, dst)
        if result.code == 2:
            continue  # an existing destination, a folder into itself: refused, nothing moved
        assert result.code == 0, result.stdout + result.stderr
        moved = {m["from"]: m["to"] for m in result.json()["moves"]}
        identity = {orig: moved.get(now, now) for orig, now in identity.items()}
    after = edges(v)
    expected = Counter({(identity[s], identity[t]): n for (s, t), n in before.items()})
    assert after == expected
    health = v.health()
    assert health["brokenLinkCount"] <= broken["brokenLinkCount"]
    assert health["brokenAnchorCount"] <= broken["brokenAnchorCount"]


# --- the same differential on copies of the example vaults (examples/) ---


def _example_copy(name: str, root: Path) -> None:
    if name == "demo":
        shutil.copytree(REPO / "examples" / "demo-vault", root)
        return
    spec = importlib.util.spec_from_file_location(
        "community_generate", REPO / "examples" / "community" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(root)


def _vault_files(root: Path) -> list[str]:
    return sorted(
        unicodedata.normalize("NFC", p.relative_to(root).as_posix())
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


@pytest.mark.slow
@pytest.mark.parametrize(("example", "steps"), [("demo", 8), ("community", 4)])
def test_random_moves_on_a_copy_of_an_example_vault_keep_the_link_graph(
    tmp_path: Path, example: str, steps: int
) -> None:
    """Notes, attachments and folders of a real example vault moved and renamed at random
    (seeded): the link graph by identity is the same after each move, and health finds no new
    broken link or anchor."""
    root = tmp_path / "vault"
    _example_copy(example, root)
    v = SpecVault(root, tmp_path / "index.db")
    identity = {path: path for path in _vault_files(root)}
    before = edges(v)
    broken = v.health()
    rng = random.Random(f"issue 33 {example}")
    done_moves, rewritten = 0, 0
    for step in range(steps):
        here = sorted(identity.values())
        folders = sorted({p.rpartition("/")[0] for p in here if "/" in p})
        src = rng.choice([*rng.sample(here, 3), *rng.sample(folders, 1)])
        name = src.rpartition("/")[2]
        stem, dot, ext = name.rpartition(".") if src in identity.values() else (name, "", "")
        where = rng.choice(["", *folders, "Moved here/"]).rstrip("/")
        new_name = rng.choice([name, f"{stem or name} {step}{dot}{ext}"])
        dst = f"{where}/{new_name}".lstrip("/")
        result = v.run("mv", src, dst)
        if result.code == 2:
            continue  # an existing destination, a folder into itself: refused, nothing moved
        assert result.code == 0, result.stdout + result.stderr
        done = result.json()
        assert done["newBroken"] == 0 and done["changed"] == [], (src, dst, done)
        done_moves, rewritten = done_moves + 1, rewritten + done["links"]
        moved = {m["from"]: m["to"] for m in done["moves"]}
        identity = {orig: moved.get(now, now) for orig, now in identity.items()}
        assert sorted(identity.values()) == _vault_files(root)
        expected = Counter({(identity[s], identity[t]): n for (s, t), n in before.items()})
        assert edges(v) == expected, (src, dst)
        health = v.health()
        assert health["brokenLinkCount"] <= broken["brokenLinkCount"], (src, dst)
        assert health["brokenAnchorCount"] <= broken["brokenAnchorCount"], (src, dst)
    print(f"{example}: {done_moves} moves of {steps}, {rewritten} links rewritten")
    assert done_moves >= steps // 2 and rewritten > 0  # the seeds move, and links follow
