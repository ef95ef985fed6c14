"""Draw bench/results.json against vault size: ``python bench/chart.py RESULTS.json OUT.png``.

Run by bench/run.py with the measured install's interpreter, where ``notedex[bench]`` put
matplotlib. Exit 3 when matplotlib is missing (the smoke run then goes on without a chart).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

NO_MATPLOTLIB = 3

# (title, unit, [(figure key, label, scale to the unit[, True: a target line])], [(target, label)])
PANELS: list[tuple[str, str, list[tuple[Any, ...]], list[tuple[float, str]]]] = [
    (
        "Indexing",
        "seconds",
        [
            ("cold_index_s", "cold full index", 1.0),
            ("noop_reconcile_s", "no-op reconcile", 1.0),
            ("daemon_ready_s", "daemon start to READY", 1.0),
        ],
        [(30.0, "cold target 30 s"), (2.0, "no-op target 2 s")],
    ),
    (
        "Save to visible (daemon)",
        "milliseconds",
        [("save_p50_ms", "p50", 1.0), ("save_p95_ms", "p95", 1.0)],
        [(250.0, "p50 target 250 ms"), (1000.0, "p95 target 1 s")],
    ),
    (
        "Query wall time (whole processes)",
        "milliseconds",
        [
            ("python_startup_ms", "python -c pass", 1.0),
            ("python_startup_ms", "2x start-up (lookup target)", 2.0, True),
            ("python_startup_ms", "10x start-up (health target)", 10.0, True),
            ("lookup_ms", "lookup", 1.0),
            ("lookup_miss_ms", "lookup (nothing found)", 1.0),
            ("lookup_norefresh_ms", "lookup --no-refresh, no daemon", 1.0),
            ("health_ms", "health --json", 1.0),
            ("scan_ms", "scan --json", 1.0),
            ("rg_ms", "rg -l -i", 1.0),
            ("rg_miss_ms", "rg -l -i (nothing found)", 1.0),
        ],
        [],
    ),
    (
        "Memory and size",
        "MB",
        [
            ("daemon_peak_rss_mb", "daemon peak RSS", 1.0),
            ("daemon_rss_mb", "daemon RSS (steady)", 1.0),
            ("db_no_body_bytes", "database without body table", 1e-6),
            ("db_bytes", "database", 1e-6),
            ("vault_bytes", "vault", 1e-6),
            ("vault_bytes", "30% of vault (database target, without body)", 0.3e-6, True),
        ],
        [(120.0, "RSS target 120 MB")],
    ),
]


def draw(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    notes = [s["notes"] for s in sizes]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    for ax, (title, unit, series, targets) in zip(axes.flat, PANELS):
        for key, label, scale, *flags in series:
            derived = bool(flags and flags[0])  # a target drawn from a measurement
            points = [(n, s["figures"].get(key)) for n, s in zip(notes, sizes)]
            points = [(n, v * scale) for n, v in points if v is not None]
            if points:
                ax.plot(
                    [p[0] for p in points],
                    [p[1] for p in points],
                    label=label,
                    marker="" if derived else "o",
                    linestyle=":" if derived else "-",
                    color="grey" if derived else None,
                )
        for value, label in targets:
            ax.axhline(value, linestyle="--", linewidth=0.8, color="grey")
            ax.annotate(
                label,
                xy=(0.99, value),
                xycoords=("axes fraction", "data"),
                fontsize=7,
                color="grey",
                va="bottom",
                ha="right",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(notes)
        ax.set_xticklabels([f"{n // 1000}k" if n % 1000 == 0 else str(n) for n in notes])
        ax.minorticks_off()
        ax.set_xlabel("notes in the vault")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="major", linewidth=0.3)
        ax.legend(fontsize=6.5, loc="upper left", framealpha=0.6)
    machine = results["machine"]
    fig.suptitle(
        f"notedex {machine['notedex']}: {machine['cores']} cores, Python {machine['python']}, "
        f"SQLite {machine['sqlite']} (medians of {results['settings']['runs']} runs, {results['date']})",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: chart.py RESULTS.json OUT.png", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return NO_MATPLOTLIB
    results = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    draw(results, Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
