"""The figures and the table of bench/ab.py: spreads, ratios new/old, their noise and a verdict.

The verdict's figure is the median of the per-pair ratios new/old: the two runs of a pair are
adjacent in time, so the load of a shared machine mostly cancels inside a pair. A bootstrap over
the pairs gives its 95% interval; when that interval crosses a limit of the band, the verdict is
marked "noisy": the point estimate decided it, the measurement did not settle it.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

METRICS = ("wall", "cpu")
"""Wall clock from spawn to exit, and CPU time (user + system) of the process and its children."""
BOOTSTRAP_ROUNDS = 2000
Samples = dict[str, dict[str, dict[str, list[float]]]]
"""metric -> command key -> side -> seconds, one value per run, pairs aligned by index."""


def spread(values: Sequence[float]) -> dict[str, float]:
    # Inclusive quartiles stay inside [min, max] for the few samples of the cold index.
    q1, _, q3 = (
        statistics.quantiles(values, n=4, method="inclusive")
        if len(values) > 1
        else [values[0]] * 3
    )
    return {
        "median": statistics.median(values),
        "min": min(values),
        "q1": q1,
        "q3": q3,
        "max": max(values),
        "n": len(values),
    }


def bootstrap_interval(ratios: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """The 95% bootstrap interval of the median of ``ratios`` (seeded: reruns print the same)."""
    rng = random.Random(seed)
    medians = sorted(
        statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(BOOTSTRAP_ROUNDS)
    )
    return medians[int(0.025 * BOOTSTRAP_ROUNDS)], medians[int(0.975 * BOOTSTRAP_ROUNDS) - 1]


def judge(ratio: float, interval: tuple[float, float], band: tuple[float, float]) -> str:
    """ "pass" or "FAIL" by the point estimate, "(noisy)" when the interval does not agree."""
    low, high = band
    if low <= ratio <= high:
        return "pass" if low <= interval[0] and interval[1] <= high else "pass (noisy)"
    return "FAIL" if interval[1] < low or interval[0] > high else "FAIL (noisy)"


def figures(
    samples: Samples,
    labels: dict[str, tuple[str, str]],
    band: tuple[float, float],
    judged: Sequence[str],
) -> dict[str, Any]:
    """Per command and metric: each side's spread, the ratio of the medians, the per-pair ratios
    (their median is the verdict's figure) with their bootstrap interval, and the verdict."""
    out: dict[str, Any] = {}
    for key in samples["wall"]:
        label, unit = labels[key]
        entry: dict[str, Any] = {"label": label, "unit": unit}
        for metric in METRICS:
            old, new = samples[metric][key]["old"], samples[metric][key]["new"]
            paired = [n / o for o, n in zip(old, new)]
            ratio = statistics.median(paired)
            interval = bootstrap_interval(paired)
            entry[metric] = {
                "old": spread(old),
                "new": spread(new),
                "ratio_of_medians": statistics.median(new) / statistics.median(old),
                "ratio": ratio,
                "paired_ratio": spread(paired),
                "interval95": list(interval),
                "verdict": judge(ratio, interval, band),
                "samples": {"old": old, "new": new},
            }
        entry["pass"] = all(entry[m]["verdict"].startswith("pass") for m in judged)
        out[key] = entry
    return out


def scaled(seconds: float, unit: str) -> str:
    return f"{seconds * 1000:.1f}" if unit == "ms" else f"{seconds:.2f}"


def _cell(stats: dict[str, float], unit: str) -> str:
    parts = [scaled(stats[k], unit) for k in ("median", "min", "q1", "q3", "max")]
    return f"{parts[0]} ({parts[1]}–{parts[4]}; IQR {parts[2]}–{parts[3]})"


def table(result: dict[str, Any]) -> str:
    old, new = result["revisions"]["old"], result["revisions"]["new"]
    head = [
        "command",
        "time",
        f"old `{old['rev']}` {old['commit'][:7]}: median (min–max; IQR)",
        f"new `{new['rev']}` {new['commit'][:7]}: median (min–max; IQR)",
        "medians new/old",
        "pairs new/old: median [95% interval]",
        f"verdict {result['band'][0]:.2f}–{result['band'][1]:.2f}",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for figure in result["figures"].values():
        unit = figure["unit"]
        for metric in METRICS:
            got = figure[metric]
            low, high = got["interval95"]
            verdict = got["verdict"]
            mark = verdict if verdict.startswith("pass") else f"**{verdict}**"
            row = [
                f"{figure['label']} ({unit})",
                metric,
                _cell(got["old"], unit),
                _cell(got["new"], unit),
                f"{got['ratio_of_medians']:.3f}",
                f"{got['ratio']:.3f} [{low:.3f}–{high:.3f}]",
                mark if metric in result["judged"] else f"({verdict}; not judged)",
            ]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value
