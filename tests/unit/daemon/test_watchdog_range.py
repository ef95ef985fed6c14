"""pyproject.toml's watchdog range and ``daemon.inotify.BUILT_FOR`` (issue 34): a range that
accepts a user's newer 7.x, whose oldest release is one our inotify observer was checked
against, so that ``pip install`` never picks a release on which the daemon cannot start."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from notedex.daemon.inotify import BUILT_FOR

ROOT = Path(__file__).resolve().parents[3]


def _watchdog() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (req,) = [r for r in map(Requirement, project["dependencies"]) if r.name == "watchdog"]
    return req


def test_watchdog_is_a_range_that_accepts_later_releases_of_its_major() -> None:
    spec = _watchdog().specifier
    for later in ("7.1.2", "7.2.0", "7.9.9"):
        assert spec.contains(later), (str(spec), later)
    assert not spec.contains("8.0.0"), str(spec)  # a new major may drop what the daemon uses


def test_the_oldest_release_in_the_range_is_one_our_observer_was_checked_against() -> None:
    spec = _watchdog().specifier
    (floor,) = [s.version for s in spec if s.operator == ">="]
    assert floor in BUILT_FOR, (floor, sorted(BUILT_FOR))
    *head, last = Version(floor).release
    older = (*head, last - 1)
    assert not spec.contains(".".join(map(str, older))), (str(spec), older)


def test_every_checked_release_lies_in_the_range() -> None:
    spec = _watchdog().specifier
    assert BUILT_FOR and all(spec.contains(v) for v in BUILT_FOR), (str(spec), sorted(BUILT_FOR))
