"""The seeded soak (issue 13): random creates, edits, renames, folder moves in and out of the
vault, chmod cycles and permission blips, symlinks (inside, outside, loops, dangling), FIFOs
and mtime games, with CLI readers running throughout. Every phase must converge on a fresh
full index with a sound FTS, and no reader may fail.

CI runs one seed at a size that fits; ``NOTEDEX_SOAK_SEEDS=1,2,3`` and
``NOTEDEX_SOAK_PHASES=10`` run more. Permission blips are injected at the system-call boundary
(``tests/system/blip.py``): as root a ``chmod 000`` alone would not bite (tests/privileges.py),
so both are done. A second soak runs the daemon as ``nobody`` (forked, as root), where chmods of
notes and folders bite for real, folders are made under a folder while it is locked, and each
phase ends with a note in every folder that only the folder's watch can hear (issue 31.1).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
from pathlib import Path

import pytest

from tests.helpers import run_cli, write
from tests.system.daemons import Daemons, assert_converges, note

SEEDS = [int(s) for s in os.environ.get("NOTEDEX_SOAK_SEEDS", "1").split(",") if s.strip()]
PHASES = int(os.environ.get("NOTEDEX_SOAK_PHASES", "3"))
OPS_PER_PHASE = int(os.environ.get("NOTEDEX_SOAK_OPS", "40"))


class Readers:
    """CLI readers in a loop (``lookup``, ``health``, ``search``), as users and agents ask."""

    def __init__(self, vault: Path, db: Path, count: int = 2) -> None:
        self.vault, self.db = vault, db
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.answered = 0
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(count)]

    def __enter__(self) -> Readers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=120)

    def _run(self, i: int) -> None:
        queries = [("lookup", "note"), ("health",), ("search", "body")]
        n = i
        while not self.stop.is_set():
            args = queries[n % len(queries)]
            n += 1
            result = run_cli(*args, "--json", "--vault", self.vault, "--db", self.db)
            try:
                json.loads(result.stdout)
                ok = result.code in (0, 1)
            except ValueError:
                ok = False
            if ok:
                self.answered += 1
            else:
                self.failures.append(f"{args}: exit {result.code}: {result.stderr[-300:]}")


class Workload:
    def __init__(self, rng: random.Random, vault: Path, outside: Path, locks: Path) -> None:
        self.rng, self.vault, self.outside, self.locks = rng, vault, outside, locks
        self.counter = 0
        self.chmodded: list[Path] = []
        self.ops: list[str] = []
        """What this phase did, in order, vault-relative: a failure names the operation."""

    def log(self, op: str, *paths: Path) -> None:
        def rel(path: Path) -> str:
            for root, label in ((self.vault, ""), (self.outside, "<outside>/")):
                if path.is_relative_to(root):
                    return label + str(path.relative_to(root))
            return str(path)

        self.ops.append(" ".join([op, *(rel(p) for p in paths)]))

    def phase_log(self) -> str:
        lines, self.ops = self.ops, []
        return "\n".join(f"  {i}: {line}" for i, line in enumerate(lines))

    def _tree(self) -> tuple[list[Path], list[Path]]:
        """(regular notes, real folders): never through a symlink (pathlib's rglob follows
        symlinked folders in Python 3.11, and the workload makes loops)."""
        notes: list[Path] = []
        folders: list[Path] = []
        for top, dirs, files in os.walk(self.vault):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            folders.append(Path(top))
            for name in sorted(files):
                path = Path(top, name)
                real = path.is_file() and not path.is_symlink()
                if real and name.endswith(".md") and not name.startswith("."):
                    notes.append(path)
        return notes, folders

    def _notes(self) -> list[Path]:
        return self._tree()[0]

    def _folders(self) -> list[Path]:
        return self._tree()[1]

    def _name(self, stem: str = "n") -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def step(self) -> None:
        ops = [
            self.create, self.create, self.edit, self.edit, self.rename, self.delete,
            self.move_folder_out_and_in, self.chmod_cycle, self.blip, self.symlink,
            self.fifo, self.mtime_game,
        ]  # fmt: skip
        self.rng.choice(ops)()

    def create(self) -> None:
        folder = self.rng.choice(self._folders() or [self.vault])
        name = self._name()
        self.log("create", folder / f"{name}.md")
        write(
            folder / f"{name}.md", note(name.title(), tags=f"t{self.counter % 5}", links="[[n1]]")
        )

    def edit(self) -> None:
        notes = self._notes()
        if not notes:
            return self.create()
        path = self.rng.choice(notes)
        if self.rng.random() < 0.5:  # atomic save
            self.log("edit (atomic save)", path)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(note(f"Edited {self.counter}", links="[[n2]]"), encoding="utf-8")
            os.replace(tmp, path)
        else:
            self.log("edit (append)", path)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"\nmore [[n{self.rng.randint(1, 30)}]]\n")

    def rename(self) -> None:
        notes = self._notes()
        if notes:
            path = self.rng.choice(notes)
            folder = self.rng.choice(self._folders() or [self.vault])
            target = folder / f"{self._name('r')}.md"
            self.log("rename", path, target)
            os.replace(path, target)

    def delete(self) -> None:
        notes = self._notes()
        if notes:
            path = self.rng.choice(notes)
            self.log("delete", path)
            path.unlink()

    def move_folder_out_and_in(self) -> None:
        folders = [f for f in self._folders() if f != self.vault and f.name != ".obsidian"]
        if not folders:
            return
        folder = self.rng.choice(folders)
        away = self.outside / self._name("away")
        self.log("move folder out", folder, away)
        os.rename(folder, away)
        write(away / f"{self._name()}.md", note("Made outside"))
        if self.rng.random() < 0.7:  # back, elsewhere; else gone for good
            back = self.vault / self._name("back")
            self.log("  and back in", back)
            os.rename(away, back)

    def chmod_cycle(self) -> None:
        notes = self._notes()
        if notes:
            path = self.rng.choice(notes)
            self.log("chmod 000", path)
            path.chmod(0)
            self.chmodded.append(path)
        for path in self.chmodded[:-1]:
            if path.exists():
                path.chmod(0o644)
        self.chmodded = self.chmodded[-1:]

    def blip(self) -> None:
        notes = self._notes()
        if notes:
            path = self.rng.choice(notes)
            self.log("blip", path)
            (self.locks / path.name).touch()  # unreadable for the daemon...
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("\nwritten while unreadable\n")
        for lock in list(self.locks.iterdir())[:-1]:
            lock.unlink()  # ...and readable again a step later, with no event to say so

    def symlink(self) -> None:
        kind = self.rng.choice(["file", "folder", "loop", "dangling", "outside"])
        link = self.rng.choice(self._folders() or [self.vault]) / self._name("link")
        notes, folders = self._notes(), self._folders()
        self.log(f"symlink {kind}", link)
        if kind == "file" and notes:
            link.with_suffix(".md").symlink_to(self.rng.choice(notes))
        elif kind == "folder" and folders:
            link.symlink_to(self.rng.choice(folders), target_is_directory=True)
        elif kind == "loop":
            link.symlink_to(link.parent, target_is_directory=True)
        elif kind == "dangling":
            link.with_suffix(".md").symlink_to(self.vault / "nowhere.md")
        else:
            write(self.outside / "lib" / "x.md", note("Outside"))
            link.symlink_to(self.outside / "lib", target_is_directory=True)

    def fifo(self) -> None:
        notes = self._notes()
        if notes and self.rng.random() < 0.5:
            path = self.rng.choice(notes)
            path.unlink()
        else:
            path = self.vault / f"{self._name('fifo')}.md"
        self.log("fifo", path)
        os.mkfifo(path)

    def mtime_game(self) -> None:
        notes = self._notes()
        if not notes:
            return
        path = self.rng.choice(notes)
        self.log("mtime game", path)
        before = path.stat()
        data = path.read_bytes()
        with open(path, "r+b") as handle:  # same size, other bytes, mtime put back
            handle.write(bytes(reversed(data)))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    def settle(self) -> None:
        for lock in list(self.locks.iterdir()):
            lock.unlink()
        for path in self.chmodded:
            if path.exists():
                path.chmod(0o644)
        self.chmodded = []


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_soak_converges_in_every_phase(
    seed: int, daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    for i in range(40):
        write(vault / f"f{i % 4}" / f"n{i}.md", note(f"Note {i}", links=f"[[n{(i + 1) % 40}]]"))
    outside, locks = tmp_path / "outside", tmp_path / "locks"
    outside.mkdir()
    locks.mkdir()
    work = Workload(rng, vault, outside, locks)
    run = daemons.start(launcher=("-m", "tests.system.blip", str(locks)))
    with Readers(vault, db_path) as readers:
        for phase in range(PHASES):
            work.ops = []
            for _ in range(OPS_PER_PHASE):
                work.step()
            work.settle()
            try:
                assert_converges(vault, db_path, tmp_path, run=run, timeout=90)
            except AssertionError as exc:
                raise AssertionError(
                    f"seed {seed}, phase {phase}: {exc}\n--- this phase's ops ---\n{work.phase_log()}"
                ) from None
    assert not readers.failures, readers.failures[:5]
    assert readers.answered > 0
    assert run.proc.poll() is None
    assert not run.find("batch failed"), run.log_text()[-3000:]
    shutil.rmtree(outside, ignore_errors=True)


class UnprivilegedWorkload(Workload):
    """The workload for a daemon that runs as an unprivileged user: chmods bite for real, and
    folders too are made unreadable for a while, with folders and notes made under them
    meanwhile (issue 31.1: a sync tool or a `chmod -R` racing the daemon)."""

    def __init__(self, rng: random.Random, vault: Path, outside: Path, locks: Path) -> None:
        super().__init__(rng, vault, outside, locks)
        self.made: list[Path] = []
        """Folders made under a locked folder this phase."""
        self.later: list[Path] = []

    def step(self) -> None:
        ops = [
            self.create, self.create, self.edit, self.edit, self.rename, self.delete,
            self.move_folder_out_and_in, self.chmod_cycle, self.folder_chmod_cycle,
            self.folder_chmod_cycle, self.symlink, self.fifo, self.mtime_game,
        ]  # fmt: skip
        self.rng.choice(ops)()

    def folder_chmod_cycle(self) -> None:
        folders = [f for f in self._folders() if f != self.vault and not f.is_symlink()]
        if folders:
            folder = self.rng.choice(folders)
            folder.chmod(0)
            self.chmodded.append(folder)
            fresh = folder / self._name("made") / self._name("sub")
            self.log("folder chmod 000, made under it", folder, fresh)
            write(fresh / f"{self._name()}.md", note("Made while locked", links="[[n1]]"))
            self.made += [fresh.parent, fresh]
        self._unlock(keep=self.chmodded[-1] if self.chmodded else None)

    def chmod_cycle(self) -> None:
        notes = self._notes()
        if notes:
            self.chmodded.append(self.rng.choice(notes))
            self.log("chmod 000", self.chmodded[-1])
            self.chmodded[-1].chmod(0)
        self._unlock(keep=self.chmodded[-1] if self.chmodded else None)

    def settle(self) -> None:
        self._unlock(keep=None)

    def _unlock(self, keep: Path | None) -> None:
        """Everything locked but ``keep`` readable again, wherever renames took it since."""
        for top, dirs, files in os.walk(self.vault):
            for name in [*dirs, *files]:
                path = Path(top, name)
                if path != keep and not path.is_symlink() and path.lstat().st_mode & 0o777 == 0:
                    path.chmod(0o755 if path.is_dir() else 0o644)
        self.chmodded = [keep] if keep is not None else []

    def later_notes(self) -> None:
        """A note in each folder made under a locked one this phase, and in a few others:
        each must be heard (a folder never watched would not be). Last phase's go, so the
        vault stays small enough for one process (``Daemons.start_unprivileged``)."""
        for path in self.later:
            path.unlink(missing_ok=True)
        folders = self._folders()
        made = {f for f in self.made if f.is_dir() and not f.is_symlink()}
        others = [f for f in folders if f not in made]
        chosen = sorted(made) + self.rng.sample(others, min(10, len(others)))
        self.later = [write(f / f"{self._name('later')}.md", note("Later")) for f in chosen]
        self.made = []


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_soak_with_an_unprivileged_daemon_converges_in_every_phase(
    seed: int, tmp_path: Path
) -> None:
    """The soak with the daemon as ``nobody`` (as root: forked, tests/privileges.py), real
    chmods of notes and folders, and after each phase a note in each folder made under a
    locked one (and ten others), which only the folder's watch, or a retry still due, can find
    (issue 31.1).

    With ``NOTEDEX_SOAK_PHASES=40``, seeds 1 to 6 converge in every phase, in both soaks. Before
    the pairing asked for the same change time (ARCHITECTURE "Freshness", a move by etag),
    seeds 2 and 3 of the first soak and 1 and 3 of this one did not: a note renamed (or its folder moved out and back) and then given a
    same-size rewrite with its mtime put back, in one batch, was paired as a move with its old
    text and never read again. A failing phase prints its operations and what differs."""
    from tests.privileges import chown_tree, unprivileged_base

    base = unprivileged_base()
    vault, db = base / "vault", base / "index.db"
    daemons = Daemons(vault, db, tmp_path)
    try:
        rng = random.Random(seed)
        for i in range(40):
            write(vault / f"f{i % 4}" / f"n{i}.md", note(f"Note {i}", links=f"[[n{(i + 1) % 40}]]"))
        (base / "outside").mkdir()
        chown_tree(base)
        work = UnprivilegedWorkload(rng, vault, base / "outside", base)
        run = daemons.start_unprivileged()
        for phase in range(PHASES):
            work.ops = []
            for _ in range(OPS_PER_PHASE):
                work.step()
            work.settle()
            try:
                assert_converges(vault, db, tmp_path, run=run, timeout=90)
                # Made now, these are heard by their folders' watches, or found by a retry if
                # one is still due; a folder left unwatched after the retries is found by none.
                work.later_notes()
                assert_converges(vault, db, tmp_path, run=run, timeout=60)
            except AssertionError as exc:
                raise AssertionError(
                    f"seed {seed}, phase {phase}: {exc}\n--- this phase's ops ---\n{work.phase_log()}"
                ) from None
        assert run.proc.poll() is None
        assert not run.find("batch failed"), run.log_text()[-3000:]
    finally:
        daemons.kill_all()
        shutil.rmtree(base, ignore_errors=True)
