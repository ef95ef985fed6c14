"""Summarise `notedex eval --json` outputs of the real-vault cases, one line a language,
and list each failed case with what came back first (used by bench/realvault/run.sh)."""

from __future__ import annotations

import json
import sys


def main(paths: list[str]) -> None:
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        label = path.rsplit("/", 1)[-1].split(".")[0]
        print(
            f"{label}: hit@1 {data['hitAt1']:.3f}  hit@3 {data['hitAt3']:.3f}  MRR {data['mrr']:.3f}"
            f"  empty {data['noAnswerEmpty']}/{data['noAnswerCases']}"
            f"  passed {data['passed']}/{data['total']}"
        )
        for case in data["cases"]:
            if case["passed"] and (case["expectsNone"] or case["top1Hit"]):
                continue
            print(
                f"   {case['query']!r} rank={case['rank']} stage={case['stage']} top={case['topPaths'][:3]}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
