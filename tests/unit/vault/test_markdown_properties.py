"""Properties of the parser, checked on generated notes (SEMANTICS 2-6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault.markdown.inline import mask_excluded
from notedex.vault.model import Note
from notedex.vault.parse import parse_note

SETTINGS = settings(max_examples=200, deadline=None)

# Tokens that drive the parser's decisions, plus enough letters to form words and link names.
_TOKENS = [
    *"[]!#|\\`$%<>-~*_:()/ \n\t\rabcxyzAB019.",
    *["\u00a0", "é", "日", "🎉", "[[", "]]", "---\n", "```", "$$", "    ", "<div>", "%%", "\\|"],
]
markdownish = st.lists(st.sampled_from(_TOKENS), max_size=250).map("".join)


def source_lines(data: bytes) -> list[str]:
    """The decoded text as the parser sees it, split into file lines."""
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff").split("\n")


def assert_positions_point_at_links(note: Note, data: bytes) -> None:
    lines = source_lines(data)
    for link in note.links:
        line_text = lines[link.line - 1]
        assert line_text[link.column - 1] in "[!", (link, line_text)
        if link.kind == "frontmatter":
            assert line_text[link.column - 1 :].startswith("[["), (link, line_text)
        else:
            assert line_text[link.column - 1 :].startswith(link.raw), (link, line_text)
            if link.kind in ("embed", "markdown-embed"):
                assert link.raw.startswith("!")


def assert_sane(note: Note) -> None:
    assert isinstance(note, Note)
    assert not [error for error in note.errors if error.kind == "internal-error"], note.errors
    keys = [tag.key for tag in note.tags]
    assert len(keys) == len(set(keys))


@SETTINGS
@given(st.binary(max_size=600))
def test_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    note = parse_note(data, "Dir/Any.md")
    assert_sane(note)
    assert_positions_point_at_links(note, data)


@SETTINGS
@given(markdownish)
def test_never_raises_on_markup_heavy_text(text: str) -> None:
    data = text.encode("utf-8")
    note = parse_note(data, "Any.md")
    assert_sane(note)
    assert_positions_point_at_links(note, data)


@SETTINGS
@given(markdownish)
def test_masking_keeps_every_offset(text: str) -> None:
    masked, _table_rows = mask_excluded(text)
    assert len(masked) == len(text)
    for original, kept in zip(text, masked):
        assert kept == original or (kept == " " and original != "\n")


_yaml_value = st.sampled_from(
    [
        "x",
        "yes",
        "2023",
        "2023-01-05",
        '"[[Fm Link]]"',
        "'[[Other#Sec|Shown]]'",
        "[a, '#b', 2023]",
        "[[Unquoted]]",
        "{k: '[[Deep]]'}",
        "&anchor [v]",
        "*anchor",
        "[unclosed",
        '"unterminated',
        "|-\n  [[Block]]",
        "\n  - '[[Item]]'\n  - 7",
        "",
    ]
)
_frontmatter = st.lists(
    st.tuples(
        st.sampled_from(["tags", "Tags", "aliases", "title", "link", "up", "tag"]), _yaml_value
    ),
    max_size=5,
).map(lambda pairs: "---\n" + "".join(f"{key}: {value}\n" for key, value in pairs) + "---\n")


@SETTINGS
@given(st.one_of(st.just(""), _frontmatter), markdownish)
def test_frontmatter_plus_markup_never_raises_and_positions_hold(
    frontmatter: str, body: str
) -> None:
    data = (frontmatter + body).encode("utf-8")
    note = parse_note(data, "Any.md")
    assert_sane(note)
    assert_positions_point_at_links(note, data)


# --- a model: notes built from pieces whose links and tags are known ------------------------------

_name = (
    st.text(alphabet="abcdefgXYZ 0123é日.-", min_size=1, max_size=10)
    .map(str.strip)
    .filter(lambda name: bool(name) and not name.startswith("."))
)
_tag = st.from_regex(r"[a-zA-Z日][a-zA-Z0-9_/\-日]{0,8}", fullmatch=True)
_word = st.sampled_from(["the", "a", "note", "ÉTÉ", "x", "1984", "**bold**", "(p)"])


@dataclass
class Piece:
    text: str
    links: list[tuple[str, str]] = field(default_factory=list)
    """(kind, linkpath) expected, in order."""
    tags: list[str] = field(default_factory=list)


@st.composite
def inline_piece(draw: st.DrawFn) -> Piece:
    kind = draw(
        st.sampled_from(
            [
                *["word", "wikilink", "display", "embed", "markdown", "tag"],
                *["code", "double-code", "math", "escaped"],
            ]
        )
    )
    if kind == "word":
        return Piece(draw(_word))
    if kind == "tag":
        tag = draw(_tag)
        return Piece(f"#{tag}", tags=[tag])
    name = draw(_name)
    if kind == "wikilink":
        return Piece(f"[[{name}]]", links=[("wikilink", name)])
    if kind == "display":
        return Piece(f"[[{name}|{draw(_name)}]]", links=[("wikilink", name)])
    if kind == "embed":
        return Piece(f"![[{name}.png]]", links=[("embed", f"{name}.png")])
    if kind == "markdown":
        return Piece(f"[text]({quote(name + '.md')})", links=[("markdown", name + ".md")])
    if kind == "code":
        return Piece(f"`[[{name}]] #{draw(_tag)}`")
    if kind == "double-code":
        return Piece(f"``[[{name}]] ` #{draw(_tag)}``")
    if kind == "math":
        return Piece(f"$x [[{name}]] y$")
    return Piece(f"\\[\\[{name}\\]\\]")


@st.composite
def paragraph(draw: st.DrawFn) -> Piece:
    pieces = draw(st.lists(inline_piece(), min_size=1, max_size=8))
    prefix = draw(st.sampled_from(["", "> ", "- ", "1. ", "## ", "%% "]))
    text = prefix + " ".join(piece.text for piece in pieces)
    if prefix == "%% ":
        text += " %%"
    return Piece(
        text,
        [link for piece in pieces for link in piece.links],
        [tag for piece in pieces for tag in piece.tags],
    )


@st.composite
def excluded_block(draw: st.DrawFn) -> Piece:
    inner = f"[[{draw(_name)}]] #{draw(_tag)}"
    template = draw(
        st.sampled_from(
            [
                "```\n{}\n```",
                "~~~python\n{}\n~~~",
                "> ```\n> {}\n> ```",
                "- item\n  ```\n  {}\n  ```\n\nplain",
                "$$\n{}\n$$",
                "<div>\n{}\n</div>",
                "<!--\n{}\n-->",
                "plain\n\n    {}",
                "| h | h |\n|---|---|\n| [[A|B]] | {} |".replace("{}", "`{}`"),
            ]
        )
    )
    return Piece(template.format(inner))


@st.composite
def table(draw: st.DrawFn) -> Piece:
    kept, dropped = draw(_name), draw(_name)
    return Piece(
        f"| a | b |\n|---|---|\n| [[{kept}\\|x]] | [[{dropped}|y]] |",
        links=[("wikilink", kept)],
    )


@st.composite
def document(draw: st.DrawFn) -> tuple[str, Piece]:
    blocks = draw(st.lists(st.one_of(paragraph(), excluded_block(), table()), max_size=6))
    frontmatter = ""
    links: list[tuple[str, str]] = []
    tags: list[str] = []
    if draw(st.booleans()):
        fm_tags = draw(st.lists(_tag, max_size=3))
        fm_link = draw(_name)
        frontmatter = (
            f'---\ntags: [{", ".join(repr(tag) for tag in fm_tags)}]\nup: "[[{fm_link}]]"\n---\n'
        )
        links.append(("frontmatter", fm_link))
        tags.extend(fm_tags)
    for block in blocks:
        links.extend(block.links)
        tags.extend(block.tags)
    body = "\n\n".join(block.text for block in blocks)
    return frontmatter + body, Piece(body, links, tags)


def unique_case_insensitive(tags: list[str]) -> list[str]:
    seen: set[str] = set()
    result = []
    for tag in tags:
        if tag.lower() not in seen:
            seen.add(tag.lower())
            result.append(tag)
    return result


@SETTINGS
@given(document())
def test_planted_links_and_tags_are_found_exactly(doc: tuple[str, Piece]) -> None:
    text, expected = doc
    data = text.encode("utf-8")
    note = parse_note(data, "Model.md")
    assert note.errors == ()
    assert [(link.kind, link.linkpath) for link in note.links] == expected.links
    assert [tag.name for tag in note.tags] == unique_case_insensitive(expected.tags)
    assert_positions_point_at_links(note, data)


# Percent-escapes in Markdown link targets (SEMANTICS 6): the scanner decodes them itself,
# without urllib.parse (ARCHITECTURE, the mentions budget); it must agree with unquote.
_PERCENT_PIECES = [
    *"%aZ9 #/-.é日",
    *["%C3", "%A9", "%20", "%e6", "%97", "%a5", "%FF", "%80", "%00", "%7f", "%2F", "%25", "%23"],
]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PERCENT_PIECES), max_size=14).map("".join))
def test_percent_decoding_is_unquote_for_every_target_it_sees(text: str) -> None:
    from urllib.parse import unquote

    from notedex.vault.markdown.links import _BAD_PERCENT, percent_decoded

    if _BAD_PERCENT.search(text):
        return  # refused before decoding: not a link target
    try:
        expected = unquote(text, errors="strict")
    except UnicodeDecodeError:
        expected = None
    try:
        got: str | None = percent_decoded(text)
    except UnicodeDecodeError:
        got = None
    assert got == expected


def test_percent_decoding_examples() -> None:
    from notedex.vault.markdown.links import percent_decoded

    assert percent_decoded("My%20Note") == "My Note"
    assert percent_decoded("caf%C3%A9%20%E6%97%A5") == "café 日"
    assert percent_decoded("a%2523") == "a%23"  # decoded once
    assert percent_decoded("plain") == "plain"
    for bad in ("%C3", "%C3a", "%FF", "%C3%C3%A9"):
        try:
            percent_decoded(bad)
        except UnicodeDecodeError:
            continue
        raise AssertionError(f"{bad!r} is not UTF-8 and must not decode")
