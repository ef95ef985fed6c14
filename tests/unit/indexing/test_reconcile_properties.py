"""Incremental equals full: after any sequence of vault changes, the incrementally maintained
index holds exactly the rows a fresh full index of the same vault holds.

Two incremental paths are checked against a fresh ``IndexWriter`` + ``reconcile`` each time:
``reconcile`` on a long-lived writer (``notedex index``, the refresh before a query, the daemon's
startup) and ``apply_paths`` with the touched paths as hints (the daemon's event path). Notes
are created, edited, renamed (also onto an existing note), deleted and moved with their folder;
attachments come and go; notes hold tasks (SEMANTICS 13). Names collide on purpose (``Dup``/``dup``, same stem in several
folders), one file has an NFD name, and links take every form that resolution distinguishes.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index
from tests.indexcheck import fts_problems, index_diff

# Hundreds of fresh indexes: on a RAM-backed folder when there is one, SQLite's fsyncs are free.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

NAMES = ("Alpha", "beta", "Dup", "dup", "Gamma note", "v1.2", "日記", "Cafe\u0301", "pic")
FOLDERS = ("", "A", "A/B", "C", "Été")
NEW_FOLDERS = ("Moved", "C/Inner", "Z/deep")
ATTACHMENTS = ("pic.png", "Dup.png", "doc.pdf")
TARGETS = (
    "Alpha",
    "alpha",
    "beta",
    "Dup",
    "dup",
    "DUP",
    "Gamma note",
    "v1.2",
    "日記",
    "Café",
    "CAFÉ",
    "pic",
    "pic.png",
    "Dup.png",
    "doc.pdf",
    "A/Dup",
    "A/B/Dup",
    "C/Dup",
    "B/Dup",
    "wrong/Alpha",
    "./Alpha",
    "../Alpha",
    "/A/beta",
    "Moved/Dup",
    "Home",
    "Missing",
)

SEED: dict[str, str | bytes] = {
    "Alpha.md": "---\naliases: [AI]\ntags: [a]\n---\n[[Dup]] [[beta|B]] ![[pic.png]]\n",
    "A/Dup.md": "[[../Alpha]] [[Missing]]\n- [ ] seed task #a 📅 2026-12-01\n",
    "C/Dup.md": "[[A/Dup]] [[Café]]\n",
    "A/B/beta.md": "[[Dup]] [x](../../Alpha.md)\n",
    "Été/Cafe\u0301.md": "[[日記]]\n",
    "C/pic.png": b"png",
}

link_text = st.builds(
    lambda target, form, display: {
        "wiki": f"[[{target}]]",
        "display": f"[[{target}|{display}]]",
        "heading": f"[[{target}#Part]]",
        "embed": f"![[{target}]]",
        "md": f"[{display}]({target.replace(' ', '%20')}.md)",
        "self": "[[#Part]]",
    }[form],
    st.sampled_from(TARGETS),
    st.sampled_from(("wiki", "display", "heading", "embed", "md", "self")),
    st.sampled_from(("the text", "別名", "x")),
)

# SEMANTICS 13: tasks are a note's rows like its links; moves and deletes carry them.
TASK_LINES = (
    "- [ ] open 📅 2026-12-01",
    "- [x] done #a ✅ 2026-01-02",
    "  * [/] nested [due:: 2026-03-04]",
    "> - [-] quoted ❌ 2026-01-01",
    "1. [ ] 買牛奶 (scheduled:: 2026-05-06)",
)

note_text = st.builds(
    lambda links, tags, alias, fm_link, title, tasks: (
        (
            (
                "---\n"
                + (f"title: {title}\n" if title else "")
                + (f"aliases: [{alias}]\n" if alias else "")
                + (f'up: "[[{fm_link}]]"\n' if fm_link else "")
                + "---\n"
            )
            if (title or alias or fm_link)
            else ""
        )
        + "# Part\n\n"
        + " ".join(links)
        + "\n"
        + " ".join(f"#{t}" for t in tags)
        + "\n"
        + "".join(f"\n{task}\n" for task in tasks)
    ),
    st.lists(link_text, max_size=5),
    st.lists(st.sampled_from(("a", "B", "a/b", "日本")), max_size=2),
    st.sampled_from((None, "AI", "別名")),
    st.sampled_from((None, "Alpha", "Dup")),
    st.sampled_from((None, "A title", "")),
    st.lists(st.sampled_from(TASK_LINES), max_size=2),
)


class VaultChanges(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="notedex-incremental-", dir=FAST_TMP))
        self.vault = self.base / "vault"
        (self.vault / ".obsidian").mkdir(parents=True)
        # A note that is never removed: an empty vault is (rightly) never reconciled to empty.
        (self.vault / "Home.md").write_text("[[Alpha]] [[Dup]]\n", encoding="utf-8")
        for rel, text in SEED.items():
            path = self.vault / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        self.by_reconcile = IndexWriter(self.base / "reconcile.db", self.vault, workers=1)
        self.by_hints = IndexWriter(self.base / "hints.db", self.vault, workers=1)
        reconcile(self.by_reconcile)
        reconcile(self.by_hints)
        self.hints: list[str] = []

    # -- what is on disk -----------------------------------------------------------------

    def files(self, suffix: tuple[str, ...]) -> list[str]:
        found = []
        for dirpath, dirnames, names in os.walk(self.vault):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(names):
                rel = Path(dirpath, name).relative_to(self.vault).as_posix()
                if rel.lower().endswith(suffix) and rel != "Home.md":
                    found.append(rel)
        return found

    def notes(self) -> list[str]:
        return self.files((".md",))

    def attachments(self) -> list[str]:
        return self.files((".png", ".pdf"))

    def folders(self) -> list[str]:
        found = []
        for dirpath, dirnames, _names in os.walk(self.vault):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = Path(dirpath).relative_to(self.vault).as_posix()
            if rel != ".":
                found.append(rel)
        return found

    def place(self, folder: str, name: str, suffix: str = ".md") -> str:
        return f"{folder}/{name}{suffix}" if folder else f"{name}{suffix}"

    def _write(self, rel: str, text: str | bytes) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8") if isinstance(text, str) else text
        path.write_bytes(data)
        self.hints.append(rel)

    # -- rules -----------------------------------------------------------------------------

    @rule(folder=st.sampled_from(FOLDERS), name=st.sampled_from(NAMES), text=note_text)
    def create_or_overwrite_note(self, folder: str, name: str, text: str) -> None:
        self._write(self.place(folder, name), text)

    @precondition(lambda self: self.notes())
    @rule(data=st.data(), text=note_text)
    def edit_note(self, data: st.DataObject, text: str) -> None:
        self._write(data.draw(st.sampled_from(self.notes())), text)

    @rule(text=note_text)
    def edit_home(self, text: str) -> None:
        self._write("Home.md", text)

    @precondition(lambda self: self.notes())
    @rule(data=st.data(), folder=st.sampled_from(FOLDERS), name=st.sampled_from(NAMES))
    def rename_note(self, data: st.DataObject, folder: str, name: str) -> None:
        source = data.draw(st.sampled_from(self.notes()))
        target = self.place(folder, name)
        if target == source:
            return
        (self.vault / target).parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.vault / source, self.vault / target)  # may replace an existing note
        self.hints += [source, target]

    @precondition(lambda self: self.notes())
    @rule(data=st.data())
    def delete_note(self, data: st.DataObject) -> None:
        victim = data.draw(st.sampled_from(self.notes()))
        (self.vault / victim).unlink()
        self.hints.append(victim)

    @precondition(lambda self: self.folders())
    @rule(data=st.data(), new=st.sampled_from(NEW_FOLDERS))
    def move_folder(self, data: st.DataObject, new: str) -> None:
        source = data.draw(st.sampled_from(self.folders()))
        if (self.vault / new).exists() or new == source or new.startswith(source + "/"):
            return
        (self.vault / new).parent.mkdir(parents=True, exist_ok=True)
        (self.vault / source).rename(self.vault / new)
        self.hints += [source, new]

    @precondition(lambda self: self.folders())
    @rule(data=st.data())
    def delete_folder(self, data: st.DataObject) -> None:
        victim = data.draw(st.sampled_from(self.folders()))
        shutil.rmtree(self.vault / victim)
        self.hints.append(victim)

    @rule(folder=st.sampled_from(FOLDERS), name=st.sampled_from(ATTACHMENTS))
    def add_attachment(self, folder: str, name: str) -> None:
        self._write(f"{folder}/{name}" if folder else name, b"\x89PNG" + name.encode())

    @precondition(lambda self: self.attachments())
    @rule(data=st.data())
    def delete_attachment(self, data: st.DataObject) -> None:
        victim = data.draw(st.sampled_from(self.attachments()))
        (self.vault / victim).unlink()
        self.hints.append(victim)

    @rule()
    def sync(self) -> None:
        """Bring both incremental indexes up to date and compare them with a fresh one."""
        reconcile(self.by_reconcile)
        apply_paths(self.by_hints, self.hints)
        self.hints = []
        expected = fresh_full_index(self.vault, self.base)
        for name, writer in (("reconcile", self.by_reconcile), ("apply_paths", self.by_hints)):
            actual = dump_index(writer.db_path)
            assert actual == expected, (
                f"{name} differs from a full index:\n{index_diff(actual, expected)}"
            )

    @invariant()
    def sync_every_few_changes(self) -> None:
        # Batches of several changes in one reconcile (a rename is a delete plus a create).
        if len(self.hints) >= 4:
            self.sync()

    @invariant()
    def nfd_names_stay_on_disk_as_written(self) -> None:
        for rel in self.notes():
            name = rel.rpartition("/")[2]
            if name.startswith("Cafe"):
                assert unicodedata.is_normalized("NFD", name)

    def teardown(self) -> None:
        try:
            self.sync()
            for writer in (self.by_reconcile, self.by_hints):
                assert fts_problems(writer.db_path) == []
            # A new writer (the next `notedex index`) finds nothing to do.
            self.by_reconcile.close()
            with IndexWriter(self.base / "reconcile.db", self.vault, workers=1) as again:
                report = reconcile(again)
                assert (report.added, report.changed, report.removed) == (0, 0, 0)
        finally:
            self.by_reconcile.close()
            self.by_hints.close()
            shutil.rmtree(self.base, ignore_errors=True)


VaultChanges.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# About three minutes on this project's 2-core machine: most of the whole suite.
TestVaultChanges = pytest.mark.slow(VaultChanges.TestCase)


@pytest.mark.slow
def test_a_long_seeded_sequence_on_a_bigger_vault(tmp_path: Path) -> None:
    """200 seeded random operations on ~120 notes, synced every few steps: incremental == full."""
    rng = random.Random(20261130)
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    folders = ["", "p", "p/q", "r", "s/t"]
    names = [f"N{i}" for i in range(40)] + ["dup", "Dup", "x.y"]

    def text() -> str:
        parts = []
        for _ in range(rng.randint(0, 6)):
            target = rng.choice([*names, "p/N1", "q/N2", "missing", "../N3", "./N4", "pic.png"])
            parts.append(
                rng.choice(["[[{}]]", "![[{}]]", "[[{}|alias]]", "[[{}#h]]"]).format(target)
            )
        return "---\ntags: [t" + str(rng.randint(0, 3)) + "]\n---\n" + " ".join(parts) + "\n"

    def rel(folder: str, name: str) -> str:
        return f"{folder}/{name}.md" if folder else f"{name}.md"

    for _ in range(120):
        path = vault / rel(rng.choice(folders), rng.choice(names))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(), encoding="utf-8")
    (vault / "pic.png").write_bytes(b"png")
    (vault / "keep.md").write_text("anchor\n", encoding="utf-8")

    with IndexWriter(tmp_path / "inc.db", vault, workers=1) as writer:
        reconcile(writer)
        for step in range(200):
            notes = sorted(p for p in vault.rglob("*.md") if p.name != "keep.md")
            op = rng.choice(["create", "edit", "rename", "delete", "move"])
            if op == "create" or not notes:
                path = vault / rel(rng.choice(folders), rng.choice(names))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text(), encoding="utf-8")
            elif op == "edit":
                rng.choice(notes).write_text(text(), encoding="utf-8")
            elif op == "rename":
                target = vault / rel(rng.choice(folders), rng.choice(names))
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(rng.choice(notes), target)
            elif op == "delete":
                rng.choice(notes).unlink()
            else:
                dirs = sorted(
                    d for d in vault.rglob("*") if d.is_dir() and ".obsidian" not in d.parts
                )
                if dirs:
                    source = rng.choice(dirs)
                    dest = vault / f"m{step}"
                    source.rename(dest)
            if step % 10 == 9:
                reconcile(writer)
                actual, expected = dump_index(writer.db_path), fresh_full_index(vault, tmp_path)
                assert actual == expected, f"after step {step}:\n{index_diff(actual, expected)}"
        reconcile(writer)
    assert dump_index(tmp_path / "inc.db") == fresh_full_index(vault, tmp_path)
