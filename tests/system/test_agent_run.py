"""A scripted /ask-vault run (issues 14 and 16): an agent that follows
integrations/claude/ask-vault.md literally. It takes its commands out of the file, fills in the
placeholders with the file's quoting rule, and runs them from a folder outside the vault with
only the vault variable the file names set. For each seed question of examples/demo-cases.json,
and for "which notes mention X?" questions that only the search fallback answers, it goes
lookup (-> search) -> show -> show --body or --lines (within the file's caps) -> a line citation
-> the quote check. A deliberately altered quote must be caught."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, run_cli, write

CASES = json.loads((REPO / "examples" / "demo-cases.json").read_text(encoding="utf-8"))["cases"]
SEED_QUESTIONS = [case["query"] for case in CASES if case.get("targets")]
# Words only in note bodies: lookup finds them in note text only (its body stage, no lines), the
# search fallback finds the note and the line.
FALLBACK_QUESTIONS = {
    "which notes mention kubectl?": "Projects/ADR-001 選用 Cobra 作為 CLI 框架.md",
    "Which notes mention Tiago?": "Reading/Building a Second Brain.md",
    "which of my notes mention goroutine": "Areas/Go 學習路線.md",
}

FILE = (REPO / "integrations" / "claude" / "ask-vault.md").read_text(encoding="utf-8")
COMMANDS = re.findall(r"`(notedex [^`]+)`", FILE)


def command(*parts: str, without: tuple[str, ...] = ()) -> str:
    """The one command of the file that has every part and none of ``without``."""
    found = [c for c in COMMANDS if all(p in c for p in parts) and not any(w in c for w in without)]
    assert len(set(found)) == 1, (parts, found)
    return found[0]


LOOKUP = command(" lookup ")
SEARCH = command(" search ")
SHOW = command(" show ", without=("--body", "--lines"))
SHOW_BODY = command(" show ", "--body")
SHOW_LINES = command(" show ", "--lines")
QUOTE = command(" quote ")
SIZE_CAP = int(re.findall(r"Size cap: (\d+) bytes", FILE)[0])
LINES_CAP = int(re.findall(r"at most (\d+) lines per command", FILE)[0])
MAX_NOTES = 3 if "at most three" in FILE else 0
VAULT_VARIABLE = re.findall(r"`export (NOTEDEX_\w+)=", FILE)[0]


def quoted(text: str) -> str:
    """The file's quoting rule: single quotes, each ' inside written as '\\''."""
    return "'" + text.replace("'", "'\\''") + "'"


@dataclass(frozen=True)
class Citation:
    path: str
    first: int
    last: int
    quote: str

    def __str__(self) -> str:
        lines = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        return f"[{self.path}:{lines}]"


@dataclass
class Agent:
    """Runs the file's commands as a shell would, from ``cwd``, with the vault variable set."""

    vault: Path
    cwd: Path
    state: Path | None = None
    """Where notedex keeps its index (XDG_STATE_HOME): one per vault, as a user's persists."""
    ran: list[list[str]] = field(default_factory=list)

    def run(self, template: str, ok: tuple[int, ...] = (0,), **values: str) -> Any:
        line = template
        for placeholder, value in values.items():
            assert placeholder in line, (placeholder, template)
            line = line.replace(placeholder, value)
        argv = shlex.split(line)
        assert argv[0] == "notedex" and not {"|", ";", "&&", ">", "<"} & set(argv), line
        env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEDEX_")}
        env[VAULT_VARIABLE] = str(self.vault)
        if self.state is not None:
            env["XDG_STATE_HOME"] = str(self.state)
        proc = subprocess.run(
            [sys.executable, "-m", "notedex", *argv[1:]],
            cwd=self.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode in ok, (argv, proc.returncode, proc.stderr)
        self.ran.append(argv)
        return json.loads(proc.stdout)

    def show(self, template: str, path: str, **values: str) -> Any:
        return self.run(template, **{"'<path>'": quoted(path)}, **values)


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of the shared demo vault, built by the first command and kept for the module."""
    return tmp_path_factory.mktemp("agent-state")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A project folder that is not in the vault: no .obsidian/ anywhere above it."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _words_of(line: str) -> str:
    """What a reader quotes of a line: the text without its list or block-quote marker."""
    text = line.strip().lstrip("-*+>#").strip()
    head, dot, rest = text.partition(". ")
    return rest if dot and head.isdigit() else text


def cite(path: str, numbered: list[tuple[int, str]], start: int = 1) -> Citation | None:
    """The agent's citation: up to two consecutive prose lines, the first at or after ``start``."""
    in_code = False
    for index, (line_number, line) in enumerate(numbered):
        if line.startswith("```"):
            in_code = not in_code
        if line_number < start or in_code or line.startswith(("#", "```", "![[")):
            continue
        if len(line.strip()) < 6:
            continue
        lines = [(line_number, line)]
        after = numbered[index + 1] if index + 1 < len(numbered) else None
        if (
            after is not None
            and after[1].strip()
            and not after[1].startswith("```")
            and _words_of(after[1]) == after[1].strip()
        ):
            lines.append(after)  # the same paragraph goes on (not a list item or a heading)
        quote = " ".join(_words_of(text) for _, text in lines)
        return Citation(path, lines[0][0], lines[-1][0], quote)
    return None


def altered(quote: str) -> str:
    """The quote with one word changed: a Latin word of four letters or more, else a CJK char."""
    for word in quote.split():
        if len(word) >= 4 and word.isascii() and word.isalpha():
            return quote.replace(word, "Zyzzyva", 1)
    cjk = [i for i, ch in enumerate(quote) if ord(ch) >= 0x4E00]
    assert cjk, quote
    at = cjk[len(cjk) // 2]
    return quote[:at] + ("鬼" if quote[at] != "鬼" else "神") + quote[at + 1 :]


def candidates(agent: Agent, question: str) -> tuple[list[str], dict[str, int]]:
    """Steps 1-3: lookup, and the search fallback when it finds nothing or finds the words only
    in note text (its body stage gives no lines); (paths, hit lines)."""
    found = agent.run(LOOKUP, **{"'<the question>'": quoted(question)})
    if found["candidates"] and found["stage"] != "body":
        return [c["path"] for c in found["candidates"]], {}
    terms = " ".join(quoted(term) for term in found["terms"])
    hits = agent.run(SEARCH, **{"'<term>'": terms})["hits"]
    lines: dict[str, int] = {}
    for hit in hits:
        lines.setdefault(hit["path"], hit["line"])
    return list(lines), lines


def read(agent: Agent, path: str, hit_line: int | None) -> list[tuple[int, str]]:
    """Step 4 within its caps: the whole body of a small note, else one window of lines."""
    meta = agent.show(SHOW, path)
    if meta["size"] <= SIZE_CAP:
        shown = agent.show(SHOW_BODY, path)
        return list(enumerate(shown["body"].splitlines(), shown["bodyStartLine"]))
    first = hit_line or 1
    window = agent.show(SHOW_LINES, path, **{"<A>-<B>": f"{first}-{first + LINES_CAP - 1}"})
    return [(item["line"], item["text"]) for item in window["lines"]]


def answer(agent: Agent, question: str) -> list[Citation]:
    """Steps 1-5 of ask-vault.md: the candidates, what is read of them, the citations."""
    paths, hit_lines = candidates(agent, question)
    citations = []
    for path in paths[:2]:
        numbered = read(agent, path, hit_lines.get(path))
        citation = cite(path, numbered, hit_lines.get(path, 1))
        if citation is None:
            continue
        span = f"{citation.first}-{citation.last}"
        lines = agent.show(SHOW_LINES, path, **{"<A>-<B>": span})
        assert [item["line"] for item in lines["lines"]] == list(
            range(citation.first, citation.last + 1)
        )
        citations.append(citation)
    return citations


def check(agent: Agent, citation: Citation) -> Any:
    """Step 6: the quote check of one cited passage."""
    return agent.show(QUOTE, citation.path, **{"'<passage>'": quoted(citation.quote)})


def assert_within_the_caps(agent: Agent) -> None:
    read_notes = {argv[2] for argv in agent.ran if argv[1] == "show"}
    assert len(read_notes) <= MAX_NOTES
    for argv in agent.ran:
        if argv[1] == "show" and "--lines" in argv:
            first, last = map(int, argv[argv.index("--lines") + 1].split("-"))
            assert last - first + 1 <= LINES_CAP


def test_the_file_gives_every_command_the_agent_needs() -> None:
    assert len(set(COMMANDS)) == 6 and all(c.endswith(" --json") for c in COMMANDS)
    assert VAULT_VARIABLE == "NOTEDEX_VAULT" and "config.toml" in FILE
    assert 0 < SIZE_CAP <= 100_000 and 0 < LINES_CAP <= 500 and MAX_NOTES == 3


@pytest.mark.slow
@pytest.mark.parametrize("question", SEED_QUESTIONS)
def test_every_seed_answer_cites_lines_that_the_quote_check_confirms(
    demo: tuple[Path, Path], outside: Path, state: Path, question: str
) -> None:
    agent = Agent(demo[0], outside, state)
    citations = answer(agent, question)
    assert citations, f"no citable passage for {question!r}"
    for citation in citations:
        checked = check(agent, citation)
        assert checked["found"], (str(citation), citation.quote)
        assert f"[{checked['match']['cite']}]" == str(citation)
    assert_within_the_caps(agent)


@pytest.mark.parametrize(("question", "note"), FALLBACK_QUESTIONS.items())
def test_a_question_lookup_cannot_answer_falls_back_to_search(
    demo: tuple[Path, Path], outside: Path, state: Path, question: str, note: str
) -> None:
    agent = Agent(demo[0], outside, state)
    citations = answer(agent, question)
    assert [argv[1] for argv in agent.ran[:2]] == ["lookup", "search"]
    assert [c.path for c in citations][:1] == [note]
    word = question.split()[-1].strip("?")
    assert word.lower() in citations[0].quote.lower()
    assert check(agent, citations[0])["found"]
    assert_within_the_caps(agent)
    # Its twin: a question about a title is answered by lookup, without the fallback.
    titled = Agent(demo[0], outside, state)
    assert answer(titled, "PARA") and "search" not in {argv[1] for argv in titled.ran}


def test_nothing_found_by_either_is_no_matching_notes(
    demo: tuple[Path, Path], outside: Path
) -> None:
    agent = Agent(demo[0], outside, state)
    assert answer(agent, "which notes mention zyzzyvas?") == []
    assert [argv[1] for argv in agent.ran] == ["lookup", "search"]


@pytest.mark.slow
def test_a_note_over_the_size_cap_is_read_by_lines_only(
    demo_copy: tuple[Path, Path], outside: Path
) -> None:
    vault, _ = demo_copy
    lines = [f"Entry {n}: nothing to see here, only filler text." for n in range(1, 3001)]
    lines[1799] = "Entry 1800: the zanzibar shipment arrived late."
    write(vault / "Areas" / "Big log.md", "\n".join(lines) + "\n")
    assert (vault / "Areas" / "Big log.md").stat().st_size > SIZE_CAP
    agent = Agent(vault, outside)
    citations = answer(agent, "which notes mention zanzibar?")
    assert [(c.path, c.first) for c in citations] == [("Areas/Big log.md", 1800)]
    assert "zanzibar" in citations[0].quote and check(agent, citations[0])["found"]
    assert not any("--body" in argv for argv in agent.ran)
    assert_within_the_caps(agent)


def test_without_the_vault_variable_the_agent_gets_a_failure_to_report(
    demo: tuple[Path, Path], outside: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTEDEX_")}
    argv = shlex.split(LOOKUP.replace("'<the question>'", quoted("PARA")))
    proc = subprocess.run(
        [sys.executable, "-m", "notedex", *argv[1:]],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no vault configured" in proc.stderr and VAULT_VARIABLE in proc.stderr


@pytest.mark.slow
def test_an_altered_quote_is_caught_and_its_closest_passage_points_back(
    demo: tuple[Path, Path], outside: Path, state: Path, tmp_path: Path
) -> None:
    agent = Agent(demo[0], outside, state)
    citations = [c for question in SEED_QUESTIONS[:6] for c in answer(agent, question)]
    items = [{"path": c.path, "text": c.quote} for c in citations]
    items.append({"path": citations[0].path, "text": altered(citations[0].quote)})
    check_file = tmp_path / "answer-quotes.json"
    check_file.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    vault, db = demo
    result = run_cli("quote", "--check", check_file, "--vault", vault, "--db", db, "--json")
    assert result.code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["notFound"] == 1 and report["found"] == len(citations)
    caught = report["results"][-1]
    assert caught["found"] is False and caught["match"] is None
    assert caught["closest"]["firstLine"] == citations[0].first
    assert 0.5 < caught["closest"]["similarity"] < 1.0
    # Its twin: the same check without the altered quote passes.
    check_file.write_text(json.dumps(items[:-1], ensure_ascii=False), encoding="utf-8")
    again = run_cli("quote", "--check", check_file, "--vault", vault, "--db", db, "--json")
    assert again.code == 0 and json.loads(again.stdout)["notFound"] == 0
