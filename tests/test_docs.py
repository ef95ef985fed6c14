"""The docs test (STYLE 12): every command has help text with examples and appears in the
README; every spec section cited in the code exists in docs/; every link into docs/ resolves."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from notedex.cli import COMMANDS
from notedex.cli.parser import build_parser
from tests.helpers import REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_has_help_with_examples(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.code == 0
    assert "examples:" in result.stdout
    assert f"notedex {command}" in result.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_is_documented_in_readme(command: str) -> None:
    assert re.search(rf"notedex {command}\b", README), (
        f"README does not mention `notedex {command}`"
    )


def test_every_subparser_is_registered() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[attr-defined]


def command_help(command: str) -> str:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    return str(sub.choices[command].format_help())  # type: ignore[attr-defined]


def table_mismatches(readme: str) -> list[str]:
    """What the README's command table says that ``--help`` does not: every ``notedex CMD``
    cell names a command, and every option in it is one of that command's."""
    problems = []
    rows = [line for line in readme.splitlines() if line.startswith("| `notedex ")]
    seen = set()
    for row in rows:
        first_cell = row.split(" | ")[0]
        for usage in re.findall(r"`notedex ([^`]*)`", first_cell):
            command = usage.split()[0]
            if command not in COMMANDS:
                problems.append(f"no such command: {command}")
                continue
            seen.add(command)
            text = command_help(command)
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-0)\b", usage):
                if not re.search(rf"(?<![\w-]){re.escape(option)}\b", text):
                    problems.append(f"{command} has no {option}")
    problems += [f"{c} is not in the table" for c in sorted(set(COMMANDS) - seen)]
    return problems


def test_readme_command_table_matches_help() -> None:
    assert table_mismatches(README) == []


def test_a_made_up_option_in_the_table_is_reported() -> None:
    row = "| `notedex scan [--tag T] [--colour C]` | x |\n| `notedex nope` | y |\n"
    problems = table_mismatches(row)
    assert "scan has no --colour" in problems and "no such command: nope" in problems
    assert "scan has no --tag" not in problems and "lookup is not in the table" in problems


def test_readme_names_the_commands_without_json() -> None:
    from notedex.cli.fastpath import commands_without_json

    without = [name for name, command in COMMANDS.items() if not command.json]
    named = commands_without_json()
    assert "`--json`" in README and f"every command except {named}" in " ".join(README.split())
    for name in without:
        assert "--json" not in command_help(name)


def test_readme_opens_with_the_demo_and_test_commands() -> None:
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README, re.DOTALL)
    assert len(blocks) >= 2
    assert "examples/demo-vault" in blocks[0]
    assert ".[test]" in blocks[1] and "pytest" in blocks[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest" in blocks[1] and "python -m pytest" in ci


# -- the spec in docs/: every section cited in src/ and tests/ exists -------------------------

DOCS = REPO / "docs"
# The files whose citations are checked (bench/ only at its top: bench/out holds generated
# vaults); this file cites made-up sections on purpose.
CITING_ROOTS = (REPO / "src", REPO / "tests")
CITING_TOP_LEVEL = (REPO / "bench",)
THIS_FILE = Path(__file__).resolve()

_REF = r"§?\d+(?:\.\d+)?"
# `SEMANTICS 7.7`, `SEMANTICS 2-6`, `SEMANTICS 1/3/5`, `SEMANTICS 1 + 8`, `SEMANTICS §1-§8`.
SEMANTICS_CITATION = re.compile(rf"SEMANTICS\s+({_REF}(?:\s*(?:,|/|\+|-|–)\s*{_REF})*)")
# `-- §9 links --`: a bare section sign is a SEMANTICS section (nothing else uses it).
BARE_SECTION = re.compile(r"(?<![\w§-])§(\d+(?:\.\d+)?)")
ARCHITECTURE_CITATION = re.compile(r'ARCHITECTURE\s+"([^"\n]+)"')
STYLE_CITATION = re.compile(r"STYLE\s+(\d+(?:\s*,\s*\d+)*)")
SEMANTICS_SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)
SEMANTICS_RULE = re.compile(r"^- \*\*(\d+\.\d+)\*\* ", re.MULTILINE)
ARCHITECTURE_HEADING = re.compile(r"^#{2,4} (.+?)\s*$", re.MULTILINE)
STYLE_ITEM = re.compile(r"^(\d+)\. ", re.MULTILINE)
MARKDOWN_LINK = re.compile(r"\]\(([^()\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


@dataclass(frozen=True)
class Spec:
    """What docs/ defines: SEMANTICS sections and rules, ARCHITECTURE headings, STYLE items."""

    semantics: frozenset[str]
    architecture: frozenset[str]
    style: frozenset[str]


def load_spec(docs: Path = DOCS) -> Spec:
    semantics_text = (docs / "semantics.md").read_text(encoding="utf-8")
    architecture_text = (docs / "architecture.md").read_text(encoding="utf-8")
    style_text = (docs / "style.md").read_text(encoding="utf-8")
    return Spec(
        semantics=frozenset(
            SEMANTICS_SECTION.findall(semantics_text) + SEMANTICS_RULE.findall(semantics_text)
        ),
        architecture=frozenset(ARCHITECTURE_HEADING.findall(architecture_text)),
        style=frozenset(STYLE_ITEM.findall(style_text)),
    )


def _semantics_refs(group: str) -> list[str]:
    """``"2-6"`` -> 2..6; ``"7.1-7.3"`` -> 7.1..7.3; ``"1/3/5"`` -> 1, 3, 5."""
    refs: list[str] = []
    for part in re.split(r"\s*(?:,|/|\+)\s*", group):
        ends = [end.lstrip("§") for end in re.split(r"\s*[-–]\s*", part)]
        if len(ends) == 2:
            (low_section, _, low_rule), (high_section, _, high_rule) = (
                end.partition(".") for end in ends
            )
            if low_rule and high_rule and low_section == high_section:
                refs += [f"{low_section}.{n}" for n in range(int(low_rule), int(high_rule) + 1)]
                continue
            if not low_rule and not high_rule:
                refs += [str(n) for n in range(int(low_section), int(high_section) + 1)]
                continue
        refs += ends
    return refs


def citations(text: str) -> list[str]:
    """Every spec citation in ``text``, one entry per cited section or rule."""
    found = [
        f"SEMANTICS {ref}"
        for group in SEMANTICS_CITATION.findall(text)
        for ref in _semantics_refs(group)
    ]
    found += [f"SEMANTICS {ref}" for ref in BARE_SECTION.findall(SEMANTICS_CITATION.sub("", text))]
    found += [f'ARCHITECTURE "{title}"' for title in ARCHITECTURE_CITATION.findall(text)]
    found += [
        f"STYLE {item}" for group in STYLE_CITATION.findall(text) for item in group.split(",")
    ]
    return [" ".join(c.split()) for c in found]


def missing_citations(text: str, spec: Spec) -> list[str]:
    """The citations in ``text`` that docs/ does not define."""
    missing = []
    for citation in citations(text):
        doc, _, ref = citation.partition(" ")
        defined = {
            "SEMANTICS": spec.semantics,
            "ARCHITECTURE": spec.architecture,
            "STYLE": spec.style,
        }
        if ref.strip('"') not in defined[doc]:
            missing.append(citation)
    return missing


def cited_files() -> list[Path]:
    files = [path for root in CITING_ROOTS for path in root.rglob("*.py")]
    files += [path for folder in CITING_TOP_LEVEL for path in folder.glob("*.py")]
    return sorted(path for path in files if path.resolve() != THIS_FILE)


def test_every_cited_section_exists_in_docs() -> None:
    spec = load_spec()
    problems = [
        f"{path.relative_to(REPO)}: {citation}"
        for path in cited_files()
        for citation in missing_citations(path.read_text(encoding="utf-8"), spec)
    ]
    assert problems == [], "cited but not in docs/:\n" + "\n".join(problems)


def test_the_citation_scan_sees_the_citations() -> None:
    """The scan above would pass vacuously if the pattern found nothing: it finds ~150."""
    total = sum(len(citations(path.read_text(encoding="utf-8"))) for path in cited_files())
    assert total >= 100


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# SEMANTICS 7.7: source folder first", ["SEMANTICS 7.7"]),
        ("(SEMANTICS 2-6)", [f"SEMANTICS {n}" for n in range(2, 7)]),
        ("SEMANTICS 1/3/5:", ["SEMANTICS 1", "SEMANTICS 3", "SEMANTICS 5"]),
        ("SEMANTICS 1 + 8:", ["SEMANTICS 1", "SEMANTICS 8"]),
        ("SEMANTICS 3, 4, 6).", ["SEMANTICS 3", "SEMANTICS 4", "SEMANTICS 6"]),
        ("SEMANTICS §1-§8 and", [f"SEMANTICS {n}" for n in range(1, 9)]),
        ("SEMANTICS 7.1-7.3", ["SEMANTICS 7.1", "SEMANTICS 7.2", "SEMANTICS 7.3"]),
        ("SEMANTICS 7's fold", ["SEMANTICS 7"]),
        ("see SEMANTICS 6.", ["SEMANTICS 6"]),
        ("# -- §9 links ---", ["SEMANTICS 9"]),
        ('(ARCHITECTURE "Freshness").', ['ARCHITECTURE "Freshness"']),
        ("(STYLE 11, 13).", ["STYLE 11", "STYLE 13"]),
        ("SEMANTICS.md and ARCHITECTURE: no section", []),
    ],
)
def test_citations_are_parsed(text: str, expected: list[str]) -> None:
    assert citations(text) == expected


def test_a_made_up_citation_is_reported() -> None:
    spec = load_spec()
    text = (
        '# SEMANTICS 7.7 and SEMANTICS 10 exist, STYLE 13 too, and ARCHITECTURE "Freshness".\n'
        '# SEMANTICS 99, SEMANTICS 7.99, SEMANTICS 97-98, STYLE 99, ARCHITECTURE "No such part"\n'
    )
    assert missing_citations(text, spec) == [
        "SEMANTICS 99",
        "SEMANTICS 7.99",
        "SEMANTICS 97",
        "SEMANTICS 98",
        'ARCHITECTURE "No such part"',
        "STYLE 99",
    ]


def test_the_docs_keep_the_cited_numbering() -> None:
    """Sections 1-10, rules 7.1-7.8 (the steps of section 7), STYLE 1-16, the cited headings."""
    spec = load_spec()
    assert {str(n) for n in range(1, 11)} <= spec.semantics
    assert {f"7.{n}" for n in range(1, 9)} <= spec.semantics
    assert {str(n) for n in range(1, 17)} <= spec.style
    assert {"Freshness", "CLI contract", "Two-stage lookup", "The index"} <= spec.architecture


def _local_links(text: str) -> list[str]:
    return [
        target.split("#", 1)[0]
        for target in MARKDOWN_LINK.findall(CODE.sub("", text))
        if "://" not in target and not target.startswith(("#", "mailto:"))
    ]


def test_readme_links_to_docs_resolve() -> None:
    links = [link for link in _local_links(README) if link.startswith("docs/")]
    assert {"docs/semantics.md", "docs/architecture.md", "docs/cli.md", "docs/style.md"} <= set(
        links
    )
    assert [link for link in links if not (REPO / link).is_file()] == []


def test_links_between_docs_resolve() -> None:
    broken = [
        f"{doc.name}: {link}"
        for doc in sorted(DOCS.rglob("*.md"))
        for link in _local_links(doc.read_text(encoding="utf-8"))
        if not (doc.parent / link).exists()
    ]
    assert broken == []
