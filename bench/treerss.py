"""Wall time, CPU and peak memory of a command and of its whole process tree (issue 35, cold build).

    python bench/treerss.py [--every SECONDS] [--trace FILE] -- notedex index --full --vault V --db D

Runs the command and samples, every ``--every`` seconds (0.1), the resident memory (``VmRSS``)
and the proportional set size (``Pss`` of ``smaps_rollup``, shared pages split between the
processes that share them: what a forked worker really adds) of the command and every process
under it, from ``/proc`` (Linux). Prints one line: wall seconds, CPU seconds (user + system of
the command and its waited-for children), the peak of the largest single process's RSS, and the
peaks of the tree's summed RSS and summed PSS. A sample misses what lives shorter than its
interval; the peak of one process is also the kernel's own (``ru_maxrss``), printed beside it.
The CPU of a process the command does not wait for (a forkserver and its workers: the parse
pool's, issue 35) is not in the command's ``RUSAGE_CHILDREN``: the tree's CPU is also summed
from each process's last sample of ``/proc/PID/stat``, printed beside it (a sample misses
the last interval of each process).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence


def children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _kib(path: str, field: str) -> int:
    try:
        with open(path, encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_ticks(pid: int) -> int:
    """User + system clock ticks of ``pid`` itself (``/proc/PID/stat`` fields 14 and 15)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def sample(
    root: int, cpu: dict[int, int] | None = None, each: list[int] | None = None
) -> tuple[int, int, int]:
    """(largest RSS, summed RSS, summed PSS) in KiB of ``root`` and its descendants; ``cpu``
    takes each one's CPU ticks so far, by pid; ``each``, each one's RSS."""
    tree = children_of()
    todo, rss, pss = [root], [], 0
    while todo:
        pid = todo.pop()
        todo.extend(tree.get(pid, ()))
        rss.append(_kib(f"/proc/{pid}/status", "VmRSS:"))
        pss += _kib(f"/proc/{pid}/smaps_rollup", "Pss:")
        if cpu is not None:
            cpu[pid] = max(cpu.get(pid, 0), _cpu_ticks(pid))
    if each is not None:
        each[:] = rss
    return max(rss), sum(rss), pss


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument(
        "--trace",
        help="write each sample to this file: seconds, largest, tree RSS, then each process's RSS (MB)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peak = (0, 0, 0)
    cpu: dict[int, int] = {}
    trace = open(args.trace, "w", encoding="utf-8") if args.trace else None  # noqa: SIM115
    while child.poll() is None:
        each: list[int] = []
        now = sample(child.pid, cpu, each)
        peak = (max(peak[0], now[0]), max(peak[1], now[1]), max(peak[2], now[2]))
        if trace is not None:
            seconds = time.perf_counter() - started
            processes = " ".join(f"{kib / 1024:.0f}" for kib in sorted(each, reverse=True))
            trace.write(f"{seconds:.1f} {now[0] / 1024:.0f} {now[1] / 1024:.0f}  {processes}\n")
            trace.flush()
        time.sleep(args.every)
    wall = time.perf_counter() - started
    if trace is not None:
        trace.close()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"exit {child.returncode}; wall {wall:.1f} s; CPU {usage.ru_utime + usage.ru_stime:.1f} s "
        f"(sampled over the tree {sum(cpu.values()) / os.sysconf('SC_CLK_TCK'):.1f} s); "
        f"peak RSS: largest process {peak[0] / 1024:.0f} MB (ru_maxrss {usage.ru_maxrss / 1024:.0f}), "
        f"tree {peak[1] / 1024:.0f} MB; tree PSS {peak[2] / 1024:.0f} MB"
    )
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
