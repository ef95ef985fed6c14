"""`notedex base` as a subprocess: one JSON document on stdout, --paths and -0, and exit 2 with
a clear message for every user error (SEMANTICS 15)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bases" / "vault"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("basecli") / "vault"
    shutil.copytree(EXAMPLES, root)
    (root / ".obsidian").mkdir(exist_ok=True)
    (root / "bad.base").write_text("filters: [unclosed\n", encoding="utf-8")
    (root / "scalar.base").write_text("just text\n", encoding="utf-8")
    (root / "Plain.md").write_text("# no base here\n", encoding="utf-8")
    return root, root.parent / "index.db"


def base(vault: tuple[Path, Path], *args: str | Path) -> tuple[int, str, str]:
    result = run_cli("base", *args, "--vault", vault[0], "--db", vault[1])
    assert "Traceback" not in result.stderr, result.stderr
    return result.code, result.stdout, result.stderr


def test_json_is_one_document(vault: tuple[Path, Path]) -> None:
    code, out, _ = base(vault, "groupby.base", "--json")
    assert code == 0
    data = json.loads(out)
    assert sorted(data) == ["base", "columns", "groups", "rows", "summaries", "view"]


def test_paths_and_nul(vault: tuple[Path, Path]) -> None:
    code, out, _ = base(vault, "or-not.base", "--paths")
    assert (code, out) == (
        0,
        "Books/Neuromancer.md\nProjects/Roadmap.md\nProjects/Website.md\n",
    )
    code, out, _ = base(vault, "or-not.base", "-0")
    assert out.split("\0")[:-1] == [
        "Books/Neuromancer.md",
        "Projects/Roadmap.md",
        "Projects/Website.md",
    ]


def test_a_file_outside_the_vault_runs_over_the_vault(
    vault: tuple[Path, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.base"
    outside.write_text("filters: file.hasTag('web')\n", encoding="utf-8")
    code, out, _ = base(vault, outside, "--paths")
    assert (code, out) == (0, "Projects/Website.md\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nowhere.base",), "no such base file"),
        (("bad.base",), "invalid YAML"),
        (("scalar.base",), "a base is a mapping"),
        (("Plain.md",), "no ```base block"),
        (("books.base", "--view", "Missing"), "no view named 'Missing'"),
        (("books.base", "--json", "--paths"), "not both"),
        ((), "name a .base file"),
    ],
)
def test_user_errors_exit_2(vault: tuple[Path, Path], args: tuple[str, ...], message: str) -> None:
    code, out, err = base(vault, *args)
    assert code == 2, (out, err)
    assert message in err
    assert out == ""


def test_list_reports_a_bad_base_without_failing(vault: tuple[Path, Path]) -> None:
    code, out, _ = base(vault, "--list", "--json")
    assert code == 0
    listed = {b["path"]: b for b in json.loads(out)["bases"]}
    assert listed["bad.base"]["views"] == [] and "invalid YAML" in listed["bad.base"]["error"]
    assert listed["groupby.base"]["views"] == ["By status"]


def test_check_exit_codes(vault: tuple[Path, Path]) -> None:
    assert base(vault, "books.base", "--check")[0] == 0
    refused = vault[0] / "refused.base"
    refused.write_text("filters: 'image(cover)'\n", encoding="utf-8")
    code, out, _ = base(vault, refused, "--check")
    assert code == 1 and "refuses: image()" in out
