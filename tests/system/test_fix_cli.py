"""`notedex fix` as a subprocess: exit codes (1: something to fix, without --apply; 0 after
--apply; 2: a usage error), stdout purity under --json, the diff by default."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli, write


def vault_with_a_typo(tmp_path: Path) -> tuple[Path, list[str]]:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Kubernetes.md", "# Kubernetes\n")
    write(vault / "Src.md", "intro\n[[Kubernete|k8s]]\n")
    return vault, ["--vault", str(vault), "--db", str(tmp_path / "index.db")]


def test_the_default_shows_a_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    vault, where = vault_with_a_typo(tmp_path)
    result = run_cli("fix", *where)
    assert result.code == 1, result.stderr
    assert result.stdout.splitlines() == [
        "--- a/Src.md",
        "+++ b/Src.md",
        "@@ -1,2 +1,2 @@",
        " intro",
        "-[[Kubernete|k8s]]",
        "+[[Kubernetes|k8s]]",
    ]
    assert (vault / "Src.md").read_text() == "intro\n[[Kubernete|k8s]]\n"


def test_apply_writes_names_the_file_and_leaves_nothing_to_fix(tmp_path: Path) -> None:
    vault, where = vault_with_a_typo(tmp_path)
    result = run_cli("fix", "--apply", "--json", *where)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["applied"] is True and data["written"] == ["Src.md"] and "diff" not in data
    assert data["edits"] == [
        {
            "source": "Src.md",
            "line": 2,
            "column": 1,
            "code": "broken-link",
            "text": "[[Kubernete|k8s]]",
            "replacement": "[[Kubernetes|k8s]]",
            "reason": "typo",
            "confidence": 0.78,
        }
    ]
    assert (vault / "Src.md").read_text() == "intro\n[[Kubernetes|k8s]]\n"
    again = run_cli("fix", "--json", *where)
    assert again.code == 0 and json.loads(again.stdout)["edits"] == []
    health = run_cli("health", "--json", *where)
    assert health.code == 0 and json.loads(health.stdout)["brokenLinkCount"] == 0
    text = run_cli("fix", "--apply", *where)
    assert (text.code, text.stdout) == (0, "")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    _, where = vault_with_a_typo(tmp_path)
    for bad in (["--min-confidence", "1.5"], ["--only", "orphan"], ["--min-confidence", "x"]):
        result = run_cli("fix", *bad, *where)
        assert result.code == 2, (bad, result.stderr)
        assert result.stdout == "" and "Traceback" not in result.stderr


def test_mv_as_a_subprocess_prints_one_json_document_and_its_exit_codes(tmp_path: Path) -> None:
    vault, where = vault_with_a_typo(tmp_path)
    write(vault / "Other.md", "[[Kubernetes]]\n")
    dry = run_cli("mv", "Kubernetes.md", "Ops/K8s.md", "--dry-run", "--json", *where)
    assert dry.code == 0, dry.stderr
    assert json.loads(dry.stdout)["moves"] == [{"from": "Kubernetes.md", "to": "Ops/K8s.md"}]
    assert (vault / "Kubernetes.md").exists()
    done = run_cli("mv", "Kubernetes.md", "Ops/K8s.md", *where)
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "no new broken link or anchor"
    assert (vault / "Other.md").read_text() == "[[K8s|Kubernetes]]\n"
    refused = run_cli("mv", "Other.md", "Ops/K8s.md", "--json", *where)
    assert (refused.code, refused.stdout) == (2, "")
