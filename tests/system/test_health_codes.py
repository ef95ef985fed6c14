"""Issue 33: health's codes, its counts by code, ``--only``, ``--ignore`` (by code and by path
glob), the config file's ``ignore`` list, the ``in-comment`` flag of links in ``%%`` and HTML
comments, and the exit code after the ignores (the CLI as a subprocess, a real vault)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from notedex.codes import CODES, FINDINGS, PROBLEM_CODES
from tests.helpers import run_cli
from tests.indexcheck import make_vault

# One note or file per code health can report here.
FILES: dict[str, str | bytes] = {
    "Hub.md": "[[Lonely]] [[Gone]] [[Target#No such heading]] [[Dead]]\n",
    "Lonely.md": "[[Hub]]\n",
    "Dead.md": "nothing out but [[Dead]]\n",
    "Target.md": "# Real heading\n[[Hub]]\n",
    "Orphan.md": "no links\n",
    "pic.png": b"\x89PNG\r\n\x1a\n",
    "Tags.md": "---\ntags: [ok, '', 'two words', 3]\ntag: x\naliases: {a: 1}\nid: [1, 2]\n"
    "status: a\nstatus: b\n---\n[[Hub]]\n",
    "Alias.md": "---\naliases: [1]\n---\n[[Hub]]\n",
    "Bad.md": "---\ntitle: [unclosed\n---\n[[Hub]]\n",
    "Big.md": "x" * 300 + "\n[[Hub]]\n",
    "Nul.md": b"\x00\x01binary",
    "Latin.md": b"caf\xe9 [[Hub]]\n",
    "A/Dup.md": "[[Hub]]\n",
    "B/Dup.md": "[[Hub]]\n",
    "C/Ask.md": "[[Dup]] [[Hub]]\n",
    "Comments.md": "%% [[Gone in percent]] %%\n"
    "text <!-- [[Gone in html]] --> more\n"
    "%%\n[[Target#Missing in comment]]\n%%\n"
    "[[Hub]]\n",
    "Templates/T.md": "[[Gone in template]]\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("codes")
    root = make_vault(base / "v", FILES)
    db = base / "i.db"
    config = base / "config.toml"
    config.write_text(f"max_bytes = 200\nvault = {json.dumps(str(root))}\n", encoding="utf-8")
    result = run_cli("index", "--full", "--db", db, env={"NOTEDEX_CONFIG": str(config)})
    assert result.code == 0, result.stderr
    return root, db, config


def _health(
    vault: tuple[Path, Path, Path], *args: str, config_extra: str = "", json_out: bool = True
) -> tuple[int, Any, str]:
    _root, db, config = vault
    env_config = config
    if config_extra:
        env_config = config.with_name("config-extra.toml")
        env_config.write_text(config.read_text(encoding="utf-8") + config_extra, encoding="utf-8")
    argv = ["health", "--db", str(db), "--no-refresh", *args]
    if json_out:
        argv.append("--json")
    result = run_cli(*argv, env={"NOTEDEX_CONFIG": str(env_config)})
    data = json.loads(result.stdout) if json_out and result.stdout else result.stdout
    return result.code, data, result.stderr


def _codes(data: dict[str, Any]) -> set[str]:
    return {code for code, count in data["counts"].items() if count}


def test_every_code_is_reported_and_counted(vault: tuple[Path, Path, Path]) -> None:
    code, data, _ = _health(vault)
    assert code == 1
    # Every list and every warning and error code of the registry shows up in this vault.
    expected = set(CODES) - {"skipped-path", "unreadable", "internal-error"}
    assert _codes(data) == expected
    for finding in FINDINGS:
        assert data["counts"][finding.code] == len(data[finding.list_key]), finding.code
    for name in ("warnings", "errors"):
        for item in data[name]:
            assert item["code"] in PROBLEM_CODES, item
    assert list(data["counts"]) == list(CODES)  # every code, in the documented order


def test_the_counts_come_first_in_the_text(vault: tuple[Path, Path, Path]) -> None:
    code, text, _ = _health(vault, json_out=False)
    assert code == 1
    first = text.splitlines()[0]
    _, data, _ = _health(vault)
    expected = ", ".join(f"{code} {n}" for code, n in data["counts"].items() if n)
    assert first == f"By code: {expected}"
    assert "broken-link 4" in first and "in-comment 3" in first and "empty-tag 1" in first


def test_links_in_both_kinds_of_comment_are_flagged(vault: tuple[Path, Path, Path]) -> None:
    _, data, _ = _health(vault)
    flagged = {(b["source"], b["target"], "inComment" in b) for b in data["brokenLinks"]}
    assert all(b.get("inComment", True) is True for b in data["brokenLinks"])
    assert ("Comments.md", "Gone in percent", True) in flagged
    assert ("Comments.md", "Gone in html", True) in flagged
    assert ("Hub.md", "Gone", False) in flagged
    anchors = {(a["source"], a["subpath"], "inComment" in a) for a in data["brokenAnchors"]}
    assert anchors == {
        ("Hub.md", "#No such heading", False),
        ("Comments.md", "#Missing in comment", True),
    }
    assert data["counts"]["in-comment"] == 3
    in_lists = [b for b in (*data["brokenLinks"], *data["brokenAnchors"]) if "inComment" in b]
    assert len(in_lists) == 3


def test_only_keeps_the_codes_named(vault: tuple[Path, Path, Path]) -> None:
    code, data, _ = _health(vault, "--only", "empty-tag", "--only", "orphan")
    assert code == 0  # no broken link or anchor is left
    assert _codes(data) == {"empty-tag", "orphan"}
    assert [w["code"] for w in data["warnings"]] == ["empty-tag"]
    assert data["brokenLinks"] == [] and data["brokenLinkCount"] == 0
    code, data, _ = _health(vault, "--only", "broken-anchor")
    assert code == 1 and _codes(data) == {"broken-anchor", "in-comment"}


def test_only_in_comment_keeps_the_findings_in_comments(vault: tuple[Path, Path, Path]) -> None:
    code, data, _ = _health(vault, "--only", "in-comment")
    assert code == 1
    assert {b["source"] for b in (*data["brokenLinks"], *data["brokenAnchors"])} == {"Comments.md"}
    assert data["orphanNotes"] == [] and data["warnings"] == []


def test_ignore_by_code_and_the_exit_code_after_it(vault: tuple[Path, Path, Path]) -> None:
    code, data, _ = _health(vault, "--ignore", "broken-link")
    assert code == 1  # broken anchors are left
    assert data["brokenLinks"] == [] and data["counts"]["broken-link"] == 0
    code, data, _ = _health(vault, "--ignore", "broken-link", "--ignore", "broken-anchor")
    assert code == 0
    assert data["orphanNotes"] != []


def test_ignore_in_comment_drops_the_links_in_comments(vault: tuple[Path, Path, Path]) -> None:
    _, data, _ = _health(vault, "--ignore", "in-comment")
    sources = {b["source"] for b in (*data["brokenLinks"], *data["brokenAnchors"])}
    assert "Comments.md" not in sources and "Hub.md" in sources
    assert data["counts"]["in-comment"] == 0


def test_ignore_by_path_glob(vault: tuple[Path, Path, Path]) -> None:
    _, data, _ = _health(vault, "--ignore", "Templates/")
    assert "Templates/T.md" not in {b["source"] for b in data["brokenLinks"]}
    _, data, _ = _health(vault, "--ignore", "*.md")
    assert data["brokenLinks"] == [] and data["warnings"] == [] and data["orphanNotes"] == []
    assert [u["path"] for u in data["unusedAttachments"]] == ["pic.png"]
    # A glob and a code together; the exit code counts what is left.
    code, data, _ = _health(
        vault, "--ignore", "Hub.md", "--ignore", "Comments.md", "--ignore", "broken-link"
    )
    assert code == 0 and data["brokenAnchors"] == []


def test_config_ignore_and_its_unknown_codes(vault: tuple[Path, Path, Path]) -> None:
    code, data, stderr = _health(
        vault, config_extra='ignore = ["broken-link", "broken-anchr", "Tags.md"]\n'
    )
    assert "broken-anchr" in stderr and "did you mean broken-anchor?" in stderr
    assert data["brokenLinks"] == []
    assert "Tags.md" not in {w["path"] for w in data["warnings"]}
    assert code == 1  # the anchors are still broken
    code, data, _ = _health(
        vault,
        "--ignore",
        "broken-anchor",
        config_extra='ignore = ["broken-link"]\n',
    )
    assert code == 0  # the command line adds to the config file's list


def test_unknown_code_on_the_command_line_is_a_usage_error(vault: tuple[Path, Path, Path]) -> None:
    code, _, stderr = _health(vault, "--only", "broken-lnk")
    assert code == 2 and "did you mean broken-link?" in stderr
    code, _, stderr = _health(vault, "--ignore", "orphans")
    assert code == 2 and "did you mean orphan?" in stderr


def test_a_bad_config_ignore_is_a_usage_error(vault: tuple[Path, Path, Path]) -> None:
    code, _, stderr = _health(vault, config_extra='ignore = "orphan"\n')
    assert code == 2 and "ignore must be a list" in stderr


def test_unfiltered_json_is_the_same_streamed_or_built(vault: tuple[Path, Path, Path]) -> None:
    """Nothing filtered: the streamed document (a pipe) equals the report built in memory."""
    _, streamed, _ = _health(vault)
    _, paged, _ = _health(vault, "--limit", "100000")
    for key in ("hasMore", "limit", "offset", "total", "totals", "nextOffset"):
        paged.pop(key, None)
    assert streamed == paged
