"""`capture TEXT`: a new note in the inbox folder, never an overwrite, never outside the inbox,
whatever the text holds; the note is indexed like any other.

`capture --json` and its text line, and undecodable bytes in argv and on stdin, run as child
processes; the rest calls the CLI in-process (``run_inprocess``: the same ``main`` and exit codes).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from notedex.edit.capture import capture, title_from_text
from tests.helpers import run_cli, run_inprocess, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

ID = re.compile(r"^\d{8}-\d{6}(-\d+)?$")
MOMENT = dt.datetime(2026, 11, 30, 9, 15, 42, tzinfo=dt.timezone(dt.timedelta(hours=8)))

HOSTILE = [
    pytest.param("../../../etc/passwd", id="dot-dot"),
    pytest.param("/etc/passwd", id="absolute"),
    pytest.param("a/b/c\\d\\e", id="slashes"),
    pytest.param("..", id="only-dot-dot"),
    pytest.param(".hidden note", id="leading-dot"),
    pytest.param("nul\x00inside\x00", id="nul"),
    pytest.param("bell\x07 esc\x1b[31m red \x7f del \x85 nel \x9b csi", id="control-chars"),
    pytest.param(
        "c1\x9b31m \x80\x9f controls \ufffe\uffff \U000e0001 tag \ue000 private",
        id="c1-and-noncharacters",
    ),
    pytest.param("x" * 10_000, id="10000-chars"),
    pytest.param("界" * 10_000, id="10000-cjk-chars"),
    pytest.param("🎉" * 300, id="emoji-4-byte"),
    pytest.param("?!*<>|:\"'`$%&;{}[]#^~.,-_", id="only-punctuation"),
    pytest.param("\n\n   \n  second line is the title\nthird", id="leading-blank-lines"),
    pytest.param("title: injected\n---\nid: evil", id="yaml-injection"),
    pytest.param(
        '"quoted" \\ back \u2028 line \u2029 para \ufeff bom \u202e rtl', id="unicode-separators"
    ),
    pytest.param("e\u0301te\u0301 NFD", id="nfd"),
    pytest.param("CON", id="reserved-windows-name"),
    pytest.param("~/notes $HOME %2e%2e%2f", id="shell-and-percent"),
    pytest.param("\ud800 lone surrogate \udcff", id="lone-surrogates"),
]


def index_notes(vault: Path, db: Path) -> dict[str, Any]:
    result = run_inprocess("scan", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return result.json()


def assert_inside_inbox(vault: Path, inbox: Path, rel: str) -> Path:
    path = vault / rel
    assert path.is_file()
    assert path.resolve().parent == inbox.resolve()
    name = path.name
    assert not name.startswith(".") and name.endswith(".md")
    assert len(os.fsencode(name)) <= 255
    name.encode("utf-8")  # a valid UTF-8 name: the walker indexes it
    return path


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_lands_inside_the_inbox_and_is_indexed(tmp_path: Path, text: str) -> None:
    vault = make_vault(tmp_path / "v", {"keep.md": ""})
    before = sorted(p for p in tmp_path.rglob("*") if "v" not in p.relative_to(tmp_path).parts[:1])
    captured = capture(vault, "00_Inbox", text, now=MOMENT)
    path = assert_inside_inbox(vault, vault / "00_Inbox", captured.path)
    assert captured.id == "20261130-091542"
    after = sorted(p for p in tmp_path.rglob("*") if "v" not in p.relative_to(tmp_path).parts[:1])
    assert after == before  # nothing written outside the vault
    raw = path.read_bytes()
    assert b"\x00" not in raw
    raw.decode("utf-8")
    data = index_notes(vault, tmp_path / "i.db")
    assert data["errors"] == []  # the frontmatter we wrote parses, whatever the text held
    note = next(n for n in data["notes"] if n["path"] == captured.path)
    assert note["id"] == captured.id
    assert note["type"] == "inbox-draft" and note["status"] == "seed"
    assert note["title"] and "\n" not in note["title"]
    assert note["title"] == title_from_text(text)  # the first line as written; YAML quoted it


def test_capture_writes_the_promised_frontmatter_and_body(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    captured = capture(vault, "00_Inbox", "Idea: try PARA\n\nmore [[Home]] #idea\n", now=MOMENT)
    assert captured.path == "00_Inbox/Idea try PARA.md"
    text = (vault / captured.path).read_text(encoding="utf-8")
    assert text == (
        "---\n"
        "id: 20261130-091542\n"
        "title: 'Idea: try PARA'\n"
        "type: inbox-draft\n"
        "status: seed\n"
        "created: '2026-11-30T09:15:42+08:00'\n"
        "---\n\n"
        "Idea: try PARA\n\nmore [[Home]] #idea\n"
    )
    db = tmp_path / "i.db"
    show = run_inprocess("show", captured.path, "--json", "--vault", vault, "--db", db).json()
    assert show["tags"] == ["idea"] and show["properties"]["created"] == "2026-11-30T09:15:42+08:00"
    assert show["links"][0]["key"] == "Home"


def test_capture_never_overwrites(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"00_Inbox/Same.md": "precious\n"})
    first = capture(vault, "00_Inbox", "Same", now=MOMENT)
    second = capture(vault, "00_Inbox", "Same", now=MOMENT)
    assert (first.path, second.path) == ("00_Inbox/Same 2.md", "00_Inbox/Same 3.md")
    assert (vault / "00_Inbox/Same.md").read_text() == "precious\n"
    # A dangling symlink with the wanted name is not followed either.
    (vault / "00_Inbox" / "Link.md").symlink_to(tmp_path / "outside.md")
    third = capture(vault, "00_Inbox", "Link", now=MOMENT)
    assert third.path == "00_Inbox/Link 2.md"
    assert not (tmp_path / "outside.md").exists()


def test_capture_cli_json_and_text(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"Home.md": ""})
    db = tmp_path / "i.db"
    result = run_cli("capture", "Look into spf13/cobra", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"path", "id"}
    assert data["path"] == "00_Inbox/Look into spf13 cobra.md"
    assert ID.match(data["id"])
    assert (vault / data["path"]).is_file()
    # The index already knows the new note (capture refreshes it).
    scan = run_cli("scan", "--json", "--no-refresh", "--vault", vault, "--db", db).json()
    assert data["path"] in {n["path"] for n in scan["notes"]}
    text = run_cli("capture", "Look into spf13/cobra", "--vault", vault, "--db", db)
    assert text.code == 0
    assert "00_Inbox/Look into spf13 cobra 2.md" in text.stdout
    assert re.search(r"\b\d{8}-\d{6}\b", text.stdout)


def test_capture_reads_stdin_with_dash_and_keeps_nul_out(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    result = run_inprocess(
        "capture",
        "-",
        "--json",
        "--vault",
        vault,
        "--db",
        tmp_path / "i.db",
        input="from\x00stdin ../../x\nbody line\n",
    )
    assert result.code == 0, result.stderr
    path = vault / result.json()["path"]
    assert path.parent == vault / "00_Inbox"
    assert path.read_text(encoding="utf-8").endswith("fromstdin ../../x\nbody line\n")


def test_capture_of_undecodable_argv_bytes(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 (os.fsdecode surrogates) give a valid UTF-8 file name that the
    walker indexes, and a JSON answer that is valid UTF-8."""
    import subprocess
    import sys

    vault = make_vault(tmp_path / "v", {})
    db = tmp_path / "i.db"
    proc = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"notedex",
            b"capture",
            b"bad\xff\xfename",
            b"--json",
            b"--vault",
            os.fsencode(vault),
            b"--db",
            os.fsencode(db),
        ],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.decode("utf-8"))
    assert data["path"] == "00_Inbox/bad\ufffd\ufffdname.md"
    assert data["path"] in {n["path"] for n in index_notes(vault, db)["notes"]}


def test_empty_text_is_a_usage_error(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    for text in ("", "   \n\t"):
        result = run_inprocess(
            "capture", text, "--json", "--vault", vault, "--db", tmp_path / "i.db"
        )
        assert (result.code, result.stdout) == (2, "")
    assert not (vault / "00_Inbox").exists()


def test_inbox_folder_is_configurable_and_stays_in_the_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    config = tmp_path / "config.toml"
    env = {"NOTEDEX_CONFIG": str(config)}
    config.write_text('inbox = "Inbox/Captures"\n', encoding="utf-8")
    result = run_inprocess(
        "capture", "hello", "--json", "--vault", vault, "--db", tmp_path / "i.db", env=env
    )
    assert result.code == 0, result.stderr
    assert result.json()["path"] == "Inbox/Captures/hello.md"
    # ".." segments cannot climb out of the vault, and are not silently dropped (issue 34):
    # the capture is refused with what to give instead, and nothing is written anywhere.
    for climbing in ("../../escape", "sub/../../escape", "../x"):
        config.write_text(f'inbox = "{climbing}"\n', encoding="utf-8")
        result = run_inprocess(
            "capture", "hi", "--json", "--vault", vault, "--db", tmp_path / "i.db", env=env
        )
        assert (result.code, result.stdout) == (2, ""), result
        assert f"the inbox folder {climbing!r} leads outside the vault" in result.stderr
        assert "relative to the vault" in result.stderr
    assert not (tmp_path / "escape").exists() and not (vault / "escape").exists()
    assert not (vault / "x").exists()


def test_an_inbox_that_leads_outside_or_is_hidden_is_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Out").symlink_to(outside, target_is_directory=True)
    config = tmp_path / "config.toml"
    env = {"NOTEDEX_CONFIG": str(config)}
    for inbox in ("Out", "Out/deeper/still", ".inbox", "Notes/.drafts"):
        config.write_text(f'inbox = "{inbox}"\n', encoding="utf-8")
        result = run_inprocess(
            "capture", "x", "--json", "--vault", vault, "--db", tmp_path / "i.db", env=env
        )
        assert (result.code, result.stdout) == (2, ""), inbox
        assert "Traceback" not in result.stderr
    assert list(outside.iterdir()) == []  # not even a folder was made there
    assert not (vault / ".inbox").exists()


def test_captures_in_the_same_second_get_distinct_files(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    paths = {capture(vault, "00_Inbox", "same idea", now=MOMENT).path for _ in range(5)}
    assert len(paths) == 5
    write(vault / "00_Inbox" / "same idea 7.md", "taken\n")
    assert capture(vault, "00_Inbox", "same idea", now=MOMENT).path == "00_Inbox/same idea 6.md"


def test_a_name_taken_by_an_nfd_twin_counts_as_taken(tmp_path: Path) -> None:
    """SEMANTICS 1: `été.md` written NFD (macOS) and NFC are one vault path; capture must not
    create the NFC twin, which the walker would skip."""
    import unicodedata

    vault = make_vault(tmp_path / "v", {})
    write(vault / "00_Inbox" / (unicodedata.normalize("NFD", "été") + ".md"), "original\n")
    captured = capture(vault, "00_Inbox", "été", now=MOMENT)
    assert captured.path == "00_Inbox/été 2.md"
    data = index_notes(vault, tmp_path / "i.db")
    assert data["errors"] == []
    assert {n["path"]: n["type"] for n in data["notes"]} == {
        "00_Inbox/été.md": None,
        "00_Inbox/été 2.md": "inbox-draft",
    }


def test_capture_reports_its_note_even_when_the_index_cannot_be_updated(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    broken = tmp_path / "not-an-index.db"
    broken.write_text("garbage\n" * 10, encoding="utf-8")
    result = run_inprocess("capture", "keep me", "--json", "--vault", vault, "--db", broken)
    assert result.code == 0
    assert json.loads(result.stdout)["path"] == "00_Inbox/keep me.md"
    assert (vault / "00_Inbox" / "keep me.md").is_file()
    assert "not updated" in result.stderr


def test_capture_from_stdin_with_undecodable_bytes(tmp_path: Path) -> None:
    import subprocess
    import sys

    vault = make_vault(tmp_path / "v", {})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "notedex",
            "capture",
            "-",
            "--json",
            "--vault",
            str(vault),
            "--db",
            str(tmp_path / "i.db"),
        ],
        input=b"caf\xe9 \xff latin-1\nbody \x00\n",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.decode("utf-8"))
    assert data["path"] == "00_Inbox/caf\ufffd \ufffd latin-1.md"
    assert index_notes(vault, tmp_path / "i.db")["errors"] == []


def test_the_title_keeps_the_text_as_written_and_only_the_name_is_made_safe(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path / "v", {})
    db = tmp_path / "i.db"
    text = 'Re: a/b #1 [[x]] "quoted" 50% \u00e9t\u00e9 ? yes\nmore'
    data = run_inprocess("capture", text, "--json", "--vault", vault, "--db", db).json()
    assert data["path"] == "00_Inbox/Re a b 1 x quoted 50 \u00e9t\u00e9 yes.md"
    show = run_inprocess("show", data["id"], "--json", "--vault", vault, "--db", db).json()
    assert show["path"] == data["path"]  # show finds a note by its id
    assert (
        show["title"]
        == show["frontmatterTitle"]
        == 'Re: a/b #1 [[x]] "quoted" 50% \u00e9t\u00e9 ? yes'
    )
    raw = (vault / data["path"]).read_bytes()
    assert raw.endswith(b"more\n") and not raw.endswith(b"\n\n")  # one final newline


@pytest.mark.slow
def test_quick_captures_get_distinct_ids(tmp_path: Path) -> None:
    """Three captures in a row (one second, or nearly): three ids, each found by `show`."""
    vault = make_vault(tmp_path / "v", {})
    db = tmp_path / "i.db"
    ids = []
    for _ in range(3):
        result = run_inprocess("capture", "same idea", "--json", "--vault", vault, "--db", db)
        assert result.code == 0, result.stderr
        ids.append(result.json()["id"])
    assert len(set(ids)) == 3 and all(ID.match(i) for i in ids)
    for note_id in ids:
        assert (
            run_inprocess("show", note_id, "--json", "--vault", vault, "--db", db).json()["id"]
            == note_id
        )


def test_an_id_taken_in_that_second_gets_a_suffix(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {})
    ids = [capture(vault, "00_Inbox", f"idea {i}", now=MOMENT).id for i in range(3)]
    assert ids == ["20261130-091542", "20261130-091542-2", "20261130-091542-3"]
    # An id the index knows elsewhere in the vault counts as taken too.
    elsewhere = capture(
        vault, "Other", "idea", now=MOMENT, indexed_ids=lambda prefix: [prefix, prefix + "-2"]
    )
    assert elsewhere.id == "20261130-091542-3"


def test_captures_at_once_never_share_an_id(tmp_path: Path) -> None:
    """Threads capturing in the same second: the inbox lock makes them take turns."""
    import threading

    vault = make_vault(tmp_path / "v", {})
    ids: list[str] = []

    def one(i: int) -> None:
        ids.append(capture(vault, "00_Inbox", f"idea {i}", now=MOMENT).id)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids) == sorted(
        ["20261130-091542"] + [f"20261130-091542-{n}" for n in range(2, 9)]
    )
