"""Shared fixtures for every test folder: isolated HOME/XDG dirs, no leaked threads, sound FTS, the demo.

Subfolders (unit/, spec/, system/) inherit these: every test gets its own HOME and XDG dirs, may
leak no thread, and leaves behind only indexes that pass FTS5's integrity-check (``fts_sound_after``
of tests/indexcheck.py, autouse here for all tests). ``demo`` is the one shared demo vault: a
settled copy of examples/demo-vault with a built index, made once per session, read-only.

Property tests run under a hypothesis profile: ``fast`` by default (a few examples each: the
README's test command), ``thorough`` in ``.ci/run`` (``HYPOTHESIS_PROFILE=thorough`` or
``--hypothesis-profile thorough``). A test's own ``@settings(max_examples=N)`` is its thorough
count: the active profile caps it (``_cap_examples``), so ``thorough`` runs each as written and
``fast`` runs a tenth of it, at least ``MIN_FAST_EXAMPLES`` and at most ``FAST_EXAMPLES``. A test
written with a small count (15-60) is one whose every example builds an index: it runs three.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import wait_until
from tests.indexcheck import copy_demo, fts_sound_after

__all__ = ["fts_sound_after"]  # autouse for every test: see tests/indexcheck.py

FAST_EXAMPLES = 10
"""Examples per property test in the default profile (hypothesis' own default is 100)."""
MIN_FAST_EXAMPLES = 3
"""The fewest examples ``fast`` gives a test (unless its own count is smaller): a tenth of a
count of 15-30 would be one or two."""
THOROUGH_EXAMPLES = 3000
"""The thorough profile: tests without their own count run this many; a test's own count (up to
3,000 in this tree) is kept."""

# No deadline: the CPU is shared, and a slow example is a benchmark's business, not a test's.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("fast", max_examples=FAST_EXAMPLES, **_COMMON)
settings.register_profile("thorough", max_examples=THOROUGH_EXAMPLES, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))  # the option overrides it


def _watchdog_path() -> tuple[str, bool]:
    """(the installed watchdog's version, whether the daemon uses our inotify observer on it)."""
    import sys

    from watchdog.version import VERSION_STRING

    try:
        from notedex.daemon.inotify import BUILT_FOR
    except ImportError:  # a release without the private names daemon.inotify uses
        return VERSION_STRING, False
    return VERSION_STRING, sys.platform.startswith("linux") and VERSION_STRING in BUILT_FOR


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the notedex package once, before any test starts a ``python -m notedex``.

    A child process reads a module's cached bytecode when it is current, and compiles the
    module from source (in memory) when it is missing. Under ``PYTHONDONTWRITEBYTECODE`` (set
    on many CI machines and shells) no process ever writes the cache, so each of the suite's
    thousands of children compiled every module it imported: about 40 ms of CPU a child
    (``lookup`` 70 -> 20 ms here). Writing the cache once, as any run without the variable
    would, leaves what each child does unchanged; a module edited later is compiled again
    from its source, as Python always does. Nothing is written where the package is not
    writable (an installed copy is compiled by pip already)."""
    import compileall

    import notedex

    compileall.compile_dir(Path(notedex.__file__).parent, quiet=2)


def pytest_report_header() -> str:
    version, ours = _watchdog_path()
    if ours:
        return f"watchdog {version}: a checked release, the daemon watches with daemon.inotify"
    return (
        f"watchdog {version}: not a release daemon.inotify was checked against, the daemon "
        "watches with watchdog's own observer (tests/unit/daemon/test_inotify.py left out)"
    )


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Our inotify subclass's own tests, only where the daemon uses it (``BUILT_FOR``): on any
    other watchdog release they would test code that does not run (or fail to import it)."""
    if collection_path.name == "test_inotify.py" and collection_path.parent.name == "daemon":
        return None if _watchdog_path()[1] else True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``_cap_examples`` for every collected property test."""
    cap = settings.default.max_examples  # the active profile's (loaded before collection)
    tenth = settings.get_current_profile_name() == "fast"
    for item in items:
        _cap_examples(getattr(item, "obj", None), cap, tenth=tenth)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built (``gc.freeze``), so that a cyclic collection walks only
    what the tests make.

    Indexing ends with one full collection (``indexing.pool.paused_gc``): in the CLI's own
    process a few milliseconds, in this one a walk over every object pytest, hypothesis and
    thousands of collected tests hold, 10-35 ms for each in-process refresh and reconcile.
    The objects frozen live for the whole session anyway; nothing a test does or checks
    changes (the tests that count the CLI's own collections run it as a child process)."""
    import gc

    gc.collect()
    gc.freeze()


def fast_examples(own: int) -> int:
    """The examples ``fast`` runs of a test written with ``own``: a tenth, at least
    ``MIN_FAST_EXAMPLES`` (or ``own`` when smaller), at most ``FAST_EXAMPLES``. The everyday
    tier's cost then follows each test's own judgement of what one example costs."""
    return min(own, FAST_EXAMPLES, max(MIN_FAST_EXAMPLES, own // 10))


def _cap_examples(test: object, cap: int, *, tenth: bool = False) -> None:
    """A property test's own ``max_examples`` above the active profile's becomes the profile's;
    ``tenth`` (the ``fast`` profile): ``fast_examples`` of its own.

    ``@settings`` wins over any profile, so a test written with 3,000 examples would run them
    under every profile: hypothesis keeps a test's settings on the function ``@given`` returns
    (``_hypothesis_internal_use_settings``, read when the test runs), and this replaces them by
    a copy with the capped count.
    """
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if not isinstance(own, settings):
        return
    want = min(own.max_examples, cap)
    if tenth:
        want = min(want, fast_examples(own.max_examples))
    if want < own.max_examples:
        test._hypothesis_internal_use_settings = settings(own, max_examples=want)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in (
        "NOTEDEX_VAULT",
        "NOTEDEX_DB",
        "NOTEDEX_CONFIG",
        "NOTIFY_SOCKET",
        "JOURNAL_STREAM",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_thread_leaks() -> Iterator[None]:
    before = set(threading.enumerate())
    yield

    def leaked() -> list[threading.Thread]:
        return [
            t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon
        ]

    with contextlib.suppress(AssertionError):  # the assert below names the threads
        wait_until(lambda: not leaked(), timeout=5, message="the test's threads to end")
    assert not leaked(), f"threads leaked by the test: {leaked()}"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    return root


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "index.db"


def _tree(root: Path) -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of everything under root: what a read-only test must not change."""
    return sorted(
        (p.relative_to(root).as_posix(), p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in root.rglob("*")
    )


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def demo_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the demo vault and its index that the test may change."""
    return copy_demo(tmp_path)


@pytest.fixture
def demo(demo_index: tuple[Path, Path]) -> Iterator[tuple[Path, Path]]:
    """The shared demo vault and its index, (vault, db); a test that changes the vault fails."""
    vault, _db = demo_index
    before = _tree(vault)
    yield demo_index
    assert _tree(vault) == before, "the shared demo vault is read-only: copy it to change it"
