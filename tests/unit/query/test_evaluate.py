"""`notedex eval`: RecallNest canary scoring, and the demo cases through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notedex.query.evaluate import score_case
from tests.helpers import REPO, run_inprocess


def result(*paths: str, ids: dict[str, str] | None = None, stage: str = "title_tags") -> dict:
    ids = ids or {}
    return {
        "stage": stage,
        "candidates": [
            {"path": p, "id": ids.get(p), "title": Path(p).stem, "tags": [], "aliases": []}
            for p in paths
        ],
    }


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        (["T.md", "b.md", "c.md", "d.md"], 1.0),
        (["a.md", "T.md"], 0.7),
        (["a.md", "b.md", "T.md"], 0.7),
        (["a.md", "b.md", "c.md", "T.md"], 0.4),
        (["a.md"], 0.0),
    ],
)
def test_target_rank_tiers(ranked: list[str], expected: float) -> None:
    report = score_case({"query": "q", "targets": ["T.md"]}, result(*ranked))
    assert report["score"] == pytest.approx(expected)
    assert report["passed"] is (expected >= 0.7)


def test_expect_top_k_moves_the_middle_tier() -> None:
    case = {"query": "q", "targets": ["T"], "expectTopK": 1}
    assert score_case(case, result("a.md", "T.md"))["score"] == pytest.approx(0.4)


def test_targets_match_by_path_without_md_and_by_id_prefix() -> None:
    r = result("x/Note.md", "y.md", ids={"y.md": "20261101-090000"})
    assert score_case({"query": "q", "targets": ["x/Note"]}, r)["bestRank"] == 1
    assert score_case({"query": "q", "targets": ["20261101"]}, r)["bestRank"] == 2


def test_weighted_mean_over_declared_dimensions_only() -> None:
    case = {
        "query": "q",
        "targets": ["a.md"],
        "expectOrder": ["b.md", "a.md"],
        "expectContentAny": ["a", "zzz"],
    }
    report = score_case(case, result("a.md", "b.md"))
    # targets 1.0 * 0.5 + order 0 * 0.2 + content 0.5 * 0.3, over 1.0
    assert report["score"] == pytest.approx(0.65)
    assert report["orderOk"] is False
    assert report["matchedContentAny"] == ["a"]
    assert report["passed"] is False


def test_order_needs_every_note_found() -> None:
    case = {"query": "q", "expectOrder": ["a.md", "b.md"]}
    assert score_case(case, result("a.md", "b.md"))["score"] == 1.0
    assert score_case(case, result("a.md"))["score"] == 0.0


def test_hard_negative_inside_limit_costs_and_fails() -> None:
    case = {"query": "q", "targets": ["a.md"], "hardNegatives": ["bad.md"]}
    report = score_case(case, result("a.md", "bad.md"))
    assert report["score"] == pytest.approx(0.7)
    assert report["hardNegativeMatches"] == ["bad.md"]
    assert report["passed"] is False


def test_case_with_no_dimensions_passes_unless_a_negative_shows() -> None:
    assert score_case({"query": "q", "hardNegatives": ["x.md"]}, result())["passed"] is True
    assert score_case({"query": "q", "hardNegatives": ["x.md"]}, result("x.md"))["passed"] is False


def test_demo_cases_all_pass(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    cases = REPO / "examples" / "demo-cases.json"
    assert len(json.loads(cases.read_text())["cases"]) >= 15
    out = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--json")
    assert out.code == 0, out.stdout + out.stderr
    data = out.json()
    assert data["failed"] == 0
    assert data["passed"] == data["total"] >= 15
    assert {"meanScore", "hitAt1", "hitAt3", "mrr", "cases"} <= set(data)
    text = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--no-refresh")
    assert text.code == 0
    assert f"{data['total']}/{data['total']} passed" in text.stdout
    assert "MRR" in text.stdout


def test_failing_case_exits_one(demo: tuple[Path, Path], tmp_path: Path) -> None:
    vault, db = demo
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps([{"name": "wrong", "query": "Cobra", "targets": ["Areas/PARA 方法.md"]}])
    )
    out = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--json")
    assert out.code == 1
    assert out.json()["cases"][0]["passed"] is False


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '[{"name": "no query"}]',
        '[{"query": "x", "bogus": 1}]',
        '[{"query": "x", "targets": "a.md"}]',
        '[{"query": "x", "limit": 0}]',
    ],
)
def test_bad_cases_file_is_a_usage_error(
    demo: tuple[Path, Path], tmp_path: Path, content: str
) -> None:
    vault, db = demo
    cases = tmp_path / "cases.json"
    cases.write_text(content)
    out = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--json")
    assert out.code == 2
    assert out.stdout == ""
    assert out.stderr.startswith("notedex: error:")


def test_empty_targets_expect_no_candidates() -> None:
    """issue 30: `targets: []` is a question with no answer; any candidate fails it."""
    case = {"query": "how does a jet engine work", "targets": []}
    empty = score_case(case, result())
    assert empty["passed"] is True
    assert empty["score"] == 1.0
    assert empty["expectsNone"] is True
    padded = score_case(case, result("Work log.md"))
    assert padded["passed"] is False
    assert padded["score"] == 0.0
    assert padded["returned"] == 1
    # without the key, a case keeps its other dimensions only (the old rule)
    assert score_case({"query": "q"}, result("Work log.md"))["passed"] is True


def test_empty_targets_fail_even_when_content_matches() -> None:
    case = {"query": "q", "targets": [], "expectContentAny": ["Work"]}
    assert score_case(case, result("Work log.md"))["passed"] is False


def test_rank_and_hit_at_10(tmp_path: Path, demo: tuple[Path, Path]) -> None:
    vault, db = demo
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps(
            [
                {"name": "found", "query": "Cobra", "targets": ["Projects/Cobra CLI 框架.md"]},
                {"name": "none", "query": "zyzzogeton", "targets": []},
                {"name": "padded", "query": "Cobra", "targets": []},
            ]
        )
    )
    out = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--json")
    assert out.code == 1  # the padded no-answer case fails
    data = out.json()
    by_name = {c["name"]: c for c in data["cases"]}
    assert by_name["found"]["rank"] == 1
    assert by_name["found"]["top10Hit"] is True
    assert by_name["none"]["passed"] is True
    assert by_name["padded"]["passed"] is False
    assert data["hitAt10"] == 1.0
    assert (data["noAnswerCases"], data["noAnswerEmpty"]) == (2, 1)
    text = run_inprocess("eval", cases, "--vault", vault, "--db", db, "--no-refresh")
    assert "hit@10 1.00" in text.stdout
    assert "expected no answer, got" in text.stdout
