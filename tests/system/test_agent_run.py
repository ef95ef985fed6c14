"""A scripted /ask-vault run on the demo vault (issue 16): for each seed question of
examples/demo-cases.json, lookup -> show --body -> show --lines -> a line citation -> the quote
check, as integrations/claude/ask-vault.md asks. A deliberately altered quote must be caught."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, run_cli

CASES = json.loads((REPO / "examples" / "demo-cases.json").read_text(encoding="utf-8"))["cases"]
SEED_QUESTIONS = [case["query"] for case in CASES if case.get("targets")]


@dataclass(frozen=True)
class Citation:
    path: str
    first: int
    last: int
    quote: str

    def __str__(self) -> str:
        lines = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        return f"[{self.path}:{lines}]"


def notedex(demo: tuple[Path, Path], *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    """One command as the agent runs it: --json only, a non-zero exit is a failure."""
    vault, db = demo
    result = run_cli(*args, "--vault", vault, "--db", db, "--no-refresh", "--json")
    assert result.code in ok, (args, result.code, result.stderr)
    return json.loads(result.stdout)


def _words_of(line: str) -> str:
    """What a reader quotes of a line: the text without its list or block-quote marker."""
    text = line.strip().lstrip("-*+>#").strip()
    head, dot, rest = text.partition(". ")
    return rest if dot and head.isdigit() else text


def cite_from_body(show: dict[str, Any]) -> Citation | None:
    """The agent's citation: up to two consecutive prose lines, numbered from bodyStartLine."""
    numbered = list(enumerate(show["body"].splitlines(), show["bodyStartLine"]))
    in_code = False
    for index, (line_number, line) in enumerate(numbered):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or line.startswith(("#", "```", "![[")) or len(line.strip()) < 6:
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
        return Citation(show["path"], lines[0][0], lines[-1][0], quote)
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


def answer(demo: tuple[Path, Path], question: str) -> list[Citation]:
    """Steps 1-5 of ask-vault.md: the candidates, their bodies, their lines, the citations."""
    found = notedex(demo, "lookup", question)
    citations = []
    for candidate in found["candidates"][:2]:
        show = notedex(demo, "show", candidate["path"], "--body")
        citation = cite_from_body(show)
        if citation is None:
            continue
        lines = notedex(demo, "show", citation.path, "--lines", f"{citation.first}-{citation.last}")
        assert [item["line"] for item in lines["lines"]] == list(
            range(citation.first, citation.last + 1)
        )
        assert lines["modified"] == show["modified"]
        citations.append(citation)
    return citations


@pytest.mark.parametrize("question", SEED_QUESTIONS)
def test_every_seed_answer_cites_lines_that_the_quote_check_confirms(
    demo: tuple[Path, Path], question: str
) -> None:
    citations = answer(demo, question)
    assert citations, f"no citable passage for {question!r}"
    for citation in citations:
        checked = notedex(demo, "quote", citation.path, citation.quote)
        assert checked["found"], (str(citation), citation.quote)
        assert f"[{checked['match']['cite']}]" == str(citation)


def test_an_altered_quote_is_caught_and_its_closest_passage_points_back(
    demo: tuple[Path, Path], tmp_path: Path
) -> None:
    citations = [c for question in SEED_QUESTIONS[:6] for c in answer(demo, question)]
    items = [{"path": c.path, "text": c.quote} for c in citations]
    items.append({"path": citations[0].path, "text": altered(citations[0].quote)})
    check = tmp_path / "answer-quotes.json"
    check.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    report = notedex(demo, "quote", "--check", str(check), ok=(1,))
    assert report["notFound"] == 1 and report["found"] == len(citations)
    caught = report["results"][-1]
    assert caught["found"] is False and caught["match"] is None
    assert caught["closest"]["firstLine"] == citations[0].first
    assert 0.5 < caught["closest"]["similarity"] < 1.0
    # Its twin: the same check without the altered quote passes.
    check.write_text(json.dumps(items[:-1], ensure_ascii=False), encoding="utf-8")
    assert notedex(demo, "quote", "--check", str(check))["notFound"] == 0
