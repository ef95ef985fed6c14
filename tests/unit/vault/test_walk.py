"""The vault walk (SEMANTICS 1) against real folders under tmp_path."""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path

import pytest

from notedex.errors import NotedexError
from notedex.vault.model import VaultFile, WalkProblem
from notedex.vault.walk import (
    OUTSIDE_MESSAGE,
    VaultNotFound,
    is_excluded,
    load_excluded_filters,
    walk_vault,
)
from tests.privileges import lockout

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


def write(root: Path, relative: str, text: str = "x") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths(root: Path) -> list[str]:
    return [f.path for f in walk_vault(root).files]


def by_path(root: Path) -> dict[str, VaultFile]:
    return {f.path: f for f in walk_vault(root).files}


# --- which files count ---------------------------------------------------------------------


def test_dot_folders_and_dot_files_are_skipped(tmp_path: Path) -> None:
    for relative in [
        ".obsidian/app.json",
        ".git/HEAD",
        ".trash/old.md",
        ".hidden.md",
        "sub/.hidden.md",
        "sub/.cache/x.md",
        "sub/kept.md",
        "Note.md",
    ]:
        write(tmp_path, relative)
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["Note.md", "sub/kept.md"]
    assert result.problems == ()
    assert result.unreadable_dirs == ()


def test_attachments_are_kept_and_only_md_is_a_note(tmp_path: Path) -> None:
    for relative in ["Note.md", "Upper.MD", "img/pic.png", "doc.pdf", "board.canvas", "Makefile"]:
        write(tmp_path, relative)
    files = by_path(tmp_path)
    assert sorted(files) == [
        "Makefile",
        "Note.md",
        "Upper.MD",
        "board.canvas",
        "doc.pdf",
        "img/pic.png",
    ]
    assert {p for p, f in files.items() if f.is_note} == {"Note.md", "Upper.MD"}


def test_empty_vault_is_empty_not_an_error(tmp_path: Path) -> None:
    result = walk_vault(tmp_path)
    assert (result.files, result.problems, result.unreadable_dirs) == ((), (), ())


def test_result_is_sorted_and_carries_stat_of_each_file(tmp_path: Path) -> None:
    for relative in ["b.md", "a/z.md", "a b.md", "A.md", "a/a.png"]:
        write(tmp_path, relative, text=relative * 3)
    result = walk_vault(tmp_path)
    listed = [f.path for f in result.files]
    assert listed == sorted(listed)
    for vault_file in result.files:
        info = os.stat(vault_file.disk_path)
        assert os.path.isabs(vault_file.disk_path)
        assert (vault_file.size, vault_file.mtime_ns, vault_file.inode) == (
            info.st_size,
            info.st_mtime_ns,
            info.st_ino,
        )


def test_accepts_str_and_relative_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "vault/n.md")
    monkeypatch.chdir(tmp_path)
    files = walk_vault("vault").files
    assert [f.path for f in files] == ["n.md"]
    assert files[0].disk_path == str(tmp_path / "vault" / "n.md")


# --- the root --------------------------------------------------------------------------------


def test_missing_root_raises_vault_not_found(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound) as caught:
        walk_vault(tmp_path / "nope")
    assert isinstance(caught.value, NotedexError)
    assert caught.value.exit_code == 2
    assert caught.value.root == str(tmp_path / "nope")


def test_root_that_is_a_file_raises_vault_not_found(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound, match="not a folder"):
        walk_vault(write(tmp_path, "file.md"))


# --- names -----------------------------------------------------------------------------------


def test_nfd_name_gives_nfc_path_and_an_openable_disk_path(tmp_path: Path) -> None:
    nfd_name = unicodedata.normalize("NFD", "Café été.md")
    (tmp_path / nfd_name).write_text("bonjour", encoding="utf-8")
    if nfd_name not in os.listdir(tmp_path):
        pytest.skip("this file system normalises names itself")
    (vault_file,) = walk_vault(tmp_path).files
    assert vault_file.path == unicodedata.normalize("NFC", "Café été.md")
    assert vault_file.path != nfd_name
    assert os.path.basename(vault_file.disk_path) == nfd_name
    assert Path(vault_file.disk_path).read_text(encoding="utf-8") == "bonjour"


def test_nfd_folder_gives_nfc_paths_below_it(tmp_path: Path) -> None:
    folder = unicodedata.normalize("NFD", "Réunions")
    write(tmp_path, f"{folder}/été.md")
    if folder not in os.listdir(tmp_path):
        pytest.skip("this file system normalises names itself")
    (vault_file,) = walk_vault(tmp_path).files
    assert vault_file.path == "Réunions/été.md"
    assert unicodedata.is_normalized("NFC", vault_file.path)
    assert Path(vault_file.disk_path).exists()


def test_two_names_with_one_nfc_form_keep_the_first(tmp_path: Path) -> None:
    nfc, nfd = "é.md", unicodedata.normalize("NFD", "é.md")
    (tmp_path / nfc).write_text("composed", encoding="utf-8")
    (tmp_path / nfd).write_text("decomposed", encoding="utf-8")
    if len(os.listdir(tmp_path)) != 2:
        pytest.skip("this file system cannot hold both spellings")
    result = walk_vault(tmp_path)
    (kept,) = result.files
    first = min(nfc, nfd)  # code-point order of the disk names: "e" + U+0301 sorts first
    assert kept.path == nfc
    assert os.path.basename(kept.disk_path) == first
    (problem,) = result.problems
    assert problem.path == nfc
    assert "same NFC form" in problem.message


@pytest.mark.parametrize(
    "name",
    ["with space.md", "C# notes.md", "#tag.md", "🎉 party.md", "line\nbreak.md", "tab\there.md"],
)
def test_strange_names_are_walked(tmp_path: Path, name: str) -> None:
    try:
        write(tmp_path, f"sub dir/{name}", text="ok")
    except OSError:
        pytest.skip("this file system refuses the name")
    (vault_file,) = walk_vault(tmp_path).files
    assert vault_file.path == f"sub dir/{name}"
    assert Path(vault_file.disk_path).read_text(encoding="utf-8") == "ok"


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="names must be valid Unicode")
def test_name_that_is_not_utf8_is_reported_and_skipped(tmp_path: Path) -> None:
    write(tmp_path, "good.md")
    bad_file = os.path.join(os.fsencode(tmp_path), b"bad-\xff.md")
    bad_dir = os.path.join(os.fsencode(tmp_path), b"dir-\xfe")
    try:
        with open(bad_file, "wb") as handle:
            handle.write(b"x")
        os.mkdir(bad_dir)
        with open(os.path.join(bad_dir, b"inside.md"), "wb") as handle:
            handle.write(b"x")
    except OSError:
        pytest.skip("this file system refuses non-UTF-8 names")
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["good.md"]
    assert [p.message for p in result.problems] == ["file name is not valid UTF-8"] * 2
    for problem in result.problems:
        problem.path.encode("utf-8")  # storable as text
    assert {p.path for p in result.problems} == {"bad-\ufffd.md", "dir-\ufffd"}


# --- symlinks --------------------------------------------------------------------------------


@needs_symlinks
def test_symlink_loop_is_reported_and_the_walk_ends(tmp_path: Path) -> None:
    write(tmp_path, "A/note.md")
    os.symlink("..", tmp_path / "A" / "loop")
    os.symlink(".", tmp_path / "A" / "self")
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["A/note.md"]
    assert result.problems == (
        WalkProblem("A/loop", "symlink loop; not followed"),
        WalkProblem("A/self", "symlink loop; not followed"),
    )


@needs_symlinks
def test_symlink_pointing_at_itself_is_a_loop(tmp_path: Path) -> None:
    os.symlink("me", tmp_path / "me")
    assert walk_vault(tmp_path).problems == (WalkProblem("me", "symlink loop; not followed"),)


@needs_symlinks
def test_mutually_linked_outside_folders_terminate(tmp_path: Path) -> None:
    vault, one, two = tmp_path / "vault", tmp_path / "one", tmp_path / "two"
    write(one, "a.md")
    write(two, "b.md")
    vault.mkdir()
    os.symlink(one, vault / "one")
    os.symlink(two, one / "two")
    os.symlink(one, two / "one")
    result = walk_vault(vault, follow_outside=True)  # follow_symlinks = true
    assert [f.path for f in result.files] == ["one/a.md", "one/two/b.md"]
    assert result.problems == (WalkProblem("one/two/one", "symlink loop; not followed"),)


@needs_symlinks
def test_symlinked_folder_outside_the_vault_is_followed_only_when_asked(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "shared.md")
    write(outside, "deep/img.png")
    vault = tmp_path / "vault"
    write(vault, "own.md")
    os.symlink(outside, vault / "linked")
    os.symlink(outside / "shared.md", vault / "file-link.md")
    default = walk_vault(vault)  # SEMANTICS 1.6: not followed, a warning naming the setting
    assert [f.path for f in default.files] == ["own.md"]
    assert default.problems == (
        WalkProblem("file-link.md", OUTSIDE_MESSAGE, "warning"),
        WalkProblem("linked", OUTSIDE_MESSAGE, "warning"),
    )
    assert "follow_symlinks" in OUTSIDE_MESSAGE
    files = {f.path: f for f in walk_vault(vault, follow_outside=True).files}
    assert sorted(files) == [
        "file-link.md",
        "linked/deep/img.png",
        "linked/shared.md",
        "own.md",
    ]
    assert files["linked/shared.md"].disk_path == str(vault / "linked" / "shared.md")
    assert files["linked/shared.md"].inode == os.stat(outside / "shared.md").st_ino


@needs_symlinks
def test_symlink_to_a_folder_already_in_the_vault_is_not_walked_twice(tmp_path: Path) -> None:
    write(tmp_path, "Real/x.md")
    # "A-link" sorts before "Real": the real path must still win.
    os.symlink(tmp_path / "Real", tmp_path / "A-link")
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["Real/x.md"]
    (problem,) = result.problems
    assert problem.path == "A-link"
    assert "already in the vault as 'Real'" in problem.message


@needs_symlinks
def test_symlinked_file_is_followed(tmp_path: Path) -> None:
    target = write(tmp_path, "real.md", text="twelve bytes")
    os.symlink(target, tmp_path / "alias.md")
    files = by_path(tmp_path)
    assert sorted(files) == ["alias.md", "real.md"]
    assert files["alias.md"].size == 12
    assert files["alias.md"].inode == files["real.md"].inode


@needs_symlinks
def test_dangling_symlink_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path, "n.md")
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    os.symlink(tmp_path / "gone-dir", tmp_path / "dangling-dir")
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["n.md"]
    assert result.problems == (
        WalkProblem("dangling-dir", "dangling symlink; target missing"),
        WalkProblem("dangling.md", "dangling symlink; target missing"),
    )
    assert result.unreadable_dirs == ()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_is_skipped_so_nothing_blocks_reading_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    write(tmp_path, "n.md")
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["n.md"]
    assert [p.path for p in result.problems] == ["pipe.md"]


# --- unreadable folders ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["privileges", "injection"])
def test_folder_without_permission_is_listed_in_unreadable_dirs(mode: str) -> None:
    """Runs for real as root too: the walk happens in a child that dropped to `nobody`."""
    with lockout(mode) as (locker, base, chown):
        write(base, "ok.md")
        write(base, "Locked/Deep/secret.md")
        chown()
        locker.lock(base / "Locked" / "Deep")

        def walk() -> list[object]:
            result = walk_vault(base)
            return [
                [f.path for f in result.files],
                list(result.unreadable_dirs),
                [p.path for p in result.problems],
            ]

        files, unreadable, problems = locker.call(walk)
    assert files == ["ok.md"]
    assert unreadable == ["Locked/Deep"]
    assert problems == ["Locked/Deep"]


def test_folder_that_fails_to_list_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Also runs as root: a cloud placeholder or a folder that vanishes mid-walk fails like this.
    write(tmp_path, "ok.md")
    write(tmp_path, "Cloud/remote.md")
    cloud = str(tmp_path / "Cloud")
    real_scandir = os.scandir

    def failing_scandir(path: str) -> object:
        if path == cloud:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    result = walk_vault(tmp_path)
    assert [f.path for f in result.files] == ["ok.md"]
    assert result.unreadable_dirs == ("Cloud",)
    assert result.problems == (WalkProblem("Cloud", "cannot list folder: Permission denied"),)


def test_only_the_walk_problems_that_keep_rows_start_with_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # store.one_note.UNREADABLE_WALK_MESSAGE: `show` marks a note under such a problem possibly
    # stale. Every other problem of the walk removes rows or was never a note: not "cannot ".
    write(tmp_path, "ok.md")
    write(tmp_path, "Cloud/remote.md")
    (tmp_path / "loop").symlink_to(".", target_is_directory=True)
    (tmp_path / "dangling.md").symlink_to("nowhere.md")
    (tmp_path / "twice").symlink_to("Cloud", target_is_directory=True)
    os.mkfifo(tmp_path / "fifo.md")
    write(tmp_path, "cafe\u0301.md")
    write(tmp_path, "caf\u00e9.md")
    (tmp_path / os.fsdecode(b"bad\xff.md")).write_text("x")
    real_scandir = os.scandir
    cloud = str(tmp_path / "Cloud")

    def failing_scandir(path: str) -> object:
        if path == cloud:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    problems = walk_vault(tmp_path).problems
    kept = {p.path for p in problems if p.message.startswith("cannot ")}
    assert kept == {"Cloud"}
    others = {p.message.split(";")[0].split(":")[0] for p in problems if p.path != "Cloud"}
    assert len(others) >= 4, problems  # a loop, a dangling link, NFC twins, a FIFO, a bad name
    assert all(not m.startswith("cannot") for m in others)


def test_root_that_fails_to_list_marks_everything_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "n.md")

    def failing_scandir(path: str) -> object:
        raise OSError(5, "Input/output error", path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    result = walk_vault(tmp_path)
    assert result.files == ()
    assert result.unreadable_dirs == ("",)


# --- excluded files (Obsidian's userIgnoreFilters) -------------------------------------------


def write_app_json(root: Path, content: str) -> None:
    write(root, ".obsidian/app.json", content)


def test_excluded_filters_are_read_from_app_json(tmp_path: Path) -> None:
    write_app_json(
        tmp_path,
        json.dumps(
            {
                "userIgnoreFilters": ["Archive/", "Templates", "/\\.pdf$/", 3, "", None],
                "alwaysUpdateLinks": True,
            }
        ),
    )
    filters = load_excluded_filters(tmp_path)
    assert filters == ("Archive/", "Templates", "/\\.pdf$/")
    assert is_excluded("Archive/2020/x.md", filters)
    assert is_excluded("Templates/daily.md", filters)
    assert is_excluded("img/paper.pdf", filters)
    assert not is_excluded("Notes/Archive/x.md", filters)
    assert not is_excluded("paper.pdf.md", filters)


def test_excluded_files_are_still_walked(tmp_path: Path) -> None:
    # SEMANTICS 1: excluded files stay vault files for link resolution.
    write_app_json(tmp_path, json.dumps({"userIgnoreFilters": ["Archive/"]}))
    write(tmp_path, "Archive/old.md")
    assert paths(tmp_path) == ["Archive/old.md"]


@pytest.mark.parametrize(
    "content",
    [None, "", "{not json", "[1, 2]", '{"userIgnoreFilters": "Archive/"}', '{"other": 1}'],
)
def test_missing_or_broken_app_json_gives_no_filters(tmp_path: Path, content: str | None) -> None:
    if content is not None:
        write_app_json(tmp_path, content)
    assert load_excluded_filters(tmp_path) == ()


def test_app_json_that_is_not_utf8_gives_no_filters(tmp_path: Path) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_bytes(b'{"userIgnoreFilters": ["\xff"]}')
    assert load_excluded_filters(tmp_path) == ()


@pytest.mark.parametrize(
    ("path", "filters", "expected"),
    [
        ("Archive/x.md", ("Archive/",), True),
        ("Archive/x.md", ("Archive",), True),
        ("Archive.md", ("Archive/",), False),
        ("Archive 2/x.md", ("Archive",), True),  # plain entries are prefixes, as in Obsidian
        ("archive/x.md", ("Archive/",), False),  # and case-sensitive
        ("a/b/Draft x.md", ("/Draft/",), True),  # /regex/ is searched anywhere
        ("a/b/draft.md", ("/^a/.*draft/",), True),
        ("x.md", ("/[unclosed/",), False),  # a broken regex is ignored...
        ("Archive/x.md", ("/[unclosed/", "Archive"), True),  # ...and the others still apply
        ("x.md", ("/",), False),
        ("x.md", ("//",), False),
        ("x.md", (), False),
        ("Été/x.md", (unicodedata.normalize("NFD", "Été/"),), True),
    ],
)
def test_is_excluded(path: str, filters: tuple[str, ...], expected: bool) -> None:
    assert is_excluded(path, filters) is expected


def test_has_nfc_twin(tmp_path: Path) -> None:
    from notedex.vault.walk import has_nfc_twin

    (tmp_path / "caf\u00e9.md").write_text("x")
    (tmp_path / "plain.md").write_text("x")
    assert not has_nfc_twin(str(tmp_path), ["caf\u00e9.md", "plain.md"])
    (tmp_path / "cafe\u0301.md").write_text("x")
    assert has_nfc_twin(str(tmp_path), ["cafe\u0301.md"])
    assert has_nfc_twin(str(tmp_path), ["caf\u00e9.md"])
    assert not has_nfc_twin(str(tmp_path), ["plain.md"])
    assert not has_nfc_twin(str(tmp_path / "missing"), ["caf\u00e9.md"])


@pytest.mark.parametrize("sign", ["\u212a", "\u037e", "\u1fef"])
def test_has_nfc_twin_sees_an_ascii_name_whose_twin_is_not_ascii(tmp_path: Path, sign: str) -> None:
    from notedex.vault.walk import has_nfc_twin

    ascii_name = f"{unicodedata.normalize('NFC', sign)}elvin.md"
    (tmp_path / f"{sign}elvin.md").write_text("x")
    assert not has_nfc_twin(str(tmp_path), [ascii_name])
    (tmp_path / ascii_name).write_text("x")
    assert has_nfc_twin(str(tmp_path), [ascii_name])
    assert has_nfc_twin(str(tmp_path), [f"{sign}elvin.md"])


def test_only_three_characters_fold_to_ascii_under_nfc() -> None:
    from notedex.vault import walk

    found = {
        unicodedata.normalize("NFC", chr(code))
        for code in range(0x80, sys.maxunicode + 1)
        if unicodedata.normalize("NFC", chr(code)).isascii()
    }
    assert found == set(walk._ASCII_NFC_IMAGES)


def test_a_folder_walked_alone_with_its_vault_path_as_base(tmp_path: Path) -> None:
    """The daemon's folder hint (issue 17): ``base`` gives the files the paths they have in
    the vault walk, NFC included, so nothing is built twice."""
    nfd = unicodedata.normalize("NFD", "Café")
    for relative in ["top.md", "sub/a.md", f"sub/{nfd}/b.md", "sub/deep/c.png", "sub/.x.md"]:
        write(tmp_path, relative)
    whole = {f.path: f for f in walk_vault(tmp_path).files if f.path.startswith("sub/")}
    alone = walk_vault(tmp_path / "sub", base="sub")
    assert (
        [f.path for f in alone.files]
        == sorted(whole)
        == ["sub/Café/b.md", "sub/a.md", "sub/deep/c.png"]
    )
    assert list(alone.files) == [whole[path] for path in sorted(whole)]
