"""SEMANTICS.md end to end: real vaults on disk, the CLI as a subprocess, exact JSON answers.

Every rule of SEMANTICS §1-§8 and every §9 edge case is pinned through `scan`, `health`,
`graph`, `show`, `lookup`, `status` and `capture` with `--json`, plus real-world cases the spec
does not list (CRLF, BOM, callouts, odd file names, FIFOs, symlink loops, renames...).

A test marked ``xfail(strict=True)`` is a disagreement between the product and the spec: the
reason says which rule, which input, what was expected and what came back. It turns into a
failure once the product is fixed, so the mark can be removed.
"""

from __future__ import annotations

import json
import os
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Result, run_cli, write

TIMEOUT = 30


# -- helpers ----------------------------------------------------------------------------------


class Vault:
    """A vault on disk and its index, driven through the CLI only."""

    READ_ONLY = frozenset({"scan", "health", "graph", "show", "lookup", "status"})

    def __init__(self, root: Path, db: Path) -> None:
        self.root = root
        self.db = db
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        # answers of read-only commands, keyed by the exact state of the vault on disk: asking
        # the same question of an unchanged vault twice only costs time
        self._answers: dict[tuple[Any, ...], str] = {}

    def fingerprint(self) -> tuple[tuple[Any, ...], ...]:
        """Every entry under the vault (names as bytes, lstat facts): changes with any edit."""
        facts = []
        for dirpath, dirs, files in os.walk(os.fsencode(self.root)):
            for name in dirs + files:
                st = os.lstat(os.path.join(dirpath, name))
                facts.append((dirpath, name, st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(sorted(facts))

    def write(self, rel: str, text: str) -> Path:
        return write(self.root / rel, text)

    def write_bytes(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def run(self, *args: str | Path, input: str | None = None) -> Result:
        return run_cli(
            *args, "--vault", self.root, "--db", self.db, "--json", input=input, timeout=TIMEOUT
        )

    def json(self, *args: str | Path, ok: tuple[int, ...] = (0,), input: str | None = None) -> Any:
        key = None
        if input is None and str(args[0]) in self.READ_ONLY:
            key = (tuple(map(str, args)), ok, self.fingerprint())
            if key in self._answers:
                return json.loads(self._answers[key])
        result = self.run(*args, input=input)
        data = pure_json(result, ok)
        if key is not None:
            self._answers[key] = result.stdout
        return data

    # shorthands
    def scan(self, *extra: str) -> dict[str, Any]:
        data: dict[str, Any] = self.json("scan", *extra)
        return data

    def health(self) -> dict[str, Any]:
        data: dict[str, Any] = self.json("health", ok=(0, 1))
        return data

    def graph(self) -> dict[str, Any]:
        data: dict[str, Any] = self.json("graph")
        return data

    def show(self, note: str) -> dict[str, Any]:
        data: dict[str, Any] = self.json("show", note)
        return data

    def paths(self) -> list[str]:
        return sorted(n["path"] for n in self.scan()["notes"])

    def note(self, path: str) -> dict[str, Any]:
        """The scan fields of one note, read through `show` (test_scan_and_show_agree pins that
        both commands carry the same facts)."""
        shown = self.show(path)
        return {k: shown[k] for k in ("id", "title", "type", "status", "path", "tags", "aliases")}

    def links(self, note: str) -> list[tuple[str, str | None, bool, str | None]]:
        """(kind, target, broken, key) per occurrence, in file order."""
        return [
            (lk["kind"], lk["target"], lk["broken"], lk["key"]) for lk in self.show(note)["links"]
        ]

    def targets(self, note: str) -> list[str | None]:
        return [
            lk["target"] if not lk["broken"] else f"BROKEN:{lk['key']}"
            for lk in self.show(note)["links"]
        ]


def pure_json(result: Result, ok: tuple[int, ...] = (0,)) -> Any:
    """Exactly one JSON document on stdout, an expected exit code, never a traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code in ok, (result.code, result.stdout, result.stderr)
    return json.loads(result.stdout)  # raises on anything before or after the one document


def by_line(show: dict[str, Any]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for lk in show["links"]:
        out.setdefault(lk["line"], []).append(
            lk["target"] if not lk["broken"] else f"BROKEN:{lk['key']}"
        )
    return out


def broken(health: dict[str, Any]) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (b["source"], b["line"], b["column"], b["text"], b["target"]) for b in health["brokenLinks"]
    )


def warned_paths(health: dict[str, Any]) -> set[str]:
    return {w["path"] for w in health["warnings"]}


def paths_of(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["path"] for i in items)


def age(root: Path, seconds: float = 5.0) -> None:
    """Push every mtime into the past, so a later edit is never 'racy' with the index."""
    then = time.time() - seconds
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                os.utime(p, (then, then))


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault", tmp_path / "state" / "index.db")


# -- the §9 vault -------------------------------------------------------------------------------

LINKS_MD = (
    "\n".join(
        [
            "[[note]]",  # 1
            "[[NOTE]]",  # 2
            "[[Note.MD]]",  # 3
            "[[Note#H1#H2|x]]",  # 4
            "[[Note#^blk]]",  # 5
            "[[Note#No such heading]]",  # 6
            "[[ Note ]]",  # 7
            "[[\u00a0Note\u00a0]]",  # 8
            "[[A/B/Dup]]",  # 9
            "[[a/b/dup]]",  # 10
            "[[wrong/Note]]",  # 11
            "[[B/Dup]]",  # 12
            "[[pic]]",  # 13
            "[[pic.png]]",  # 14
            "![[pic.png|100]]",  # 15
            "[[v1.2]]",  # 16
            "[t](Note.md)",  # 17
            "[t](My%20Note.md)",  # 18
            "[t](<My Note.md>)",  # 19
            "%%[[x]] #t%%",  # 20
            "",  # 21
            "| h |",  # 22
            "| - |",  # 23
            "| [[Note\\|B]] |",  # 24
            "",  # 25
            "[[/Note]]",  # 26
            "[[C/Gamma#^id]]",  # 27
        ]
    )
    + "\n"
)

LINES = {
    1: ["Note.md"],
    2: ["Note.md"],
    3: ["Note.md"],
    4: ["Note.md"],
    5: ["Note.md"],
    6: ["Note.md"],
    7: ["Note.md"],
    8: ["Note.md"],
    9: ["A/B/Dup.md"],
    10: ["A/B/Dup.md"],
    11: ["BROKEN:wrong/Note"],
    12: ["A/B/Dup.md"],
    13: ["BROKEN:pic"],
    14: ["img/pic.png"],
    15: ["img/pic.png"],
    16: ["v1.2.md"],
    17: ["Note.md"],
    18: ["BROKEN:My Note"],
    19: ["BROKEN:My Note"],
    20: ["BROKEN:x"],
    24: ["Note.md"],
    26: ["Note.md"],
    27: ["C/Gamma.md"],
}

NOTHING_MD = """\
Inline `[[x1]]` and `#c1` and ``[[x1b]] #c1b``.

```
[[x2]] #c2
```

~~~python
[[x3]] #c3
~~~

paragraph

    [[x4]] #c4

$$[[x5]]$$ and $[[x6]] #c6$

$$
[[x5b]] #c5b
$$

<div>[[x7]] #c7</div>

\\[\\[x8\\]\\]

| h | i |
| - | - |
| [[x9|B]] | cell |

[[]]
[[a
b]]
[t](My Note.md)
[t](https://x/#a) [m](mailto:a@b.c) [p](//host/x.md)
[t](bad%E0%A4%A.md)
foo#bar https://x.y/#frag #1984 #
# Heading one
[ref style][r]

[r]: Note.md
"""


@pytest.fixture(scope="module")
def s9(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    base = tmp_path_factory.mktemp("s9")
    vault = Vault(base / "vault", base / "state" / "index.db")
    vault.write("Note.md", "# Note\n\n## H1\n\n### H2\n\nText ^blk\n")
    vault.write("A/Start.md", "[[Dup]]\n")
    vault.write("A/B/Dup.md", "")
    vault.write("C/Dup.md", "")
    vault.write("C/Gamma.md", "[[Dup]]\n\nblock ^id\n")
    vault.write_bytes("img/pic.png", b"\x89PNG\r\n\x1a\n")
    vault.write("v1.2.md", "")
    vault.write("Links.md", LINKS_MD)
    vault.write("Nothing.md", NOTHING_MD)
    return vault


# -- §9 links -----------------------------------------------------------------------------------


def test_s9_every_listed_link_resolves_as_specified(s9: Vault) -> None:
    assert by_line(s9.show("Links.md")) == LINES


def test_s9_link_kinds_are_recorded(s9: Vault) -> None:
    kinds = {lk["line"]: lk["kind"] for lk in s9.show("Links.md")["links"]}
    assert kinds[1] == "wikilink"
    assert kinds[15] == "embed"
    assert kinds[17] == kinds[18] == kinds[19] == "markdown"


def test_s9_nothing_is_a_link_or_tag_in_code_math_html_escapes_and_tables(s9: Vault) -> None:
    shown = s9.show("Nothing.md")
    assert [lk["text"] for lk in shown["links"]] == []
    assert shown["tags"] == []


def test_s9_dup_tie_break_prefers_the_source_folder(s9: Vault) -> None:
    assert s9.targets("A/Start.md") == ["A/B/Dup.md"]
    assert s9.targets("C/Gamma.md") == ["C/Dup.md"]


def test_s9_comment_link_and_tag_are_indexed(s9: Vault) -> None:
    assert s9.show("Links.md")["tags"] == ["t"]


def test_s9_health_broken_links_exact(s9: Vault) -> None:
    result = s9.run("health")
    data = pure_json(result, ok=(1,))
    assert broken(data) == [
        ("Links.md", 11, 1, "[[wrong/Note]]", "wrong/Note"),
        ("Links.md", 13, 1, "[[pic]]", "pic"),
        ("Links.md", 18, 1, "[t](My%20Note.md)", "My Note"),
        ("Links.md", 19, 1, "[t](<My Note.md>)", "My Note"),
        ("Links.md", 20, 3, "[[x]]", "x"),
    ]
    assert data["brokenLinkCount"] == 5


def test_s9_health_orphans_unlinked_and_ambiguity_warnings(s9: Vault) -> None:
    data = s9.health()
    assert paths_of(data["orphanNotes"]) == ["Nothing.md"]
    assert data["orphanCount"] == 1
    assert paths_of(data["unlinkedNotes"]) == ["A/Start.md", "Links.md"]
    # [[Dup]] from A/Start.md and C/Gamma.md are tie-breaks; nothing in Links.md is ambiguous
    assert warned_paths(data) == {"A/Start.md", "C/Gamma.md"}
    assert data["errors"] == []


def test_s9_attachments_are_never_notes(s9: Vault) -> None:
    assert s9.paths() == [
        "A/B/Dup.md",
        "A/Start.md",
        "C/Dup.md",
        "C/Gamma.md",
        "Links.md",
        "Note.md",
        "Nothing.md",
        "v1.2.md",
    ]


def test_s9_graph_nodes_and_edges(s9: Vault) -> None:
    g = s9.graph()
    kinds = {n["id"]: n["kind"] for n in g["nodes"]}
    assert kinds["img/pic.png"] == "attachment"
    assert kinds["pic"] == kinds["x"] == kinds["My Note"] == kinds["wrong/Note"] == "unresolved"
    assert kinds["Note.md"] == "note"
    edges = {(e["source"], e["target"]): e["count"] for e in g["edges"]}
    # per occurrence: lines 1-8, 17, 24, 26 point at Note.md
    assert edges[("Links.md", "Note.md")] == 11
    assert edges[("Links.md", "A/B/Dup.md")] == 3
    assert edges[("Links.md", "img/pic.png")] == 2
    assert edges[("Links.md", "My Note")] == 2
    assert edges[("Links.md", "C/Gamma.md")] == 1
    assert all(s != t for s, t in edges)


# -- §1 which files are in the vault ------------------------------------------------------------


def test_hidden_paths_never_appear_and_do_not_resolve(v: Vault) -> None:
    v.write("Main.md", "[[secret]] [[Trashed]] [[.hidden]] [[cfg]] #main\n")
    v.write(".obsidian/cfg.md", "[[Main]]\n")
    v.write(".trash/Trashed.md", "[[Main]] #trash\n")
    v.write(".hidden.md", "[[Main]]\n")
    v.write("sub/.git/secret.md", "[[Main]]\n")
    v.write("sub/.private/deep/secret.md", "[[Main]]\n")
    assert v.paths() == ["Main.md"]
    h = v.health()
    assert sorted(b["target"] for b in h["brokenLinks"]) == [".hidden", "Trashed", "cfg", "secret"]
    # no hidden note ever linked to Main.md: it is unlinked, not linked-in
    assert paths_of(h["unlinkedNotes"]) == ["Main.md"]
    g = v.graph()
    assert not any(
        "." in n["id"].split("/")[0][:1] for n in g["nodes"] if n["kind"] != "unresolved"
    )
    assert v.show("Main.md")["backlinks"] == []


def test_attachments_of_every_kind_are_link_targets_not_notes(v: Vault) -> None:
    v.write("Main.md", "[[doc.pdf#page=3]] [[board.canvas]] ![a](files/style.css) [[Pic.PNG]]\n")
    v.write_bytes("files/doc.pdf", b"%PDF-1.4")
    v.write("board.canvas", "{}")
    v.write("files/style.css", "body{}")
    v.write_bytes("pic.png", b"\x89PNG")
    assert v.paths() == ["Main.md"]
    assert v.targets("Main.md") == ["files/doc.pdf", "board.canvas", "files/style.css", "pic.png"]
    kinds = {n["id"]: n["kind"] for n in v.graph()["nodes"]}
    assert kinds == {
        "Main.md": "note",
        "files/doc.pdf": "attachment",
        "board.canvas": "attachment",
        "files/style.css": "attachment",
        "pic.png": "attachment",
    }


def test_nfd_file_names_are_reported_nfc_and_resolve(v: Vault) -> None:
    nfd = unicodedata.normalize("NFD", "été")
    assert nfd != "été"
    v.write(f"{nfd}.md", "#été\n")
    v.write(f"Caf{unicodedata.normalize('NFD', 'é')}/x.md", "")
    v.write("Links.md", "[[été]]\n[[ÉTÉ]]\n[[" + nfd + "]]\n[t](%C3%A9t%C3%A9.md)\n[[Café/x]]\n")
    assert v.paths() == ["Café/x.md", "Links.md", "été.md"]
    assert v.targets("Links.md") == ["été.md", "été.md", "été.md", "été.md", "Café/x.md"]
    assert v.show("été.md")["path"] == "été.md"
    assert v.show("été")["title"] == "été"
    ids = {n["id"] for n in v.graph()["nodes"]}
    assert "été.md" in ids and "Café/x.md" in ids
    assert v.health()["brokenLinks"] == []


def _excluded_vault(v: Vault, filters: list[str]) -> None:
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": filters}))
    v.write("Main.md", "[[Old]] [[Archived thing]]\n")
    v.write("Archive/Old.md", "---\ntags: [ancient]\n---\n# Old\n[[Nowhere]]\n")
    v.write("Archive/Archived thing.md", "")


def test_excluded_files_resolve_links_but_are_left_out_of_reports(v: Vault) -> None:
    _excluded_vault(v, ["Archive/"])
    assert v.targets("Main.md") == ["Archive/Old.md", "Archive/Archived thing.md"]
    assert v.paths() == ["Main.md"]
    h = v.health()
    # the excluded note's own broken link and its orphan-ness are not reported
    assert h["brokenLinks"] == []
    assert v.run("health").code == 0
    assert h["orphanNotes"] == []
    assert paths_of(h["unlinkedNotes"]) == ["Main.md"]
    assert v.scan("--tag", "ancient")["notes"] == []
    assert v.json("lookup", "ancient")["candidates"] == []


def test_excluded_files_do_not_seed_lookup(v: Vault) -> None:
    _excluded_vault(v, ["Archive/"])
    v.write("Archive/Linker.md", "[[Main]] [[Quuxlink]]\n")
    for query in ("Old", "Quuxlink"):
        lookup = v.json("lookup", query)
        assert lookup["candidates"] == [], query
        assert "Archive/" not in json.dumps(lookup), query


def test_excluded_files_filter_without_trailing_slash(v: Vault) -> None:
    _excluded_vault(v, ["Archive"])
    assert v.targets("Main.md") == ["Archive/Old.md", "Archive/Archived thing.md"]
    assert v.paths() == ["Main.md"]


# -- §2 frontmatter ------------------------------------------------------------------------------


def test_frontmatter_must_start_at_byte_0_and_close_with_exact_dashes(v: Vault) -> None:
    v.write("Ok.md", "---\ntags: [ok]\ntitle: Fine\n---\nbody\n")
    v.write("Late.md", "\n---\ntags: [late]\n---\n")
    v.write("Unclosed.md", "---\ntags: [open]\nbody\n")
    v.write("Spaces.md", "---\ntags: [sp]\n--- \nstill yaml?\n---\n")
    v.write("Crlf.md", "---\r\ntags: [crlf]\r\ntitle: Win\r\n---\r\n[[Ok]] #inline\r\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    assert notes["Ok.md"]["tags"] == ["ok"] and notes["Ok.md"]["title"] == "Fine"
    assert notes["Late.md"]["tags"] == []
    assert notes["Unclosed.md"]["tags"] == []
    assert notes["Crlf.md"]["tags"] == ["crlf", "inline"] and notes["Crlf.md"]["title"] == "Win"
    assert v.targets("Crlf.md") == ["Ok.md"]
    assert v.show("Crlf.md")["links"][0]["line"] == 5


def test_broken_yaml_is_an_error_but_the_body_still_counts(v: Vault) -> None:
    v.write("Target.md", "")
    v.write("Bad.md", "---\ntags: [a\ntitle: x\n---\n# Heading\n[[Target]] #bodytag [[Gone]]\n")
    v.write("List.md", "---\n- a\n- b\n---\n[[Target]]\n")
    v.write("Scalar.md", "---\njust text\n---\n#s\n")
    scan = v.scan()
    assert scan["noteCount"] == 4
    assert sorted(e["path"] for e in scan["errors"]) == ["Bad.md", "List.md", "Scalar.md"]
    assert scan["errorCount"] == 3
    assert all(e["message"] for e in scan["errors"])
    notes = {n["path"]: n for n in scan["notes"]}
    assert notes["Bad.md"]["tags"] == ["bodytag"]
    assert notes["Bad.md"]["title"] == "Bad"
    assert notes["Scalar.md"]["tags"] == ["s"]
    assert v.targets("Bad.md") == ["Target.md", "BROKEN:Gone"]
    h = v.health()
    assert sorted(e["path"] for e in h["errors"]) == ["Bad.md", "List.md", "Scalar.md"]
    assert [b["source"] for b in h["brokenLinks"]] == ["Bad.md"]
    assert paths_of(h["orphanNotes"]) == ["Scalar.md"]
    assert v.show("Target.md")["backlinks"] and len(v.show("Target.md")["backlinks"]) == 2


def test_yaml_1_2_scalars_and_case_insensitive_keys(v: Vault) -> None:
    v.write(
        "Y.md",
        "---\nTags: [yes, no, on, off]\nALIASES: [Yes Alias]\nID: 20230101\nType: yes\n"
        "Status: off\ncreated: 2023-01-02\n---\n",
    )
    n = v.note("Y.md")
    assert n["tags"] == ["yes", "no", "on", "off"]
    assert n["aliases"] == ["Yes Alias"]
    assert (n["id"], n["type"], n["status"]) == ("20230101", "yes", "off")
    props = v.show("Y.md")["properties"]
    assert json.dumps(props).find("2023-01-02") >= 0


def test_bom_before_frontmatter(v: Vault) -> None:
    # Obsidian decodes with a BOM-stripping TextDecoder, so the properties are seen
    v.write_bytes("Bom.md", "\ufeff---\ntags: [bom]\n---\n[[Bom]] #inline\n".encode())
    n = v.note("Bom.md")
    assert n["tags"] == ["bom", "inline"]
    assert v.show("Bom.md")["links"][0]["line"] == 4


# -- §3 title and identity -----------------------------------------------------------------------


def test_title_is_frontmatter_title_if_non_empty_string_else_stem(v: Vault) -> None:
    v.write("Custom.md", "---\ntitle: Zebra Quartz\n---\n# H\n")
    v.write("Empty.md", "---\ntitle: ''\n---\n")
    v.write("Number.md", "---\ntitle: 42\n---\n")
    v.write("Heading.md", "# The First Heading\n")
    titles = {n["path"]: n["title"] for n in v.scan()["notes"]}
    assert titles == {
        "Custom.md": "Zebra Quartz",
        "Empty.md": "Empty",
        "Number.md": "Number",
        "Heading.md": "Heading",
    }
    shown = v.show("Heading.md")
    assert (shown["stem"], shown["firstH1"], shown["frontmatterTitle"]) == (
        "Heading",
        "The First Heading",
        None,
    )
    # lookup matches all three
    for query, path in (("Quartz", "Custom.md"), ("Custom", "Custom.md"), ("First", "Heading.md")):
        found = [c["path"] for c in v.json("lookup", query)["candidates"]]
        assert path in found, (query, found)


def test_id_type_status_are_strings_or_null(v: Vault) -> None:
    v.write("A.md", "---\nid: 7\ntype: 3.5\nstatus: true\n---\n")
    v.write("B.md", "")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    assert (notes["A.md"]["id"], notes["A.md"]["type"]) == ("7", "3.5")
    assert isinstance(notes["A.md"]["status"], str)
    assert (notes["B.md"]["id"], notes["B.md"]["type"], notes["B.md"]["status"]) == (
        None,
        None,
        None,
    )


# -- §4 tags ------------------------------------------------------------------------------------


FRONTMATTER_TAG_CASES = [
    ('tags: [a, "#b", c/d]', ["a", "b", "c/d"], False),
    ("tags: solo", ["solo"], False),
    ("tags: a, b", [], True),
    ("tags: [yes]", ["yes"], False),
    ("tags: [2023]", [], True),
    ('tags: ["2023"]', ["2023"], False),
    ("tags: '#hash'", ["hash"], False),
    ('tags:\n  - "#x"\n  - y', ["x", "y"], False),
    ("tags: [日本語, 🎉]", ["日本語", "🎉"], False),
    ("tags: ['', ok]", ["ok"], True),
    ("tag: single", [], True),
    ("tags: [Proj, proj, PROJ]", ["Proj"], False),
]


def test_frontmatter_tags(v: Vault) -> None:
    v.write("Other.md", "")
    for n, (frontmatter, _tags, _warned) in enumerate(FRONTMATTER_TAG_CASES):
        v.write(f"T{n:02}.md", f"---\n{frontmatter}\n---\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    warned = warned_paths(v.health())
    got = {
        fm: (notes[f"T{n:02}.md"]["tags"], f"T{n:02}.md" in warned)
        for n, (fm, _t, _w) in enumerate(FRONTMATTER_TAG_CASES)
    }
    assert got == {fm: (tags, w) for fm, tags, w in FRONTMATTER_TAG_CASES}


INLINE_TAGS = """\
#日本語 #🎉 #tag. #don't #tag。 #y1984 #12-3 #1984
**bold**#afterbold _em_#afterem [[Other]]#afterlink `code`#aftercode
#Heading
# Not a tag heading
#Foo and #foo and #FOO
#a/b/c #ab\u2014cd #ef\u2e1agh
text#glued https://x.y/#frag (#paren) #under_score #dash-ed
"""


def test_inline_tags(v: Vault) -> None:
    v.write("Other.md", "")
    v.write("T.md", INLINE_TAGS)
    tags = v.note("T.md")["tags"]
    assert sorted(tags) == sorted(
        [
            "日本語",
            "🎉",
            "tag",
            "don",
            "tag。",
            "y1984",
            "12-3",
            "afterbold",
            "afterem",
            "afterlink",
            "aftercode",
            "Heading",
            "Foo",
            "a/b/c",
            "ab",
            "ef",
            "under_score",
            "dash-ed",
        ]
    )
    assert len(tags) == len(set(tags))


def test_tags_dedupe_across_frontmatter_and_body_keeping_first_spelling(v: Vault) -> None:
    v.write("T.md", "---\ntags: [Proj]\n---\n#proj #PROJ #Other #other\n")
    assert v.note("T.md")["tags"] == ["Proj", "Other"]


def test_nested_tags_filter_by_every_prefix_case_insensitively(v: Vault) -> None:
    v.write("T.md", "#a/b/c\n")
    v.write("U.md", "#ab\n")
    for tag, expected in (
        ("a", ["T.md"]),
        ("a/b", ["T.md"]),
        ("A/B/C", ["T.md"]),
        ("b", []),
        ("ab", ["U.md"]),
    ):
        assert paths_of(v.scan("--tag", tag)["notes"]) == expected, tag


def test_tags_in_callouts_and_lists_count_but_not_in_their_code(v: Vault) -> None:
    v.write("Note.md", "")
    v.write(
        "C.md",
        "> [!note] Title\n> See [[Note]] #calltag\n>\n> ```\n> [[Nope1]] #nope1\n> ```\n\n"
        "- item\n  ```js\n  [[Nope2]] #nope2\n  ```\n- after [[Note#H]] #listtag\n"
        "  1. nested\n     ~~~\n     [[Nope3]]\n     ~~~\n",
    )
    assert sorted(v.note("C.md")["tags"]) == ["calltag", "listtag"]
    assert v.targets("C.md") == ["Note.md", "Note.md"]


# -- §5 aliases ---------------------------------------------------------------------------------


def test_aliases_are_lookup_keys_never_link_targets(v: Vault) -> None:
    v.write("Machine Learning.md", "---\naliases: [AI, ' Trimmed ']\nalias: Ignored\n---\n")
    v.write("Comma.md", "---\naliases: AI, ML\n---\n")
    v.write("User.md", "[[AI]] [[ML]]\n")
    assert v.note("Machine Learning.md")["aliases"] == ["AI", "Trimmed"]
    assert v.note("Comma.md")["aliases"] == ["AI, ML"]
    assert v.targets("User.md") == ["BROKEN:AI", "BROKEN:ML"]
    assert "Machine Learning.md" in warned_paths(v.health())
    found = [c["path"] for c in v.json("lookup", "Trimmed")["candidates"]]
    assert "Machine Learning.md" in found


# -- §6 links: frontmatter, odd forms ------------------------------------------------------------


def test_frontmatter_links(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("Gamma.md", "")
    v.write(
        "F.md",
        "---\nlink: \"[[Note]]\"\nrelated: ['[[Gamma|g]]', '[[Missing]]']\n"
        "deep: {a: {b: ['[[Note#H]]']}}\nx: \"see [[Note]]\"\ny: [[Note]]\n"
        "cover: '![[Note]]'\n---\nbody\n",
    )
    links = v.show("F.md")["links"]
    assert [(lk["target"] if not lk["broken"] else "BROKEN:" + lk["key"]) for lk in links] == [
        "Note.md",
        "Gamma.md",
        "BROKEN:Missing",
        "Note.md",
    ]
    assert {lk["kind"] for lk in links} == {"frontmatter"}


def test_odd_wikilink_forms(v: Vault) -> None:
    v.write("Note.md", "# Note\n^block\n")
    v.write(
        "W.md",
        "[[Note|]]\n[[Note#]]\n![[Note#^block]]\n[[a [[Note]]\n[[Missing.md]]\n"
        "[[Folder/Missing#h|d]]\n[[Foo]] [[foo]]\n",
    )
    assert v.targets("W.md") == [
        "Note.md",
        "Note.md",
        "Note.md",
        "Note.md",
        "BROKEN:Missing",
        "BROKEN:Folder/Missing",
        "BROKEN:Foo",
        "BROKEN:foo",
    ]
    nodes = {n["id"] for n in v.graph()["nodes"] if n["kind"] == "unresolved"}
    assert nodes == {"Missing", "Folder/Missing", "Foo", "foo"}


def test_markdown_link_forms(v: Vault) -> None:
    v.write("A/Start.md", "")
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("My Note.md", "")
    v.write("Note.md", "")
    v.write_bytes("img/pic.png", b"\x89PNG")
    v.write(
        "A/B/M.md",
        "[up](../Start.md)\n[here](./Dup.md)\n[sp](../../My%20Note.md)\n[angle](<../../My Note.md>)\n"
        "[root](/Note.md)\n[noext](../../Note)\n[frag](../../Note.md#Heading)\n![img](pic.png)\n"
        "[bare](Note.md)\n[enc](%4Eote.md)\n",
    )
    assert v.targets("A/B/M.md") == [
        "A/Start.md",
        "A/B/Dup.md",
        "My Note.md",
        "My Note.md",
        "Note.md",
        "Note.md",
        "Note.md",
        "img/pic.png",
        "Note.md",
        "Note.md",
    ]


def test_link_positions_are_one_based_file_lines_and_character_columns(v: Vault) -> None:
    v.write("P.md", "---\ntitle: t\n---\n日本語 [[Gone]]\n\tx [t](Gone2.md)\n")
    h = v.health()
    assert broken(h) == [
        ("P.md", 4, 5, "[[Gone]]", "Gone"),
        ("P.md", 5, 4, "[t](Gone2.md)", "Gone2"),
    ]


def test_dollar_amounts_are_not_math(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("M.md", "It costs $5 and [[Note]] costs $10.\n")
    assert v.targets("M.md") == ["Note.md"]


def test_unclosed_backtick_does_not_hide_a_link(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("M.md", "a stray ` backtick then [[Note]] #tagged\n")
    assert v.targets("M.md") == ["Note.md"]
    assert v.note("M.md")["tags"] == ["tagged"]


def test_list_continuation_indented_four_spaces_is_not_code(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("L.md", "- item\n\n    [[Note]] #cont\n")
    assert v.targets("L.md") == ["Note.md"]


def test_multiline_comment_links_are_indexed(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("K.md", "%%\n[[Note]] #hidden\n%%\n")
    assert v.targets("K.md") == ["Note.md"]
    assert v.note("K.md")["tags"] == ["hidden"]


# -- §7 resolution -------------------------------------------------------------------------------


def test_bare_ambiguous_link_from_vault_root(v: Vault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Root.md", "[[Dup]]\n")
    # every candidate is inside the root folder: shortest path wins
    assert v.targets("Root.md") == ["C/Dup.md"]
    assert "Root.md" in warned_paths(v.health())


def test_relative_and_absolute_wikilinks(v: Vault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Note.md", "")
    v.write(
        "A/B/Src.md",
        "[[./Dup]]\n[[../../C/Dup]]\n[[/C/Dup]]\n[[/Dup]]\n[[./Missing]]\n[[/Note]]\n[[../Dup]]\n",
    )
    assert v.targets("A/B/Src.md") == [
        "A/B/Dup.md",
        "C/Dup.md",
        "C/Dup.md",
        "BROKEN:/Dup",
        "BROKEN:./Missing",
        "Note.md",
        "BROKEN:../Dup",
    ]


def test_wrong_folder_is_broken_even_for_a_unique_name(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("S.md", "[[wrong/Note]] [[ote]] [[Not]]\n")
    assert v.targets("S.md") == ["BROKEN:wrong/Note", "BROKEN:ote", "BROKEN:Not"]


def test_upper_case_attachment_and_note_extensions(v: Vault) -> None:
    v.write_bytes("pic.PNG", b"\x89PNG")
    v.write("S.md", "[[pic.png]] ![[PIC.png]]\n")
    assert v.targets("S.md") == ["pic.PNG", "pic.PNG"]


def test_a_folder_named_like_a_note_is_not_a_note(v: Vault) -> None:
    v.write("x.md/inner.md", "[[x]]\n")
    v.write("S.md", "[[inner]] [[x.md/inner]]\n")
    assert v.paths() == ["S.md", "x.md/inner.md"]
    assert v.targets("S.md") == ["x.md/inner.md", "x.md/inner.md"]
    assert v.targets("x.md/inner.md") == ["BROKEN:x"]


def test_dotted_stems_and_extension_retry(v: Vault) -> None:
    v.write("v1.2.md", "")
    v.write("archive.tar.md", "")
    v.write_bytes("archive.tar.gz", b"x")
    v.write("S.md", "[[v1.2]] [[V1.2.md]] [[archive.tar]] [[archive.tar.gz]] [[v1]]\n")
    assert v.targets("S.md") == [
        "v1.2.md",
        "v1.2.md",
        "archive.tar.md",
        "archive.tar.gz",
        "BROKEN:v1",
    ]


# -- §7 re-resolution ---------------------------------------------------------------------------


def test_links_re_resolve_when_the_target_is_created_deleted_renamed(v: Vault) -> None:
    v.write("Src.md", "[[Target]] ![[later.png]]\n")
    age(v.root)
    assert v.targets("Src.md") == ["BROKEN:Target", "BROKEN:later.png"]
    assert v.run("health").code == 1

    v.write("Target.md", "")
    v.write_bytes("later.png", b"x")
    assert v.targets("Src.md") == ["Target.md", "later.png"]
    assert v.health()["brokenLinks"] == []
    assert v.run("health").code == 0
    assert [b["source"] for b in v.show("Target.md")["backlinks"]] == ["Src.md"]

    (v.root / "Target.md").rename(v.root / "Renamed.md")
    assert v.targets("Src.md") == ["BROKEN:Target", "later.png"]
    assert paths_of(v.health()["orphanNotes"]) == ["Renamed.md"]

    (v.root / "sub").mkdir()
    (v.root / "Renamed.md").rename(v.root / "sub" / "target.md")
    assert v.targets("Src.md") == ["sub/target.md", "later.png"]

    (v.root / "sub" / "target.md").unlink()
    (v.root / "later.png").unlink()
    assert v.targets("Src.md") == ["BROKEN:Target", "BROKEN:later.png"]
    assert v.run("health").code == 1


def test_a_new_closer_candidate_takes_over_an_ambiguous_link(v: Vault) -> None:
    v.write("A/Start.md", "[[Gamma]] [[Dup]]\n")
    v.write("C/Gamma.md", "")
    v.write("A/B/Dup.md", "")
    age(v.root)
    assert v.targets("A/Start.md") == ["C/Gamma.md", "A/B/Dup.md"]
    v.write("A/Gamma.md", "")
    v.write("A/Dup.md", "")
    assert v.targets("A/Start.md") == ["A/Gamma.md", "A/Dup.md"]
    (v.root / "A" / "Gamma.md").unlink()
    (v.root / "A" / "Dup.md").unlink()
    assert v.targets("A/Start.md") == ["C/Gamma.md", "A/B/Dup.md"]


def test_folder_rename_re_resolves_path_links(v: Vault) -> None:
    v.write("Src.md", "[[Old/Note]] [[Note]]\n")
    v.write("Old/Note.md", "")
    age(v.root)
    assert v.targets("Src.md") == ["Old/Note.md", "Old/Note.md"]
    (v.root / "Old").rename(v.root / "New")
    assert v.targets("Src.md") == ["BROKEN:Old/Note", "New/Note.md"]
    assert v.paths() == ["New/Note.md", "Src.md"]


# -- §8 reports ----------------------------------------------------------------------------------


def test_orphans_and_unlinked(v: Vault) -> None:
    v.write("Self.md", "# H\n[[Self]] [[#H]] [[#^id]] ![[Self#H]]\n")
    v.write("BrokenOnly.md", "[[Nowhere]]\n")
    v.write("Embedder.md", "![[Embedded]]\n")
    v.write("Embedded.md", "")
    v.write("Fm.md", '---\nrel: "[[FmTarget]]"\n---\n')
    v.write("FmTarget.md", "")
    v.write("ToAttachment.md", "![[pic.png]]\n")
    v.write_bytes("pic.png", b"x")
    v.write("Lonely.md", "nothing here #tag\n")
    v.write("Empty.md", "")
    h = v.health()
    assert paths_of(h["orphanNotes"]) == ["Empty.md", "Lonely.md", "Self.md"]
    assert paths_of(h["unlinkedNotes"]) == [
        "BrokenOnly.md",
        "Embedder.md",
        "Fm.md",
        "ToAttachment.md",
    ]
    assert h["orphanCount"] == 3
    g = v.graph()
    assert all(e["source"] != e["target"] for e in g["edges"])
    ids = {n["id"] for n in g["nodes"]}
    assert "" not in ids and "#H" not in ids and "Self" not in ids
    assert {lk["key"] for lk in v.show("Self.md")["links"]} == {None}
    assert all(not lk["broken"] for lk in v.show("Self.md")["links"])


def test_graph_counts_every_occurrence_and_skips_self_links(v: Vault) -> None:
    v.write(
        "One.md",
        "# Head\n[[Two]] [[Two]] [t](Two.md) [[One]] [[#Head]] [[#^id]] ![[pic.png]] [[Missing]]\n",
    )
    v.write("Two.md", "![[One]]\n")
    v.write_bytes("pic.png", b"x")
    v.write_bytes("unused.png", b"x")
    g = v.graph()
    nodes = {n["id"]: (n["label"], n["kind"]) for n in g["nodes"]}
    assert nodes["One.md"] == ("One", "note")
    assert nodes["Two.md"] == ("Two", "note")
    assert nodes["pic.png"][1] == "attachment"
    assert nodes["Missing"] == ("Missing", "unresolved")
    assert set(nodes) <= {"One.md", "Two.md", "pic.png", "Missing", "unused.png"}
    edges = sorted((e["source"], e["target"], e["count"]) for e in g["edges"])
    assert edges == [
        ("One.md", "Missing", 1),
        ("One.md", "Two.md", 3),
        ("One.md", "pic.png", 1),
        ("Two.md", "One.md", 1),
    ]


def test_warnings_for_ignored_properties(v: Vault) -> None:
    v.write("Clean.md", "---\ntags: [fine]\naliases: [Fine]\n---\n")
    v.write("Tag.md", "---\ntag: x\n---\n")
    v.write("Alias.md", "---\nalias: x\n---\n")
    v.write("Space.md", "---\ntags: [has space]\n---\n")
    v.write("NonStr.md", "---\naliases: [1, ok]\n---\n")
    h = v.health()
    assert warned_paths(h) == {"Tag.md", "Alias.md", "Space.md", "NonStr.md"}
    assert all(w["message"] for w in h["warnings"])
    assert v.note("NonStr.md")["aliases"] == ["ok"]


def test_status_counts_agree_with_health(v: Vault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Start.md", "[[Dup]] [[Gone]]\n")
    v.write("Space.md", "---\ntags: a, b\n---\n")
    h = v.health()
    counts = v.json("status")["counts"]
    assert counts["brokenLinks"] == h["brokenLinkCount"] == 1
    assert counts["warnings"] == len(h["warnings"]) == 2


def test_status_note_count_agrees_with_scan_and_names_the_excluded(v: Vault) -> None:
    """SEMANTICS 1: Excluded files stay out of reports; status counts them apart."""
    v.write("Keep.md", "[[Old]]\n")
    v.write("Archive/Old.md", "")
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Archive/"]}')
    scan = v.json("scan")
    counts = v.json("status")["counts"]
    assert counts["notes"] == scan["noteCount"] == 1
    assert counts["excludedNotes"] == 1


# -- real-world file system oddities -------------------------------------------------------------


def test_crlf_everywhere(v: Vault) -> None:
    v.write_bytes(
        "W.md",
        b"---\r\ntags:\r\n  - win\r\naliases: [Dos]\r\n---\r\n# Title Line\r\n[[Note]]\r\n"
        b"```\r\n[[Hidden]]\r\n```\r\n#end\r\n",
    )
    v.write("Note.md", "")
    n = v.note("W.md")
    assert n["tags"] == ["win", "end"] and n["aliases"] == ["Dos"]
    assert v.show("W.md")["firstH1"] == "Title Line"
    links = v.show("W.md")["links"]
    assert [(lk["target"], lk["line"], lk["column"], lk["text"]) for lk in links] == [
        ("Note.md", 7, 1, "[[Note]]")
    ]


def test_special_characters_in_stems(v: Vault) -> None:
    v.write("C# Notes.md", "")
    v.write("a^b.md", "")
    v.write("x|y.md", "")
    v.write("semi;colon & more (1).md", "")
    v.write("emoji 🎉.md", "")
    v.write("S.md", "[[semi;colon & more (1)]] [[emoji 🎉]] [t](emoji%20%F0%9F%8E%89.md)\n")
    assert v.paths() == sorted(
        ["C# Notes.md", "a^b.md", "x|y.md", "semi;colon & more (1).md", "emoji 🎉.md", "S.md"]
    )
    assert v.targets("S.md") == ["semi;colon & more (1).md", "emoji 🎉.md", "emoji 🎉.md"]
    for name in ("C# Notes.md", "a^b.md", "x|y.md"):
        assert v.show(name)["path"] == name


def test_zero_byte_note(v: Vault) -> None:
    v.write("Zero.md", "")
    assert v.scan() == {
        "notes": [
            {
                "id": None,
                "title": "Zero",
                "type": None,
                "status": None,
                "path": "Zero.md",
                "tags": [],
                "aliases": [],
            }
        ],
        "errors": [],
        "noteCount": 1,
        "errorCount": 0,
    }
    assert paths_of(v.health()["orphanNotes"]) == ["Zero.md"]


def test_fifo_and_symlink_loop_do_not_hang_or_crash(v: Vault) -> None:
    v.write("Main.md", "[[Note]]\n")
    v.write("Note.md", "")
    os.mkfifo(v.root / "pipe.md")
    (v.root / "loop").symlink_to(v.root, target_is_directory=True)
    (v.root / "sub").mkdir()
    (v.root / "sub" / "up").symlink_to("..", target_is_directory=True)
    scan = v.scan()
    paths = [n["path"] for n in scan["notes"]]
    assert "Main.md" in paths and "Note.md" in paths
    assert not any(p.count("/") > 3 for p in paths), paths
    assert "pipe.md" not in paths
    assert v.targets("Main.md")[0] in {"Note.md"}
    v.health()


def test_invalid_utf8_name_and_content_are_errors_not_crashes(v: Vault) -> None:
    v.write("Good.md", "[[Good]]\n")
    bad_name = os.fsencode(v.root) + b"/bad\xff.md"
    with open(bad_name, "wb") as fh:
        fh.write(b"hello\n")
    v.write_bytes("Latin1.md", b"caf\xe9 #ok [[Good]]\n")
    v.write_bytes("Binary.md", b"\x00\x01\x02\xff" * 100)
    scan = v.scan()
    assert "Good.md" in [n["path"] for n in scan["notes"]]
    assert sorted(e["path"] for e in scan["errors"]) == ["Binary.md", "Latin1.md", "bad\ufffd.md"]
    assert scan["errorCount"] == 3
    assert v.note("Latin1.md")["tags"] == ["ok"]
    v.health()
    v.graph()


def test_nfc_and_nfd_twins_on_disk_do_not_crash(v: Vault) -> None:
    v.write("été.md", "")
    v.write(unicodedata.normalize("NFD", "été") + ".md", "")
    v.write("S.md", "[[été]]\n")
    scan = v.scan()
    assert sorted(n["path"] for n in scan["notes"]) == ["S.md", "été.md"]
    assert [e["path"] for e in scan["errors"]] == ["été.md"]
    assert v.targets("S.md") == ["été.md"]


def test_vault_path_with_trailing_slash_or_through_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    real = Vault(root, tmp_path / "state" / "index.db")
    real.write("A/Note.md", "[[B]]\n")
    real.write("B.md", "")
    expected = real.paths()
    assert expected == ["A/Note.md", "B.md"]
    data = pure_json(run_cli("scan", "--vault", str(root) + "/", "--db", real.db, "--json"))
    assert sorted(n["path"] for n in data["notes"]) == expected
    assert data["noteCount"] == 2
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    for db in (real.db, tmp_path / "state" / "other.db"):
        data = pure_json(run_cli("scan", "--vault", link, "--db", db, "--json"))
        assert sorted(n["path"] for n in data["notes"]) == expected
        shown = pure_json(run_cli("show", "A/Note.md", "--vault", link, "--db", db, "--json"))
        assert shown["links"][0]["target"] == "B.md"


def test_db_inside_the_vault_through_a_symlinked_vault_path_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    write(root / "N.md", "")
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    result = run_cli("scan", "--vault", link, "--db", root / "idx.db", "--json")
    assert (result.code, result.stdout) == (2, "")
    assert not (root / "idx.db").exists()


# -- exit codes and stdout purity -----------------------------------------------------------------


def test_health_exit_code_is_1_with_broken_links_in_both_modes(v: Vault) -> None:
    v.write("S.md", "[[Gone]]\n")
    assert pure_json(v.run("health"), ok=(1,))["brokenLinkCount"] == 1
    text = run_cli("health", "--vault", v.root, "--db", v.db)
    assert text.code == 1 and "Gone" in text.stdout
    v.write("Gone.md", "")
    assert v.run("health").code == 0
    assert run_cli("health", "--vault", v.root, "--db", v.db).code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("health", "--bogus"),
        ("scan", "--vault", "{missing}"),
        ("scan", "--vault", "{file}"),
        ("scan", "--db", "{vault}/idx.db"),
        ("scan", "--db", "{vault}/deep/er/idx.db"),
        ("show",),
        ("lookup", "x", "--limit", "abc"),
        ("frobnicate",),
    ],
)
def test_bad_usage_is_exit_2_with_empty_stdout(tmp_path: Path, args: tuple[str, ...]) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "N.md", "")
    write(tmp_path / "file.txt", "")
    subst = {"missing": tmp_path / "nope", "file": tmp_path / "file.txt", "vault": vault}
    argv = [a.format(**subst) for a in args]
    if "--vault" not in argv:
        argv += ["--vault", str(vault)]
    if "--db" not in argv:
        argv += ["--db", str(tmp_path / "state" / "i.db")]
    result = run_cli(*argv, "--json")
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.strip() and "Traceback" not in result.stderr
    assert not list(vault.rglob("*.db"))


def test_every_command_prints_exactly_one_json_document(v: Vault) -> None:
    v.write("Note.md", "# Note\n[[Gone]] #t body words\n")
    # the very first command builds the index: progress must stay on stderr
    for args in (
        ("scan",),
        ("health",),
        ("graph",),
        ("show", "Note"),
        ("lookup", "note"),
        ("lookup", "zzzz-nothing"),
        ("status",),
        ("search", "body"),
        ("index",),
        ("index", "--full"),
        ("export", "--format", "connector-v1"),
    ):
        result = v.run(*args)
        pure_json(result, ok=(0, 1))


# -- capture ------------------------------------------------------------------------------------


def _capture(v: Vault, text: str) -> dict[str, Any]:
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


def test_capture_never_escapes_the_vault(v: Vault) -> None:
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


def test_capture_never_overwrites(v: Vault) -> None:
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


def test_capture_title_round_trips_through_yaml(v: Vault) -> None:
    data = _capture(v, 'Idea: "quoted" #tag, yes')
    note = {n["path"]: n for n in v.scan()["notes"]}[data["path"]]
    assert note["title"]
    assert "quoted" in note["title"]


def test_capture_into_a_symlinked_inbox_does_not_leave_the_vault(v: Vault, tmp_path: Path) -> None:
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


# -- more real-world cases ----------------------------------------------------------------------


def test_setext_heading_is_a_first_h1(v: Vault) -> None:
    v.write("Setext.md", "Big Title\n=========\n\ntext\n")
    assert v.show("Setext.md")["firstH1"] == "Big Title"
    assert [c["path"] for c in v.json("lookup", "Big")["candidates"]] == ["Setext.md"]


def test_first_h1_rules(v: Vault) -> None:
    v.write("Fenced.md", "```\n# not this\n```\n#notheading\n# Real One #withtag\n")
    v.write("Closing.md", "# Closed ##\n")
    v.write("Second.md", "## Level two\n# Level one\n")
    shown = v.show("Fenced.md")
    assert shown["firstH1"] in ("Real One #withtag", "Real One")
    assert sorted(shown["tags"]) == ["notheading", "withtag"]
    assert v.show("Closing.md")["firstH1"] == "Closed"
    assert v.show("Second.md")["firstH1"] == "Level one"


def test_no_tags_inside_links_or_escapes(v: Vault) -> None:
    v.write("Note.md", "# Heading\n")
    v.write(
        "T.md",
        "[[Note| #display]] [[#Heading]] [t](#Heading) \\#escaped [#txt](Note.md)\n"
        "- #listitem\n1. #numbered\n> #quoted\n## Section #inheading\n",
    )
    assert sorted(v.note("T.md")["tags"]) == ["inheading", "listitem", "numbered", "quoted"]
    links = v.show("T.md")["links"]
    # [[#Heading]] and [t](#Heading) are self-links: not broken, no edge
    assert [lk["text"] for lk in links] == [
        "[[Note| #display]]",
        "[[#Heading]]",
        "[t](#Heading)",
        "[#txt](Note.md)",
    ]
    assert [lk["target"] for lk in links][::3] == ["Note.md", "Note.md"]
    assert not any(lk["broken"] for lk in links)
    edges = [(e["source"], e["target"]) for e in v.graph()["edges"]]
    assert ("T.md", "T.md") not in edges


def test_tag_boundaries_unicode(v: Vault) -> None:
    v.write(
        "T.md",
        "#tag\u00a0after #日本\u3000語 #👨\u200d👩 #❤\ufe0f #x\u2e80y\n",
    )
    assert sorted(v.note("T.md")["tags"]) == sorted(["tag", "日本", "👨", "❤\ufe0f", "x\u2e80y"])


def test_html_block_ends_at_a_blank_line_and_html_comments_hide_links(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("H.md", "<div>\n\n[[Note]] #after\n\n</div>\n<!-- [[Hidden]] #hid -->\n")
    assert v.targets("H.md") == ["Note.md"]
    assert v.note("H.md")["tags"] == ["after"]


def test_fence_closing_rules(v: Vault) -> None:
    v.write("Note.md", "")
    v.write(
        "F.md",
        "````\n```\n[[x1]]\n````\n~~~\n```\n[[x2]]\n~~~\n   ```\n[[x3]]\n   ```\n"
        "```\n[[x4]]\n```   \n[[Note]]\n",
    )
    assert v.targets("F.md") == ["Note.md"]


def test_unclosed_fence_hides_to_end_of_file(v: Vault) -> None:
    v.write("F.md", "[[Before]]\n```\n[[Inside]] #inside\n")
    assert v.targets("F.md") == ["BROKEN:Before"]
    assert v.note("F.md")["tags"] == []


def test_adjacent_links_and_embeds(v: Vault) -> None:
    v.write("A.md", "")
    v.write("B.md", "")
    v.write_bytes("pic.png", b"x")
    v.write("S.md", "[[A]][[B]]![[A]]![alt|100](pic.png)[b](B.md)\n")
    links = v.show("S.md")["links"]
    assert [(lk["kind"], lk["target"], lk["column"]) for lk in links] == [
        ("wikilink", "A.md", 1),
        ("wikilink", "B.md", 6),
        ("embed", "A.md", 11),
        ("markdown-embed", "pic.png", 17),
        ("markdown", "B.md", 36),
    ]


def test_nbsp_inside_a_name_and_padded_pipes(v: Vault) -> None:
    v.write("My Note.md", "")
    v.write("S.md", "[[My\u00a0Note]] [[ My Note |alias]] [[My Note#h| d ]]\n")
    assert v.targets("S.md") == ["My Note.md", "My Note.md", "My Note.md"]


def test_links_can_not_leave_the_vault(v: Vault, tmp_path: Path) -> None:
    write(tmp_path / "outside.md", "secret")
    v.write("S.md", "[[../outside]] [t](../outside.md) [t](../../../etc/passwd) [[/../outside]]\n")
    shown = v.show("S.md")
    assert [lk["broken"] for lk in shown["links"]] == [True, True, True, True]
    assert v.run("show", "../outside").code == 2
    assert v.run("show", str(tmp_path / "outside.md")).code == 2


def test_folders_and_hidden_files_are_not_link_targets(v: Vault) -> None:
    v.write("A/x.md", "")
    v.write(".trash/Gone.md", "")
    v.write("S.md", "[[A]] [[Gone]] [t](A/)\n")
    assert [lk["broken"] for lk in v.show("S.md")["links"]] == [True, True, True]
    assert v.run("show", ".trash/Gone.md").code == 2


def test_tie_break_folder_test_respects_segment_boundaries(v: Vault) -> None:
    v.write("A/Src.md", "[[Dup]]\n")
    v.write("AA/Dup.md", "")
    v.write("Z/Dup.md", "")
    # neither candidate is inside A/: the shortest path wins
    assert v.targets("A/Src.md") == ["Z/Dup.md"]


def test_tie_break_prefers_same_folder_over_shorter_path(v: Vault) -> None:
    v.write("Deep/er/Src.md", "[[Dup]]\n")
    v.write("Deep/er/Dup.md", "")
    v.write("Dup.md", "")
    v.write("X/Dup.md", "")
    assert v.targets("Deep/er/Src.md") == ["Deep/er/Dup.md"]


def test_frontmatter_link_positions(v: Vault) -> None:
    v.write("F.md", '---\ntitle: x\nrel: "[[Missing]]"\n---\n')
    (b,) = v.health()["brokenLinks"]
    assert (b["source"], b["line"], b["target"], b["text"]) == ("F.md", 3, "Missing", "[[Missing]]")
    assert b["column"] >= 1


def test_more_tag_property_shapes(v: Vault) -> None:
    cases = {
        "Hash.md": ('tags: ["#"]', [], True),
        "Spaced.md": ('tags: "a b"', [], True),
        "Int.md": ("tags: 2023", [], True),
        "Nested.md": ("tags: [[a, b], c]", ["c"], True),
        "Nul.md": ("tags:", [], False),
        "Padded.md": ("tags: [' pad ']", ["pad"], False),
    }
    for name, (fm, _tags, _warned) in cases.items():
        v.write(name, f"---\n{fm}\n---\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    warned = warned_paths(v.health())
    got = {name: (notes[name]["tags"], name in warned) for name in cases}
    assert got == {name: (tags, warned_) for name, (_fm, tags, warned_) in cases.items()}


def test_excluded_single_file_and_live_filter_change(v: Vault) -> None:
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": ["Drafts/Secret.md"]}))
    v.write("Drafts/Secret.md", "")
    v.write("Drafts/Public.md", "")
    v.write("S.md", "[[Secret]] [[Public]]\n")
    age(v.root)
    assert v.paths() == ["Drafts/Public.md", "S.md"]
    assert v.targets("S.md") == ["Drafts/Secret.md", "Drafts/Public.md"]
    # the user adds a folder to "Excluded files": the next report must honour it
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": ["Drafts/"]}))
    assert v.paths() == ["S.md"]
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": []}))
    assert v.paths() == ["Drafts/Public.md", "Drafts/Secret.md", "S.md"]


def test_malformed_app_json_does_not_break_anything(v: Vault) -> None:
    v.write(".obsidian/app.json", "{not json")
    v.write("S.md", "")
    assert v.paths() == ["S.md"]
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": "Drafts/"}))
    assert v.paths() == ["S.md"]


def test_excluded_notes_are_not_exported(v: Vault) -> None:
    _excluded_vault(v, ["Archive/"])
    data = v.json("export", "--format", "connector-v1")
    assert [r["sourceMetadata"]["relativePath"] for r in data["records"]] == ["Main.md"]
    (main,) = data["records"]
    assert "link:Archive/Old.md" in main["tags"]


def test_nfd_target_created_later_resolves_nfc_link(v: Vault) -> None:
    v.write("S.md", "[[été]]\n")
    age(v.root)
    assert v.targets("S.md") == ["BROKEN:été"]
    v.write(unicodedata.normalize("NFD", "été") + ".md", "")
    assert v.targets("S.md") == ["été.md"]
    assert v.health()["brokenLinks"] == []


def test_deleted_notes_leave_the_reports(v: Vault) -> None:
    # (a scan that finds no file at all keeps the index, by design: ARCHITECTURE "Freshness")
    v.write("A.md", "[[B]]\n")
    v.write("B.md", "")
    v.write("C.md", "[[B]]\n")
    age(v.root)
    assert v.paths() == ["A.md", "B.md", "C.md"]
    (v.root / "A.md").unlink()
    (v.root / "B.md").unlink()
    assert v.paths() == ["C.md"]
    assert v.targets("C.md") == ["BROKEN:B"]
    assert v.run("show", "A.md").code == 2


def test_editing_a_link_re_resolves_and_updates_backlinks(v: Vault) -> None:
    v.write("S.md", "[[A]]\n")
    v.write("A.md", "")
    v.write("B.md", "")
    age(v.root)
    assert [b["source"] for b in v.show("A.md")["backlinks"]] == ["S.md"]
    v.write("S.md", "[[B]] and more text\n")
    assert v.show("A.md")["backlinks"] == []
    assert [b["source"] for b in v.show("B.md")["backlinks"]] == ["S.md"]
    assert paths_of(v.health()["orphanNotes"]) == ["A.md"]


def test_show_finds_notes_by_title_and_path_without_extension(v: Vault) -> None:
    v.write("Dir/Custom.md", "---\ntitle: Zebra Quartz\n---\n")
    assert v.show("Zebra Quartz")["path"] == "Dir/Custom.md"
    assert v.show("Dir/Custom")["path"] == "Dir/Custom.md"
    assert v.show("Dir/Custom.md")["path"] == "Dir/Custom.md"


def test_capture_of_nfd_text_returns_a_path_that_exists(v: Vault) -> None:
    data = _capture(v, unicodedata.normalize("NFD", "Café été"))
    assert (v.root / data["path"]).exists() or any(
        unicodedata.normalize("NFC", p.relative_to(v.root).as_posix()) == data["path"]
        for p in v.root.rglob("*.md")
    )
    assert data["path"] in v.paths()
    assert v.show(data["path"])["path"] == data["path"]


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_capture_of_empty_text_is_refused_or_safe(v: Vault, text: str) -> None:
    result = v.run("capture", "-", input=text)
    assert "Traceback" not in result.stderr
    if result.code == 0:
        path = json.loads(result.stdout)["path"]
        name = path.rsplit("/", 1)[-1]
        assert name != ".md" and not name.startswith(".")
    else:
        assert (result.code, result.stdout) == (2, "")


def test_export_links_and_tags(v: Vault) -> None:
    v.write("Dir/S.md", "---\ntags: [fm]\n---\n[[Note]] [[Gone]] #inline\n")
    v.write("Note.md", "")
    data = v.json("export", "--format", "connector-v1")
    rec = {r["sourceMetadata"]["relativePath"]: r for r in data["records"]}["Dir/S.md"]
    assert rec["id"] == "obsidian:Dir/S.md"
    assert rec["title"] == "S"
    assert sorted(rec["tags"]) == sorted(
        ["fm", "inline", "link:Note.md", "link:Gone", "folder:Dir"]
    )


# -- batch 3: paths, YAML abuse, resolution corners ----------------------------------------------


def test_vault_below_a_hidden_folder_still_has_notes(tmp_path: Path) -> None:
    vault = Vault(tmp_path / ".config" / "vault", tmp_path / "state" / "i.db")
    vault.write("Note.md", "[[Other]]\n")
    vault.write("Other.md", "")
    assert vault.paths() == ["Note.md", "Other.md"]
    assert vault.targets("Note.md") == ["Other.md"]


def test_vault_folder_name_in_nfd(tmp_path: Path) -> None:
    vault = Vault(tmp_path / unicodedata.normalize("NFD", "Été vault"), tmp_path / "state" / "i.db")
    vault.write("Note.md", "[[Other]] #x\n")
    vault.write("Other.md", "")
    assert vault.paths() == ["Note.md", "Other.md"]
    assert vault.targets("Note.md") == ["Other.md"]
    assert vault.show("Note.md")["tags"] == ["x"]


def test_relative_vault_path(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "vault"
    write(root / ".obsidian" / "app.json", "{}")
    write(root / "Note.md", "")
    proc = subprocess.run(
        [sys.executable, "-m", "notedex", "scan", "--vault", "vault", "--db", "i.db", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    assert [n["path"] for n in json.loads(proc.stdout)["notes"]] == ["Note.md"]


def test_backslash_and_newline_in_file_names(v: Vault) -> None:
    v.write("a\\b.md", "")
    v.write("line\nbreak.md", "")
    v.write("S.md", "[[a\\b]]\n")
    assert v.paths() == ["S.md", "a\\b.md", "line\nbreak.md"]
    assert v.targets("S.md") == ["a\\b.md"]
    assert v.show("line\nbreak.md")["title"] == "line\nbreak"


def test_show_finds_a_note_with_a_backslash_in_its_name(v: Vault) -> None:
    v.write("a\\b.md", "")
    assert v.show("a\\b.md")["path"] == "a\\b.md"
    assert v.show("a\\b")["path"] == "a\\b.md"


def test_yaml_alias_bomb_and_deep_nesting_are_errors_not_hangs(v: Vault) -> None:
    lines = ["---", 'a0: &a0 ["[[x]]", "q", "q", "q", "q", "q", "q", "q", "q", "q"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    v.write("Bomb.md", "\n".join([*lines, "---", "[[Note]] #bodytag", ""]))
    v.write("Deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n[[Note]]\n")
    v.write("Note.md", "")
    scan = v.scan()
    assert sorted(e["path"] for e in scan["errors"]) == ["Bomb.md", "Deep.md"]
    assert v.targets("Bomb.md") == ["Note.md"]
    assert v.targets("Deep.md") == ["Note.md"]
    assert v.note("Bomb.md")["tags"] == ["bodytag"]


def test_frontmatter_delimiter_corner_cases(v: Vault) -> None:
    v.write("Dots.md", "---\ntags: [dots]\n...\nbody\n")
    v.write("Trailing.md", "---  \ntags: [trailing]\n---\n")
    v.write("Empty.md", "---\n---\nbody #b\n")
    v.write("Comment.md", "---\n# only a comment\n---\n")
    v.write("Glued.md", "---\ntags: [glued]\n---body\n")
    v.write("TitleKey.md", "---\nTITLE: Upper Key\n---\n")
    scan = v.scan()
    notes = {n["path"]: n for n in scan["notes"]}
    assert notes["Dots.md"]["tags"] == []
    assert notes["Trailing.md"]["tags"] == []
    assert notes["Empty.md"]["tags"] == ["b"]
    assert notes["Glued.md"]["tags"] == []
    assert notes["TitleKey.md"]["title"] == "Upper Key"
    # an empty or comment-only block is valid (no properties), not an error
    assert [e["path"] for e in scan["errors"] if e["path"] in ("Empty.md", "Comment.md")] == []


def test_emoji_columns_are_characters(v: Vault) -> None:
    v.write_bytes("E.md", "\ufeff[[Gone]]\n🎉 [[Gone]]\n".encode())
    assert [(b[1], b[2]) for b in broken(v.health())] == [(1, 1), (2, 3)]


def test_markdown_link_destinations(v: Vault) -> None:
    v.write("My Note.md", "")
    v.write("Note(1).md", "")
    v.write("Note.md", "")
    v.write(
        "S.md",
        "[a](My+Note.md)\n[b](Note(1).md)\n[c](Note%2Emd)\n[d](%)\n[e](obsidian://open?vault=x)\n"
        "![f](https://x/a.png)\n[g](<https://x y>)\n[h](Note.md#Heading%20One)\n",
    )
    assert v.targets("S.md") == ["BROKEN:My+Note", "Note(1).md", "Note.md", "Note.md"]


def test_more_wikilink_splits(v: Vault) -> None:
    v.write("Note.md", "# H\n")
    v.write("S.md", "[[Note|a|b]]\n[[Note\\|x]]\n| a |\n| - |\n| [[Note#H\\|x]] |\n[[img/pic]]\n")
    v.write_bytes("img/pic.png", b"x")
    assert v.targets("S.md") == ["Note.md", "Note.md", "Note.md", "BROKEN:img/pic"]


def test_links_in_common_markdown_constructs(v: Vault) -> None:
    v.write("Note.md", "")
    v.write(
        "S.md",
        "# [[Note]]\n- [ ] [[Note]] #todo\n- [x] done #done\nText[^1]\n\n[^1]: see [[Note]]\n"
        "$x$ [[Note]] $y$\nprice \\$5 [[Note]] \\$6\n",
    )
    assert v.targets("S.md") == ["Note.md"] * 5
    assert sorted(v.note("S.md")["tags"]) == ["done", "todo"]


def test_case_only_twins_resolve_deterministically_with_a_warning(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("note.md", "")
    v.write("S.md", "[[NOTE]]\n")
    first = v.targets("S.md")
    assert first[0] in ("Note.md", "note.md")
    # a second index built from scratch picks the same twin
    assert Vault(v.root, v.db.with_name("other.db")).targets("S.md") == first
    assert "S.md" in warned_paths(v.health())


def test_unicode_tags_compare_case_insensitively(v: Vault) -> None:
    v.write("T.md", "#Été #été #ÉTÉ #Ωmega #ωmega\n")
    assert v.note("T.md")["tags"] == ["Été", "Ωmega"]
    assert paths_of(v.scan("--tag", "été")["notes"]) == ["T.md"]


def test_scan_type_filter(v: Vault) -> None:
    v.write("A.md", "---\ntype: project\n---\n")
    v.write("B.md", "---\ntype: Person\n---\n")
    v.write("C.md", "")
    assert paths_of(v.scan("--type", "project")["notes"]) == ["A.md"]


def test_lookup_finds_tags_and_hides_hidden_files(v: Vault) -> None:
    v.write("Go.md", "#golang\n")
    v.write(".trash/Golang.md", "")
    v.write("Nested.md", "#lang/golang\n")
    found = [c["path"] for c in v.json("lookup", "golang")["candidates"]]
    assert sorted(found) == ["Go.md", "Nested.md"]


# -- batch 3: re-resolution corners ---------------------------------------------------------------


def test_re_resolution_for_every_link_shape(v: Vault) -> None:
    v.write(
        "S.md",
        "[[foo]] [[New.md]] [[Sub/Deep]] [t](Sub/New%20File.md) ![[late.PDF]] [[été]]\n",
    )
    age(v.root)
    assert v.targets("S.md") == [
        "BROKEN:foo",
        "BROKEN:New",
        "BROKEN:Sub/Deep",
        "BROKEN:Sub/New File",
        "BROKEN:late.PDF",
        "BROKEN:été",
    ]
    v.write("FOO.md", "")
    v.write("New.md", "")
    v.write("Sub/Deep.md", "")
    v.write("Sub/New File.md", "")
    v.write_bytes("x/late.pdf", b"%PDF")
    v.write(unicodedata.normalize("NFD", "ÉTÉ") + ".md", "")
    assert v.targets("S.md") == [
        "FOO.md",
        "New.md",
        "Sub/Deep.md",
        "Sub/New File.md",
        "x/late.pdf",
        "ÉTÉ.md",
    ]
    assert v.json("health", ok=(0,))["brokenLinks"] == []


def test_moving_the_source_note_re_resolves_its_relative_and_tie_break_links(v: Vault) -> None:
    v.write("A/Src.md", "[[./Dup]] [[Dup]]\n")
    v.write("A/Dup.md", "")
    v.write("C/Dup.md", "")
    age(v.root)
    assert v.targets("A/Src.md") == ["A/Dup.md", "A/Dup.md"]
    (v.root / "A" / "Src.md").rename(v.root / "C" / "Src.md")
    assert v.targets("C/Src.md") == ["C/Dup.md", "C/Dup.md"]


def test_ambiguity_warning_goes_away_with_the_second_candidate(v: Vault) -> None:
    v.write("A/Start.md", "[[Dup]]\n")
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    age(v.root)
    assert warned_paths(v.health()) == {"A/Start.md"}
    (v.root / "C" / "Dup.md").unlink()
    assert v.health()["warnings"] == []
    v.write("C/Dup.md", "")
    assert warned_paths(v.health()) == {"A/Start.md"}


def test_hidden_target_created_later_stays_broken(v: Vault) -> None:
    v.write("S.md", "[[Secret]]\n")
    age(v.root)
    v.write(".trash/Secret.md", "")
    v.write(".Secret.md", "")
    assert v.targets("S.md") == ["BROKEN:Secret"]


# -- batch 3: capture configuration -------------------------------------------------------------


@pytest.mark.parametrize("inbox", ["../escape", "{abs}", "sub/../../escape", ".hidden-inbox"])
def test_capture_inbox_setting_can_not_leave_the_vault(
    v: Vault, tmp_path: Path, inbox: str
) -> None:
    v.write("Note.md", "")
    v.db.parent.mkdir(parents=True, exist_ok=True)
    inbox = inbox.format(abs=tmp_path / "abs-inbox")
    config = write(tmp_path / "config.toml", f'inbox = "{inbox}"\n')
    before = {p for p in tmp_path.rglob("*") if v.root not in p.parents}
    result = run_cli(
        "capture",
        "probe text",
        "--vault",
        v.root,
        "--db",
        v.db,
        "--json",
        env={"NOTEDEX_CONFIG": str(config)},
        timeout=TIMEOUT,
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


def test_capture_when_the_inbox_is_a_file(v: Vault) -> None:
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


# -- batch 4: disagreements found while probing ------------------------------------------------


def test_indented_code_inside_quotes_and_lists_hides_links(v: Vault) -> None:
    v.write("Q.md", "> quote\n>\n>     [[QC]] #qc\n")
    v.write("L.md", "- item\n\n      [[LC]] #lc\n")
    assert v.show("Q.md")["links"] == [] and v.note("Q.md")["tags"] == []
    assert v.show("L.md")["links"] == [] and v.note("L.md")["tags"] == []


def test_indented_lines_that_continue_a_paragraph_are_not_code(v: Vault) -> None:
    v.write("Note.md", "")
    v.write("Q.md", "> quote\n>     [[Note]] #cont\n\n  para [[Note]]\n")
    assert v.targets("Q.md") == ["Note.md", "Note.md"]
    assert v.note("Q.md")["tags"] == ["cont"]


def test_path_suffix_match_is_a_plain_string_suffix(v: Vault) -> None:
    v.write("sub/Note.md", "")
    v.write("S.md", "[[ub/Note]]\n")
    assert v.targets("S.md") == ["sub/Note.md"]


def test_capture_does_not_collide_with_an_nfd_twin(v: Vault) -> None:
    probe = _capture(v, "probe")
    inbox = (v.root / probe["path"]).parent
    write(inbox / (unicodedata.normalize("NFD", "été") + ".md"), "original\n")
    data = _capture(v, "été")
    scan = v.scan()
    assert scan["errors"] == []
    captured = {n["path"]: n for n in scan["notes"]}[data["path"]]
    assert captured["type"] == "inbox-draft"
    assert len([n for n in scan["notes"] if n["title"] in ("été",)]) == 2


def test_graph_keeps_an_unresolved_key_apart_from_a_file_with_that_path(v: Vault) -> None:
    v.write("Gone.md", "")
    v.write("S.md", "[[Gone.md.md]]\n")
    assert broken(v.health()) == [("S.md", 1, 1, "[[Gone.md.md]]", "Gone.md")]
    g = v.graph()
    assert sorted((n["id"], n["kind"]) for n in g["nodes"]).count(("Gone.md", "note")) == 1
    unresolved = {n["id"] for n in g["nodes"] if n["kind"] == "unresolved"}
    assert len(unresolved) == 1
    assert [(e["source"], e["target"] in unresolved, e["count"]) for e in g["edges"]] == [
        ("S.md", True, 1)
    ]


def test_scan_and_show_agree(v: Vault) -> None:
    v.write(
        "A.md", "---\ntitle: T\nid: 1\ntype: x\nstatus: y\ntags: [b, A]\naliases: [Al]\n---\n#c\n"
    )
    v.write("B/C.md", "#Z #z [[A]]\n")
    v.write("Bad.md", "---\n- x\n---\n#tag\n")
    for entry in v.scan()["notes"]:
        shown = v.show(entry["path"])
        assert {k: shown[k] for k in entry} == entry
