"""edit.fix over a real index: the plan, and a file edited between the plan and the write is
never overwritten."""

from __future__ import annotations

from pathlib import Path

from notedex.edit.fix import apply, plan_fixes
from notedex.edit.safewrite import VaultWriter
from notedex.store.connect import connect_readonly
from tests.helpers import cli_json, write


def indexed(tmp_path: Path) -> tuple[Path, Path]:
    vault, db = tmp_path / "vault", tmp_path / "index.db"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Kubernetes.md", "# Kubernetes\n## Install steps\n")
    write(vault / "A.md", "[[Kubernete]] and [[Kubernetes#Instal steps]]\n")
    write(vault / "B.md", "[[Kubernetess|k8s]]\n")
    cli_json(vault, db, "index")
    return vault, db


def test_the_plan_edits_each_file_once(tmp_path: Path) -> None:
    vault, db = indexed(tmp_path)
    with connect_readonly(db) as conn:
        plan = plan_fixes(conn, str(vault))
    assert [f.source for f in plan.files] == ["A.md", "B.md"]
    assert [(e.source, e.replacement) for e in plan.edits] == [
        ("A.md", "[[Kubernetes|Kubernete]]"),
        ("A.md", "[[Kubernetes#Install steps]]"),
        ("B.md", "[[Kubernetes|k8s]]"),
    ]
    assert "+[[Kubernetes|Kubernete]] and [[Kubernetes#Install steps]]" in plan.diff()
    assert (vault / "A.md").read_text() == "[[Kubernete]] and [[Kubernetes#Instal steps]]\n"


def test_a_file_edited_between_the_plan_and_the_write_is_never_overwritten(
    tmp_path: Path,
) -> None:
    vault, db = indexed(tmp_path)
    with connect_readonly(db) as conn:
        plan = plan_fixes(conn, str(vault))
    (vault / "A.md").write_text("[[Kubernete]] and the user's new line\n")
    written, changed = apply(plan, VaultWriter(vault))
    assert written == ["B.md"]
    assert changed == [{"path": "A.md", "reason": "changed since it was read"}]
    assert (vault / "A.md").read_text() == "[[Kubernete]] and the user's new line\n"
    assert (vault / "B.md").read_text() == "[[Kubernetes|k8s]]\n"


def test_a_stale_index_gives_no_edit(tmp_path: Path) -> None:
    """The index saw the link elsewhere: the text at its line and column is checked."""
    vault, db = indexed(tmp_path)
    (vault / "B.md").write_text("moved down\n[[Kubernetess|k8s]]\n")
    with connect_readonly(db) as conn:
        plan = plan_fixes(conn, str(vault))
    assert [f.source for f in plan.files] == ["A.md"]
    assert [(s["source"], s["line"]) for s in plan.skipped] == [("B.md", 1)]
