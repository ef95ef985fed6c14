"""Link resolution, SEMANTICS 7, with every resolution case of SEMANTICS 9 pinned."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from notedex.vault.resolve import (
    Resolution,
    Resolver,
    affected_name_keys,
    broken_key,
    name_key,
)

# The vault of SEMANTICS 9, plus an accented note (stored NFC, as the walker gives it).
VAULT = (
    "Note.md",
    "A/Start.md",
    "A/B/Dup.md",
    "C/Dup.md",
    "C/Gamma.md",
    "img/pic.png",
    "v1.2.md",
    "été.md",
)
START = "A/Start.md"
GAMMA = "C/Gamma.md"


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver(VAULT)


def target(resolver: Resolver, linkpath: str, source: str = START) -> str | None:
    return resolver.resolve(linkpath, source).target


# --- SEMANTICS 9: names are case-insensitive ------------------------------------------------


@pytest.mark.parametrize("linkpath", ["note", "NOTE", "Note", "Note.MD", "note.md"])
def test_note_any_case_resolves_to_note_md(resolver: Resolver, linkpath: str) -> None:
    assert resolver.resolve(linkpath, START) == Resolution("Note.md", False)


def test_linkpath_after_subpath_and_trim_resolves(resolver: Resolver) -> None:
    # [[Note#H1#H2|x]], [[Note#^blk]], [[ Note ]] and NBSP all reach the resolver as "Note"
    # (the parser splits the subpath and trims, SEMANTICS 6); the heading is never checked.
    assert target(resolver, "Note", GAMMA) == "Note.md"


# --- paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize("linkpath", ["A/B/Dup", "a/b/dup", "A/B/Dup.md", "a/B/DUP.MD"])
def test_full_path_any_case_resolves(resolver: Resolver, linkpath: str) -> None:
    assert resolver.resolve(linkpath, GAMMA) == Resolution("A/B/Dup.md", False)


def test_wrong_folder_is_broken_even_for_a_unique_name(resolver: Resolver) -> None:
    assert resolver.resolve("wrong/Note", START) == Resolution(None, False)
    assert broken_key("wrong/Note") == "wrong/Note"


def test_partial_path_matches_as_a_plain_suffix(resolver: Resolver) -> None:
    """SEMANTICS 7.7 words it as "the lower-cased path ends with the linkpath": a string suffix."""
    assert resolver.resolve("B/Dup", GAMMA) == Resolution("A/B/Dup.md", False)
    assert target(resolver, "b/dup", "Note.md") == "A/B/Dup.md"
    # "AB/Dup" is not a suffix of "A/B/Dup"; "B/Dup" is a suffix of "XB/Dup" and of "sub/B/Dup".
    assert target(resolver, "AB/Dup") is None
    assert Resolver(["XB/Dup.md"]).resolve("B/Dup", "Note.md").target == "XB/Dup.md"
    assert Resolver(["sub/Note.md"]).resolve("ub/Note", "x.md").target == "sub/Note.md"


# --- the 7.7 tie-break -----------------------------------------------------------------------


def test_dup_from_a_start_prefers_its_own_folder_tree(resolver: Resolver) -> None:
    assert resolver.resolve("Dup", START) == Resolution("A/B/Dup.md", True)


def test_dup_from_c_gamma_prefers_its_own_folder(resolver: Resolver) -> None:
    assert resolver.resolve("Dup", GAMMA) == Resolution("C/Dup.md", True)


def test_dup_from_the_root_takes_the_shortest_path(resolver: Resolver) -> None:
    # Every file is inside the root folder, so only the path length decides.
    assert resolver.resolve("Dup", "Note.md") == Resolution("C/Dup.md", True)


def test_dup_from_an_unrelated_folder_takes_the_shortest_path() -> None:
    r = Resolver(["A/B/Dup.md", "C/Dup.md", "Z/Src.md"])
    assert r.resolve("Dup", "Z/Src.md") == Resolution("C/Dup.md", True)


def test_equal_length_tie_is_broken_by_code_point_order() -> None:
    r = Resolver(["Y/Dup.md", "X/Dup.md", "Z/Src.md"])
    assert r.resolve("Dup", "Z/Src.md") == Resolution("X/Dup.md", True)


def test_source_folder_beats_a_shorter_path_elsewhere() -> None:
    r = Resolver(["Dup.md", "Deep/er/Dup.md", "Deep/Src.md"])
    assert r.resolve("Dup", "Deep/Src.md") == Resolution("Deep/er/Dup.md", True)


def test_folder_prefix_must_end_on_a_segment() -> None:
    # "A2/Dup.md" is not inside folder "A".
    r = Resolver(["A2/Dup.md", "Dup.md", "A/Src.md"])
    assert r.resolve("Dup", "A/Src.md") == Resolution("Dup.md", True)


def test_unique_bare_name_is_not_ambiguous(resolver: Resolver) -> None:
    assert resolver.resolve("Gamma", START) == Resolution("C/Gamma.md", False)


def test_names_differing_only_by_case_are_ambiguous_but_deterministic() -> None:
    r = Resolver(["note.md", "Note.md"])
    assert r.resolve("NOTE", "note.md") == Resolution("Note.md", True)


# --- extensions and the ".md" retry (7.2) ---------------------------------------------------


def test_pic_without_extension_is_broken_with_key_pic(resolver: Resolver) -> None:
    assert resolver.resolve("pic", START) == Resolution(None, False)
    assert broken_key("pic") == "pic"


@pytest.mark.parametrize("linkpath", ["pic.png", "PIC.PNG", "img/pic.png", "/img/pic.png"])
def test_attachment_with_extension_resolves(resolver: Resolver, linkpath: str) -> None:
    # Also the linkpath of the embed ![[pic.png|100]].
    assert resolver.resolve(linkpath, START) == Resolution("img/pic.png", False)


def test_dotted_note_name_retries_with_md(resolver: Resolver) -> None:
    assert resolver.resolve("v1.2", START) == Resolution("v1.2.md", False)
    assert target(resolver, "v1.2.md") == "v1.2.md"


def test_file_with_the_dotted_name_wins_over_the_md_retry() -> None:
    r = Resolver(["v1.2", "v1.2.md"])
    assert r.resolve("v1.2", "x.md").target == "v1.2"


def test_extension_that_finds_something_is_not_retried() -> None:
    # [[A/pic.png]] finds pic.png by name (in the wrong folder): no retry with pic.png.md.
    r = Resolver(["B/pic.png", "A/pic.png.md"])
    assert r.resolve("A/pic.png", "x.md").target is None
    assert r.resolve("pic.png", "x.md").target == "B/pic.png"


def test_extensionless_link_means_a_note_not_an_extensionless_file() -> None:
    # 7.2: no extension -> the link is looked up as "Makefile.md".
    assert Resolver(["Makefile"]).resolve("Makefile", "x.md").target is None
    assert Resolver(["Makefile", "Makefile.md"]).resolve("Makefile", "x.md").target == (
        "Makefile.md"
    )


# --- Unicode ---------------------------------------------------------------------------------


def test_upper_case_accented_link_resolves_to_nfc_note(resolver: Resolver) -> None:
    assert resolver.resolve("ÉTÉ", START) == Resolution("été.md", False)


def test_nfc_link_resolves_to_nfd_file_name() -> None:
    nfd = unicodedata.normalize("NFD", "été.md")
    r = Resolver([nfd])
    assert r.resolve("été", "x.md").target == nfd  # returned as given


def test_nfd_link_resolves_to_nfc_file_name(resolver: Resolver) -> None:
    assert target(resolver, unicodedata.normalize("NFD", "Été")) == "été.md"


def test_greek_final_sigma_in_capitals_finds_the_note() -> None:
    # str.lower() gives "λόγος" for "ΛΌΓΟΣ" but "λόγοσ.md" for "ΛΌΓΟΣ.md".
    r = Resolver(["Λόγος.md"])
    assert r.resolve("ΛΌΓΟΣ", "x.md").target == "Λόγος.md"
    assert r.resolve("Greek/../ΛΌΓΟΣ", "x.md").target is None
    assert r.resolve("/ΛΌΓΟΣ", "x.md").target == "Λόγος.md"


# --- relative and absolute links -------------------------------------------------------------


def test_dot_slash_is_relative_to_the_source_folder(resolver: Resolver) -> None:
    assert resolver.resolve("./B/Dup", START) == Resolution("A/B/Dup.md", False)
    assert resolver.resolve("./Dup", GAMMA) == Resolution("C/Dup.md", False)
    assert resolver.resolve("./Note", "Note.md") == Resolution("Note.md", False)


def test_dot_slash_needs_the_exact_path(resolver: Resolver) -> None:
    # A/Dup.md does not exist; the A/B/Dup.md of the tie-break is not consulted.
    assert resolver.resolve("./Dup", START) == Resolution(None, False)


def test_dot_dot_goes_up_from_the_source_folder(resolver: Resolver) -> None:
    assert resolver.resolve("../Note", START) == Resolution("Note.md", False)
    assert resolver.resolve("../C/Dup", START) == Resolution("C/Dup.md", False)
    assert resolver.resolve("../../Dup", "A/B/Dup.md") == Resolution(None, False)
    assert resolver.resolve("../../C/Dup", "A/B/Dup.md") == Resolution("C/Dup.md", False)


def test_dot_dot_above_the_vault_root_is_broken(resolver: Resolver) -> None:
    assert resolver.resolve("../Note", "Note.md") == Resolution(None, False)


def test_leading_slash_is_a_full_path(resolver: Resolver) -> None:
    assert resolver.resolve("/Note", START) == Resolution("Note.md", False)
    assert resolver.resolve("/C/Dup", START) == Resolution("C/Dup.md", False)


def test_leading_slash_without_exact_match_is_broken(resolver: Resolver) -> None:
    # Without the "/", "B/Dup" would resolve by suffix (7.7); with it, it must be exact (7.6).
    assert resolver.resolve("/B/Dup", START) == Resolution(None, False)
    assert resolver.resolve("//Note", START) == Resolution(None, False)


def test_full_path_beats_the_source_folder_preference() -> None:
    # 7.6 before 7.7: [[C/Dup]] from A/ is C/Dup.md, not A/C/Dup.md in the source folder.
    r = Resolver(["C/Dup.md", "A/C/Dup.md", "A/Src.md"])
    assert r.resolve("C/Dup", "A/Src.md") == Resolution("C/Dup.md", False)


# --- self-links and aliases ------------------------------------------------------------------


def test_empty_linkpath_is_the_source_note(resolver: Resolver) -> None:
    assert resolver.resolve("", GAMMA) == Resolution(GAMMA, False)


def test_aliases_never_resolve() -> None:
    # A note with aliases: [AI] is still only found by its file name (7.8).
    r = Resolver(["Artificial Intelligence.md"])
    assert r.resolve("AI", "x.md") == Resolution(None, False)
    assert broken_key("AI") == "AI"


# --- keys --------------------------------------------------------------------------------------


def test_broken_key_preserves_case() -> None:
    assert broken_key("Foo") == "Foo"
    assert broken_key("foo") == "foo"
    assert broken_key("Foo") != broken_key("foo")


@pytest.mark.parametrize(
    ("linkpath", "key"),
    [
        ("Foo.md", "Foo"),
        ("Foo.MD", "Foo"),
        ("dir/Foo.Md", "dir/Foo"),
        ("pic.png", "pic.png"),
        ("v1.2", "v1.2"),
        ("Foo.md.md", "Foo.md"),
        (".md", ".md"),
    ],
)
def test_broken_key_drops_one_md_suffix(linkpath: str, key: str) -> None:
    assert broken_key(linkpath) == key


def test_name_key_is_the_folded_last_segment() -> None:
    assert name_key("A/B/Dup") == "dup"
    assert name_key("../Été.MD") == "été.md"
    assert name_key("Note") == "note"
    assert name_key("") == ""


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("x/Foo.md", ("foo.md", "foo")),
        ("img/pic.png", ("pic.png",)),
        ("Foo.MD", ("foo.md", "foo")),
        ("v1.2.md", ("v1.2.md", "v1.2")),
        ("Makefile", ("makefile",)),
    ],
)
def test_affected_name_keys(path: str, keys: tuple[str, ...]) -> None:
    assert affected_name_keys(path) == keys


# --- incremental updates -------------------------------------------------------------------


def test_add_turns_a_broken_link_into_a_resolved_one() -> None:
    r = Resolver(["Src.md"])
    assert r.resolve("Later", "Src.md").target is None
    r.add("deep/Later.md")
    assert name_key("Later") in affected_name_keys("deep/Later.md")
    assert r.resolve("Later", "Src.md").target == "deep/Later.md"


def test_remove_turns_a_resolved_link_into_a_broken_one() -> None:
    r = Resolver(VAULT)
    r.remove("C/Gamma.md")
    assert r.resolve("Gamma", START).target is None
    assert "C/Gamma.md" not in r


def test_remove_makes_the_remaining_duplicate_unique() -> None:
    r = Resolver(VAULT)
    r.remove("A/B/Dup.md")
    assert r.resolve("Dup", START) == Resolution("C/Dup.md", False)


def test_add_and_remove_are_idempotent() -> None:
    r = Resolver(VAULT)
    r.add("Note.md")
    r.remove("missing.md")
    r.remove("Note.md")
    r.remove("Note.md")
    assert r.resolve("Note", START).target is None
    assert "A/Start.md" in r


# --- properties ------------------------------------------------------------------------------

# Small alphabets so that names collide often: the interesting cases are the ambiguous ones.
_FOLDERS = st.sampled_from(["A", "a", "B", "A/B", "C", "img", "Σ", "é", "e\u0301"])
_NAMES = st.sampled_from(
    [
        "Note.md",
        "note.md",
        "NOTE.MD",
        "Dup.md",
        "dup.md",
        "pic.png",
        "pic.md",
        "pic.png.md",
        "v1.2",
        "v1.2.md",
        "Makefile",
        "ΑΣ.md",
        "Ασ.md",
        "ας.md",
        "été.md",
        "e\u0301te\u0301.md",
    ]
)
_PATHS = st.builds(
    lambda folder, name: f"{folder}/{name}" if folder else name,
    st.one_of(st.just(""), _FOLDERS),
    _NAMES,
)
_LINK_SEGMENTS = st.sampled_from(
    ["A", "a", "B", "b", "C", "img", "Σ", "é", "wrong", ".", "..", "Note", "NOTE.md", "dup", "Dup"]
)
_LINK_NAMES = st.sampled_from(
    [
        "Note",
        "note.md",
        "Dup",
        "DUP.MD",
        "pic",
        "pic.png",
        "PIC.PNG",
        "v1.2",
        "V1.2.md",
        "makefile",
        "ΑΣ",
        "Ασ",
        "ας",
        "ΑΣ.md",
        "ÉTÉ",
        "",
    ]
)
_LINKPATHS = st.builds(
    lambda prefix, segments, name: prefix + "/".join([*segments, name]),
    st.sampled_from(["", "", "", "/", "./", "../"]),
    st.lists(_LINK_SEGMENTS, max_size=2),
    _LINK_NAMES,
)
_VAULTS = st.lists(_PATHS, min_size=1, max_size=14, unique=True)


def _all_resolutions(
    resolver: Resolver, links: list[str], sources: list[str]
) -> dict[tuple[str, str], Resolution]:
    return {(link, src): resolver.resolve(link, src) for link in links for src in sources}


@settings(max_examples=300, deadline=None)
@given(vault=_VAULTS, links=st.lists(_LINKPATHS, min_size=1, max_size=12), data=st.data())
def test_resolution_does_not_depend_on_the_order_of_paths(
    vault: list[str], links: list[str], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(vault))
    sources = [*vault, "A/B/Src.md", "Src.md"]
    assert _all_resolutions(Resolver(vault), links, sources) == _all_resolutions(
        Resolver(shuffled), links, sources
    )


@settings(max_examples=400, deadline=None)
@given(
    vault=_VAULTS,
    changed=_PATHS,
    links=st.lists(_LINKPATHS, min_size=1, max_size=12),
    sources=st.lists(_PATHS, min_size=1, max_size=3),
)
def test_a_file_change_only_affects_links_with_an_affected_name_key(
    vault: list[str], changed: str, links: list[str], sources: list[str]
) -> None:
    without = [p for p in vault if p != changed]
    before = Resolver(without)
    after = Resolver(without)
    after.add(changed)
    affected = set(affected_name_keys(changed))
    for link in links:
        for source in sources:
            old, new = before.resolve(link, source), after.resolve(link, source)
            if old != new:
                assert name_key(link) in affected, (link, source, old, new)
    # Incremental updates give exactly what a fresh build gives.
    assert _all_resolutions(after, links, sources) == _all_resolutions(
        Resolver([*without, changed]), links, sources
    )
    after.remove(changed)
    assert _all_resolutions(after, links, sources) == _all_resolutions(before, links, sources)


@settings(max_examples=200, deadline=None)
@given(vault=_VAULTS, changed=_PATHS)
def test_a_new_unique_file_resolves_its_bare_name(vault: list[str], changed: str) -> None:
    # The converse direction: the link written as the file's own name does change when the file
    # is the only one with its keys, so the affected keys are not a loose over-approximation.
    name = changed.rpartition("/")[2]
    keys = set(affected_name_keys(changed))
    link = name[:-3] if name.lower().endswith(".md") else name
    assume("." in link.strip(".") or name.lower().endswith(".md"))  # [[Makefile]] means a note
    others = [p for p in vault if p != changed and not keys & set(affected_name_keys(p))]
    r = Resolver(others)
    assert r.resolve(link, "Src.md").target is None
    r.add(changed)
    assert r.resolve(link, "Src.md") == Resolution(changed, False)
    assert name_key(link) in keys
