"""`capture`: a new note always lands inside the vault, never overwrites, round-trips its title.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    SpecVault,
    run_inprocess,
    write,
)


def _capture(v: SpecVault, text: str) -> dict[str, Any]:
    data: dict[str, Any] = v.json("capture", "-", input=text)
    return data


CAPTURE_TEXTS = [
    "../../x",
    "/etc/passwd",
    "a/../../../b",
    "C:\\Windows\\evil",
    "?!.*/\\:|<>\"'",
    "nul\x00byte",
    "x" * 10_000,
    ".hidden",
    "---\ntitle: injected\n---",
]


@pytest.mark.slow
def test_capture_never_escapes_the_vault(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.db.parent.mkdir(parents=True, exist_ok=True)
    before_outside = set((v.root.parent).iterdir())
    captured_paths = {}
    for text in CAPTURE_TEXTS:
        data = _capture(v, text)
        assert set(data) == {"path", "id"}
        path = data["path"]
        assert not path.startswith("/") and ".." not in path.split("/"), (text, path)
        target = (v.root / path).resolve()
        assert target.is_relative_to(v.root.resolve()), (text, path)
        assert target.is_file(), (text, path)
        assert path.endswith(".md"), (text, path)
        assert not any(part.startswith(".") for part in path.split("/")), (text, path)
        assert len(os.fsencode(target.name)) <= 255, (text, path)
        captured_paths[path] = data["id"]
    assert len(captured_paths) == len(CAPTURE_TEXTS)
    assert set((v.root.parent).iterdir()) == before_outside
    scan = v.scan()
    notes = {n["path"]: n for n in scan["notes"]}
    for path, note_id in captured_paths.items():
        assert (notes[path]["type"], notes[path]["status"], notes[path]["id"]) == (
            "inbox-draft",
            "seed",
            note_id,
        )
    assert scan["errors"] == []


def test_capture_never_overwrites(v: SpecVault) -> None:
    first = _capture(v, "Same text")
    original = (v.root / first["path"]).read_bytes()
    second = _capture(v, "Same text")
    assert first["path"] != second["path"]
    assert (v.root / first["path"]).read_bytes() == original
    # a file that already has the would-be name is left alone too
    third_name = Path(first["path"]).with_name("Other.md")
    write(v.root / third_name, "mine")
    third = _capture(v, "Other")
    assert third["path"] != third_name.as_posix()
    assert (v.root / third_name).read_text() == "mine"


def test_capture_title_round_trips_through_yaml(v: SpecVault) -> None:
    data = _capture(v, 'Idea: "quoted" #tag, yes')
    note = {n["path"]: n for n in v.scan()["notes"]}[data["path"]]
    assert note["title"]
    assert "quoted" in note["title"]


def test_capture_into_a_symlinked_inbox_does_not_leave_the_vault(
    v: SpecVault, tmp_path: Path
) -> None:
    probe = _capture(v, "probe")
    inbox = (v.root / probe["path"]).parent
    (v.root / probe["path"]).unlink()
    inbox.rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    inbox.symlink_to(outside, target_is_directory=True)
    result = v.run("capture", "escape")
    assert not list(outside.iterdir()), "capture wrote outside the vault through a symlink"
    assert result.code != 0 or (
        v.root / json.loads(result.stdout)["path"]
    ).resolve().is_relative_to(v.root.resolve())


def test_capture_of_nfd_text_returns_a_path_that_exists(v: SpecVault) -> None:
    data = _capture(v, unicodedata.normalize("NFD", "Café été"))
    assert (v.root / data["path"]).exists() or any(
        unicodedata.normalize("NFC", p.relative_to(v.root).as_posix()) == data["path"]
        for p in v.root.rglob("*.md")
    )
    assert data["path"] in v.paths()
    assert v.show(data["path"])["path"] == data["path"]


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_capture_of_empty_text_is_refused_or_safe(v: SpecVault, text: str) -> None:
    result = v.run("capture", "-", input=text)
    assert "Traceback" not in result.stderr
    if result.code == 0:
        path = json.loads(result.stdout)["path"]
        name = path.rsplit("/", 1)[-1]
        assert name != ".md" and not name.startswith(".")
    else:
        assert (result.code, result.stdout) == (2, "")


@pytest.mark.parametrize("inbox", ["../escape", "{abs}", "sub/../../escape", ".hidden-inbox"])
def test_capture_inbox_setting_can_not_leave_the_vault(
    v: SpecVault, tmp_path: Path, inbox: str
) -> None:
    v.write("Note.md", "")
    v.db.parent.mkdir(parents=True, exist_ok=True)
    inbox = inbox.format(abs=tmp_path / "abs-inbox")
    config = write(tmp_path / "config.toml", f'inbox = "{inbox}"\n')
    before = {p for p in tmp_path.rglob("*") if v.root not in p.parents}
    result = run_inprocess(
        "capture",
        "probe text",
        "--vault",
        v.root,
        "--db",
        v.db,
        "--json",
        env={"NOTEDEX_CONFIG": str(config)},
    )
    assert "Traceback" not in result.stderr
    after = {p for p in tmp_path.rglob("*") if v.root not in p.parents}
    new_outside = {p for p in after - before if not p.is_relative_to(v.db.parent)}
    assert new_outside == set(), new_outside
    if result.code == 0:
        path = json.loads(result.stdout)["path"]
        target = v.root / path
        assert target.is_file() and target.resolve().is_relative_to(v.root.resolve())
        assert not any(part.startswith(".") for part in path.split("/")), path
    else:
        assert (result.code, result.stdout) == (2, "")


def test_capture_when_the_inbox_is_a_file(v: SpecVault) -> None:
    probe = _capture(v, "probe")
    inbox = (v.root / probe["path"]).parent
    shutil_rm = [p.unlink() for p in inbox.iterdir()]
    assert shutil_rm
    inbox.rmdir()
    inbox.write_text("i am a file")
    result = v.run("capture", "again")
    assert "Traceback" not in result.stderr
    assert inbox.read_text() == "i am a file"
    assert result.code == 2 and result.stdout == ""


def test_capture_does_not_collide_with_an_nfd_twin(v: SpecVault) -> None:
    probe = _capture(v, "probe")
    inbox = (v.root / probe["path"]).parent
    write(inbox / (unicodedata.normalize("NFD", "été") + ".md"), "original\n")
    data = _capture(v, "été")
    scan = v.scan()
    assert scan["errors"] == []
    captured = {n["path"]: n for n in scan["notes"]}[data["path"]]
    assert captured["type"] == "inbox-draft"
    assert len([n for n in scan["notes"] if n["title"] in ("été",)]) == 2
