"""`notedex fix` (SEMANTICS 8.10, 8.11): the suggestions applied change only the target or the
anchor of each link, in its own style, and leave no fixed finding behind."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import SpecVault


def fix(v: SpecVault, *args: str, ok: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    data: dict[str, Any] = v.json("fix", *args, ok=ok)
    return data


def test_each_rule_keeps_what_the_reader_sees(v: SpecVault) -> None:
    v.write("Areas/Golang.md", "---\naliases: [Go notes]\n---\n# Golang\n## Install steps\n")
    v.write("img/diagram.png", "png")
    v.write(
        "Notes/Src.md",
        "See [[Go notes|my go]] and [[Go notes]].\n"
        "\n| a | b |\n|---|---|\n| [[Go notes\\|tabled]] | [[Go notes]] |\n\n"
        "[md](../Areas/Golang.md#Instal%20step) ![[Golang#Install stepz]] [x](Golng.md)\n"
        "![[old/diagram.png]] [t](<Areaz/Golang.md#Install stepz> 'title')\n",
    )
    dry = fix(v, ok=(1,))
    assert not dry["applied"] and dry["files"] == ["Notes/Src.md"] and dry["written"] == []
    assert (v.root / "Notes/Src.md").read_text().startswith("See [[Go notes|my go]]")
    assert "+See [[Golang|my go]] and [[Golang|Go notes]]." in dry["diff"]
    applied = fix(v, "--apply", ok=(0,))
    assert applied["written"] == ["Notes/Src.md"]
    assert (v.root / "Notes/Src.md").read_text() == (
        "See [[Golang|my go]] and [[Golang|Go notes]].\n"
        "\n| a | b |\n|---|---|\n| [[Golang\\|tabled]] | [[Golang\\|Go notes]] |\n\n"
        "[md](../Areas/Golang.md#Install%20steps) ![[Golang#Install steps]] [x](Golang.md)\n"
        "![[img/diagram.png]] [t](<Areas/Golang.md#Install stepz> 'title')\n"
    )
    health = v.health()
    # The link with two faults had its path fixed: its anchor is fixed on the next run.
    assert health["brokenLinks"] == []
    assert [a["text"] for a in health["brokenAnchors"]] == [
        "[t](<Areas/Golang.md#Install stepz> 'title')"
    ]
    assert fix(v, ok=(1,))["edits"] == [
        {
            "source": "Notes/Src.md",
            "line": 8,
            "column": 22,
            "code": "broken-anchor",
            "text": "[t](<Areas/Golang.md#Install stepz> 'title')",
            "replacement": "[t](<Areas/Golang.md#Install steps> 'title')",
            "reason": "typo",
            "confidence": 0.92,
        }
    ]
    fix(v, "--apply", ok=(0,))
    assert v.health()["brokenAnchors"] == []


def test_only_path_and_min_confidence_choose_the_edits(v: SpecVault) -> None:
    v.write("Golang.md", "# Golang\n## Install steps\n")
    v.write("Kubernetes.md", "")
    v.write("A/Src.md", "[[Golang#Instal steps]] [[Kubernete]]\n")
    v.write("B/Src.md", "[[Golnag]]\n")
    codes = {e["code"] for e in fix(v, ok=(1,))["edits"]}
    assert codes == {"broken-link", "broken-anchor"}
    assert {e["code"] for e in fix(v, "--only", "broken-anchor", ok=(1,))["edits"]} == {
        "broken-anchor"
    }
    assert {e["source"] for e in fix(v, "--path", "B/*", ok=(1,))["edits"]} == {"B/Src.md"}
    sure = fix(v, "--min-confidence", "0.75", ok=(1,))["edits"]
    assert [(e["text"], e["confidence"]) for e in sure] == [
        ("[[Golang#Instal steps]]", 0.96),
        ("[[Kubernete]]", 0.78),
    ]
    assert fix(v, "--min-confidence", "0.99", ok=(0,))["edits"] == []
    assert v.run("fix", "--min-confidence", "2").code == 2


def test_a_link_the_parser_would_read_differently_is_skipped(v: SpecVault) -> None:
    """A frontmatter link whose new name would need YAML quoting it does not have is proved
    by the parser, and skipped rather than written wrong."""
    v.write("Kubernetes.md", "")
    v.write("Src.md", '---\nup: "[[Kubernete]]"\n---\nbody [[Kubernete]]\n')
    data = fix(v, "--apply", ok=(0,))
    assert (v.root / "Src.md").read_text() == (
        '---\nup: "[[Kubernetes|Kubernete]]"\n---\nbody [[Kubernetes|Kubernete]]\n'
    )
    assert data["skipped"] == []


# --- the property: every fix applied, no fixed finding left, no byte outside a link changed ----

NAMES = ["Roadmap", "Kubernetes", "Golang notes", "Meeting log", "Project plan", "Reading list"]
HEADINGS = ["Install steps", "Open questions", "Summary of results", "Next actions"]


def _typo(name: str, where: int) -> str:
    where %= len(name)
    return name[:where] + name[where + 1 :]  # one character dropped


@st.composite
def vaults(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for i, name in enumerate(NAMES):
        folder = draw(st.sampled_from(["", "Areas/", "Projects/"]))
        headings = draw(st.lists(st.sampled_from(HEADINGS), min_size=1, max_size=3, unique=True))
        files[f"{folder}{name}.md"] = "".join(f"## {h}\n" for h in headings) + f"id {i}\n"
    notes = sorted(files)
    for n in range(draw(st.integers(1, 3))):
        lines = []
        for _ in range(draw(st.integers(1, 6))):
            target = draw(st.sampled_from(notes))
            stem = target.rpartition("/")[2][:-3]
            heading = next(
                line[3:] for line in files[target].splitlines() if line.startswith("## ")
            )
            form = draw(st.integers(0, 6))
            filler = draw(st.text(string.ascii_letters + " |*_", max_size=8))
            typo = _typo(stem, draw(st.integers(0, 50)))
            bad_heading = _typo(heading, draw(st.integers(0, 50)))
            lines.append(
                filler
                + [
                    f"[[{typo}]]",
                    f"[[{typo}|shown]]",
                    f"![[{stem}#{bad_heading}]]",
                    f"[t]({typo.replace(' ', '%20')}.md)",
                    f"[t](<{stem}.md#{bad_heading}>)",
                    f"| [[{typo}\\|cell]] |",
                    f"\n\n| a | b |\n|---|---|\n| x | [[{typo}]] |\n",
                ][form]
                + filler
            )
        files[f"Src{n}.md"] = "\n".join(lines) + "\n"
    return files


def _unchanged_outside(old: str, new: str, edits: list[dict[str, Any]]) -> bool:
    """``new`` is ``old`` with each edit's text replaced by its replacement, at its line and
    column, and nothing else."""
    lines = old.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out, at = [], 0
    for edit in sorted(edits, key=lambda e: (e["line"], e["column"])):
        offset = starts[edit["line"] - 1] + edit["column"] - 1
        if old[offset : offset + len(edit["text"])] != edit["text"] or offset < at:
            return False
        out += [old[at:offset], edit["replacement"]]
        at = offset + len(edit["text"])
    out.append(old[at:])
    return "".join(out) == new


@settings(max_examples=25, deadline=None)
@given(files=vaults())
def test_applying_every_fix_leaves_none_of_the_fixed_findings(
    tmp_path_factory: Any, files: dict[str, str]
) -> None:
    root = Path(tmp_path_factory.mktemp("vault"))
    v = SpecVault(root, root.parent / "index.db")
    for rel, text in files.items():
        v.write(rel, text)
    planned = fix(v)
    assert planned["edits"]  # every generated link has one fault a suggestion fixes
    before = {rel: (root / rel).read_text() for rel in files}
    health_before = v.health()
    applied = fix(v, "--apply", ok=(0,))
    assert applied["edits"] == planned["edits"]
    assert applied["skipped"] == []  # each suggestion here can be written as meant
    assert sorted(applied["written"]) == sorted({e["source"] for e in applied["edits"]})
    for rel, old in before.items():
        mine = [e for e in applied["edits"] if e["source"] == rel]
        assert _unchanged_outside(old, (root / rel).read_text(), mine), rel
    health = v.health()
    link_edits = sum(e["code"] == "broken-link" for e in applied["edits"])
    assert health["brokenLinkCount"] == health_before["brokenLinkCount"] - link_edits
    # A link fixed to its file may now show a broken anchor it also had: one more run fixes
    # those, and then nothing is left to fix.
    again = fix(v, "--apply", ok=(0,))
    assert all(e["code"] == "broken-anchor" for e in again["edits"])
    assert fix(v, ok=(0,))["edits"] == []
    left = v.health()
    assert all(f["suggestion"] is None for f in left["brokenLinks"] + left["brokenAnchors"])
