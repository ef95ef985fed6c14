"""`eval`: score lookup against retrieval cases in RecallNest's canary format.

A case: ``{"name","query","limit","targets","expectTopK","expectOrder","hardNegatives",
"expectContentAny","notes"}``. Notes are named by vault path (``.md`` optional) or by an id
prefix. Scoring, per dimension the case declares:

- targets (weight 0.5): best target rank 1 -> 1.0, within ``expectTopK`` (default 3) -> 0.7,
  lower -> 0.4, missed -> 0;
- expectOrder (weight 0.2): 1 when every listed note is found and they rank in that order;
- expectContentAny (weight 0.3): the fraction of phrases found, case-insensitively, in the
  returned notes' titles, tags and aliases.

The score is the weighted mean over the declared dimensions; a hard negative inside the limit
costs 0.3 and fails the case; a case passes at 0.7 or more.

A case with ``"targets": []`` (written out, empty) is a question with no answer: it expects no
candidates at all, scores 1 when lookup returns none and 0 otherwise (issue 30: before, it
passed whatever came back). A case without ``targets`` keeps its other dimensions only.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

from notedex.errors import UsageError
from notedex.query.lookup import lookup
from notedex.query.terms import checked_query

WEIGHTS = {"targets": 0.5, "order": 0.2, "content": 0.3, "none": 0.5}
HARD_NEGATIVE_PENALTY = 0.3
PASS_SCORE = 0.7
DEFAULT_LIMIT = 10
_FIELDS = (
    "name",
    "query",
    "limit",
    "targets",
    "expectTopK",
    "expectOrder",
    "hardNegatives",
    "expectContentAny",
    "notes",
)


def load_cases(path: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"no such cases file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read cases file {path}: {exc}") from exc
    cases = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(cases, list) or not cases:
        raise UsageError(f'{path}: expected a non-empty list of cases (or {{"cases": [...]}})')
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("query"), str):
            raise UsageError(f'{path}: case {i + 1} needs at least a string "query"')
        try:
            checked_query(case["query"], "query")  # lookup's rule, before any case runs
        except UsageError as exc:
            raise UsageError(f"{path}: case {i + 1}: {exc}") from None
        unknown = set(case) - set(_FIELDS)
        if unknown:
            raise UsageError(
                f"{path}: case {i + 1} has unknown fields: {', '.join(sorted(unknown))}"
            )
        for key in ("targets", "expectOrder", "hardNegatives", "expectContentAny"):
            value = case.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UsageError(f"{path}: case {i + 1}: {key} must be a list of strings")
        for key in ("limit", "expectTopK"):
            if key in case and (not isinstance(case[key], int) or case[key] < 1):
                raise UsageError(f"{path}: case {i + 1}: {key} must be a positive integer")
    return cases


def _matches(candidate: dict[str, Any], ref: str) -> bool:
    path = candidate["path"]
    if ref in (path, path.removesuffix(".md")):
        return True
    note_id = candidate.get("id")
    return bool(note_id) and str(note_id).startswith(ref)


def _rank(candidates: list[dict[str, Any]], ref: str) -> int | None:
    for i, cand in enumerate(candidates, 1):
        if _matches(cand, ref):
            return i
    return None


def score_case(case: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    candidates = result["candidates"]
    parts: dict[str, float] = {}
    targets = case.get("targets") or []
    expects_none = "targets" in case and not targets
    top_k = case.get("expectTopK", 3)
    target_ranks = {t: _rank(candidates, t) for t in targets}
    found_ranks = [r for r in target_ranks.values() if r is not None]
    best = min(found_ranks) if found_ranks else None
    if targets:
        if best is None:
            parts["targets"] = 0.0
        elif best == 1:
            parts["targets"] = 1.0
        elif best <= top_k:
            parts["targets"] = 0.7
        else:
            parts["targets"] = 0.4
    order = case.get("expectOrder") or []
    order_ok: bool | None = None
    if order:
        ranks = [_rank(candidates, ref) for ref in order]
        found = [r for r in ranks if r is not None]
        order_ok = len(found) == len(ranks) and all(a < b for a, b in itertools.pairwise(found))
        parts["order"] = 1.0 if order_ok else 0.0
    content = case.get("expectContentAny") or []
    matched: list[str] = []
    if content:
        haystack = " ".join(
            " ".join([c["title"], *c["tags"], *c["aliases"]]) for c in candidates
        ).lower()
        matched = [phrase for phrase in content if phrase.lower() in haystack]
        parts["content"] = len(matched) / len(content)
    if expects_none:
        parts["none"] = 0.0 if candidates else 1.0
    weight = sum(WEIGHTS[k] for k in parts)
    score = sum(WEIGHTS[k] * v for k, v in parts.items()) / weight if weight else 1.0
    negatives = [
        ref for ref in case.get("hardNegatives") or [] if _rank(candidates, ref) is not None
    ]
    if negatives:
        score -= HARD_NEGATIVE_PENALTY
    score = max(0.0, score)
    if expects_none and candidates:
        score = 0.0  # a no-answer question that gets an answer fails, whatever else it declares
    return {
        "name": case.get("name") or case["query"],
        "query": case["query"],
        "score": round(score, 4),
        "passed": score >= PASS_SCORE and not negatives and not (expects_none and candidates),
        "stage": result["stage"],
        "targetRanks": [{"id": t, "rank": r} for t, r in target_ranks.items()],
        "bestRank": best,
        "rank": best,
        "top1Hit": best == 1,
        "top3Hit": best is not None and best <= 3,
        "top10Hit": best is not None and best <= 10,
        "orderOk": order_ok,
        "matchedContentAny": matched,
        "hardNegativeMatches": negatives,
        "topPaths": [c["path"] for c in candidates],
        "hasTargets": bool(targets),
        "expectsNone": expects_none,
        "returned": len(candidates),
        "notes": case.get("notes"),
    }


def unmatched_targets(
    conn: sqlite3.Connection, cases: list[dict[str, Any]]
) -> list[dict[str, str]]:
    """Every note a case names (targets, expectOrder, hardNegatives) that matches no note of
    the index: a misspelled target would otherwise just score as a miss."""
    from notedex.store import read
    from notedex.store.connect import read_transaction

    with read_transaction(conn):
        notes = [
            {"path": r["path"], "id": r["id"]} for r in read.notes(conn, include_excluded=True)
        ]
    unmatched = []
    for case in cases:
        refs = [
            *case.get("targets", []),
            *case.get("expectOrder", []),
            *case.get("hardNegatives", []),
        ]
        for ref in dict.fromkeys(refs):
            if not any(_matches(note, ref) for note in notes):
                unmatched.append({"case": case.get("name") or case["query"], "target": ref})
    return unmatched


def evaluate(conn: sqlite3.Connection, cases: list[dict[str, Any]]) -> dict[str, Any]:
    reports = []
    unmatched = unmatched_targets(conn, cases)
    for case in cases:
        result = lookup(conn, case["query"], limit=case.get("limit", DEFAULT_LIMIT))
        reports.append(score_case(case, result))
    with_targets = [r for r in reports if r["hasTargets"]]
    n = len(with_targets)
    passed = sum(r["passed"] for r in reports)
    return {
        "cases": reports,
        "total": len(reports),
        "passed": passed,
        "failed": len(reports) - passed,
        "meanScore": round(sum(r["score"] for r in reports) / len(reports), 4),
        "hitAt1": round(sum(r["top1Hit"] for r in with_targets) / n, 4) if n else None,
        "hitAt3": round(sum(r["top3Hit"] for r in with_targets) / n, 4) if n else None,
        "hitAt10": round(sum(r["top10Hit"] for r in with_targets) / n, 4) if n else None,
        "mrr": round(sum(1 / r["bestRank"] for r in with_targets if r["bestRank"]) / n, 4)
        if n
        else None,
        "noAnswerCases": sum(r["expectsNone"] for r in reports),
        "noAnswerEmpty": sum(r["expectsNone"] and not r["returned"] for r in reports),
        "unmatchedTargets": unmatched,
    }
