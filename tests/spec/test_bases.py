"""SEMANTICS 15: every example base of examples/bases/ run on its small vault, its rows written
out by hand from the notes' frontmatter (not captured from a run), and the rules around them.

In-process (`run_inprocess`), on a copy of the example vault under ``tmp_path`` with a real
index: the copy's modification times are now, which `dates.base`'s `fresh` column relies on.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli_json, pure_json, run_inprocess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bases" / "vault"

# base -> (view name, the rows' values in `order`'s column order, paths first).
EXPECTED: dict[str, tuple[str, list[list[Any]]]] = {
    "books.base": (
        "By rating",
        [
            ["Books/Dune.md", "Dune.md", 5, "Frank Herbert (5/5)"],
            ["Books/Foundation.md", "Foundation.md", 4, "Isaac Asimov (4/5)"],
            ["Books/Neuromancer.md", "Neuromancer.md", 3, "William Gibson (3/5)"],
            ["Books/Emma.md", "Emma.md", None, "Jane Austen (unrated)"],  # empty rating last
        ],
    ),
    "or-not.base": (
        "Mixed",
        [
            ["Books/Neuromancer.md", "Books/Neuromancer.md", "todo"],
            ["Projects/Roadmap.md", "Projects/Roadmap.md", "active"],
            ["Projects/Website.md", "Projects/Website.md", "done"],
        ],
    ),
    "groupby.base": (
        "By status",
        [
            ["Books/Dune.md", "Dune", "done"],
            ["Books/Foundation.md", "Foundation", "reading"],
            ["Books/Emma.md", "Emma", "todo"],
            ["Books/Neuromancer.md", "Neuromancer", "todo"],
        ],
    ),
    "summaries.base": (
        "Totals",
        [
            ["Books/Dune.md", "Dune", 5, 412, 9.99, "2025-03-14", None],
            ["Books/Emma.md", "Emma", None, 474, None, None, True],
            ["Books/Foundation.md", "Foundation", 4, 255, 7.5, None, None],
            ["Books/Neuromancer.md", "Neuromancer", 3, 271, 12, "2024-11-02", None],
        ],
    ),
    "limit.base": (
        "Last three",
        [
            ["Projects/Website.md", "Website.md"],
            ["Projects/Roadmap.md", "Roadmap.md"],
            ["Reading list.md", "Reading list.md"],
        ],
    ),
    "strings.base": (
        "Strings",
        [
            [
                "Books/Dune.md",
                "Dune",
                "FH",
                "fr*nk h*rb*rt",
                "FRank HeRbeRt",
                "Frank Herbert",
                "enuD",
                13,
                True,
                "--x",
                ["Frank"],
                False,
                False,
            ],
            [
                "Books/Neuromancer.md",
                "Neuromancer",
                "WG",
                "w*ll**m g*bs*n",
                "William Gibson",
                "William Gibson",
                "recnamorueN",
                14,
                False,
                "--x",
                ["William"],
                True,
                False,
            ],
        ],
    ),
    "numbers.base": (
        "Numbers",
        [
            ["Books/Dune.md", "Dune", "10.0", 11.99, 10, 9, 0, 5, 300, 8.5, 12, False],
            ["Books/Foundation.md", "Foundation", "7.5", 9, 8, 7, 1, 4, 255, 7.5, 55, False],
            [
                "Books/Neuromancer.md",
                "Neuromancer",
                "12.0",
                14.4,
                12,
                12,
                2,
                4,
                271,
                6.5,
                71,
                False,
            ],
        ],
    ),
    "dates.base": (
        "Due",
        [
            [
                "Projects/Website.md",
                "Website",
                "2025-12-01",
                "01 Dec 2025",
                "2026-01-01",
                "2025/12/1",
                0,
                "Monday",
                True,
                "10:30:00",
                True,
                "2026-01-15 00:00",
            ],
            [
                "Projects/Roadmap.md",
                "Roadmap",
                "2026-01-15",
                "15 Jan 2026",
                "2026-02-15",
                "2026/1/15",
                45,
                "Thursday",
                False,
                "10:30:00",
                True,
                "2026-01-15 00:00",
            ],
        ],
    ),
    "lists.base": (
        "Lists",
        [
            [
                "Books/Dune.md",
                "Dune",
                2,
                "scifi+classic",
                ["classic", "scifi"],
                ["classic", "scifi"],
                True,
                True,
                [1, 2, 3],
                [3, 1, 2],
                6,
                [3, 4],
                ["Frank Herbert"],
                ["scifi"],
                "scifi",
                False,
            ],
            [
                "Books/Foundation.md",
                "Foundation",
                1,
                "scifi",
                ["scifi"],
                ["scifi"],
                False,
                False,
                [1, 2, 3],
                [3, 1, 2],
                6,
                [3, 4],
                ["Isaac Asimov"],
                ["scifi"],
                "scifi",
                False,
            ],
        ],
    ),
    "links.base": (
        "Links",
        [
            # Foundation links Dune and Neuromancer; Dune links back to it.
            [
                "Books/Foundation.md",
                "Foundation",
                2,
                0,
                1,
                None,
                "[[Books/Foundation]]",
                True,
                False,
            ],
            # Roadmap: owner "[[Dune]]" (a frontmatter link) and [[Dune]] in the body, an embed
            # of cover.png, and Old's link to it.
            [
                "Projects/Roadmap.md",
                "Roadmap",
                2,
                1,
                1,
                "Dune.md",
                "[[Projects/Roadmap]]",
                False,
                True,
            ],
        ],
    ),
    "files.base": (
        "Project files",
        [
            ["Projects/Archive/Old.md", "Old.md", "Old", "Projects/Archive", "md", False, False, 3],
            ["Projects/Roadmap.md", "Roadmap.md", "Roadmap", "Projects", "md", True, False, 5],
            ["Projects/Website.md", "Website.md", "Website", "Projects", "md", True, True, 4],
            ["Projects/cover.png", "cover.png", "cover", "Projects", "png", False, False, 0],
        ],
    ),
    "any-global.base": (
        "Any",
        [
            [
                "Projects/Roadmap.md",
                "Roadmap",
                "2!",
                True,
                True,
                "&lt;b&gt;active&lt;/b&gt;",
                "later",
                3,
                4 * 86_400_000,
                "2026-01-15",
            ],
            [
                "Projects/Website.md",
                "Website",
                "1!",
                True,
                True,
                "&lt;b&gt;done&lt;/b&gt;",
                "now",
                2,
                4 * 86_400_000,
                "2025-12-01",
            ],
        ],
    ),
    "Reading list.md": (
        "Science fiction",
        [
            ["Books/Dune.md", "Dune", "Frank Herbert", "Reading list"],
            ["Books/Foundation.md", "Foundation", "Isaac Asimov", "Reading list"],
        ],
    ),
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bases") / "vault"
    shutil.copytree(EXAMPLES, root)
    (root / ".obsidian").mkdir(exist_ok=True)
    return root, root.parent / "index.db"


def test_every_example_has_its_expected_rows() -> None:
    examples = sorted(p.name for p in EXAMPLES.glob("*.base"))
    assert len(examples) >= 12
    assert sorted(set(EXPECTED) - {"Reading list.md"}) == examples


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_base(vault: tuple[Path, Path], name: str) -> None:
    view, rows = EXPECTED[name]
    data = cli_json(*vault, "base", name)
    assert data["view"] == view
    columns = [c["id"] for c in data["columns"]]
    got = [[row["path"], *(row[c] for c in columns)] for row in data["rows"]]
    assert got == rows


def test_groups_are_in_direction_order(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "groupby.base")
    assert data["groups"] == [
        {"key": "done", "paths": ["Books/Dune.md"]},
        {"key": "reading", "paths": ["Books/Foundation.md"]},
        {"key": "todo", "paths": ["Books/Emma.md", "Books/Neuromancer.md"]},
    ]


def test_summaries(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "summaries.base")
    assert data["summaries"] == {
        "rating": 4,  # (5 + 4 + 3) / 3; Emma has no rating
        "pages": 412 + 474 + 255 + 271,
        "price": 12,
        "finished": "2024-11-02",
        "reviewed": 1,
        "note.rating": 3,  # the custom summary: the filled ratings
    }


def test_view_filters_are_anded_with_the_global_ones(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "books.base", "--view", "Cheap")
    assert [r["path"] for r in data["rows"]] == ["Books/Dune.md", "Books/Foundation.md"]
    assert [r["formula.per_page"] for r in data["rows"]] == ["2.42", "2.94"]  # 9.99/412, 7.5/255


def test_display_names_head_the_columns(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "files.base")
    names = {c["id"]: c["name"] for c in data["columns"]}
    assert names["file.ext"] == "Extension"
    assert names["file.name"] == "file.name"


def test_list_names_every_base_and_its_views(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "--list")
    listed = {b["path"]: b["views"] for b in data["bases"]}
    assert listed["books.base"] == ["By rating", "Cheap"]
    assert len(listed) == len(list(EXAMPLES.glob("*.base")))


def _write_base(vault: tuple[Path, Path], name: str, text: str) -> str:
    (vault[0] / "tmp").mkdir(exist_ok=True)
    (vault[0] / "tmp" / name).write_text(text, encoding="utf-8")
    return f"tmp/{name}"


MISMATCHED = [
    ('rating == "5"', []),  # a number never equals a text
    ('rating > "3"', []),  # nor compares with one
    ("author > 3", []),
    ("finished > 3", []),
    ('finished < date("2025-01-01")', ["Books/Neuromancer.md"]),
    ("genres > 1", []),
    ("!(rating == 5)", ["Books/Emma.md", "Books/Foundation.md", "Books/Neuromancer.md"]),
]


@pytest.mark.parametrize(("expression", "paths"), MISMATCHED)
def test_mismatched_types_are_false_never_an_error(
    vault: tuple[Path, Path], expression: str, paths: list[str]
) -> None:
    text = f"filters:\n  and:\n    - file.hasTag('book')\n    - '{expression}'\n"
    name = _write_base(vault, "mismatch.base", text)
    data = cli_json(*vault, "base", name)
    assert [r["path"] for r in data["rows"]] == paths


@pytest.mark.parametrize(
    ("expression", "named"),
    [
        ("image(cover)", "image()"),
        ("html(author)", "html()"),
        ("nosuch(1)", "nosuch()"),
        ("author.frobnicate()", ".frobnicate()"),
        ("file.nosuch", "file.nosuch"),
        ("formula.missing", "formula.missing"),
    ],
)
def test_what_is_not_implemented_is_exit_2_naming_it(
    vault: tuple[Path, Path], expression: str, named: str
) -> None:
    name = _write_base(vault, "refused.base", f"filters: '{expression}'\n")
    result = run_inprocess("base", name, "--vault", vault[0], "--db", vault[1])
    assert result.code == 2, result
    assert named in result.stderr
    assert result.stdout == ""
    check = pure_json(
        run_inprocess("base", name, "--check", "--json", "--vault", vault[0], "--db", vault[1]),
        ok=(1,),
    )
    assert [r["construct"] for r in check["views"][0]["refuses"]] == [named]


def test_a_formula_cycle_is_refused(vault: tuple[Path, Path]) -> None:
    text = "formulas:\n  a: 'formula.b + 1'\n  b: 'formula.a'\nviews:\n  - name: V\n    order: [formula.a]\n"
    name = _write_base(vault, "cycle.base", text)
    result = run_inprocess("base", name, "--vault", vault[0], "--db", vault[1])
    assert result.code == 2 and "formula.a" in result.stderr


def test_check_lists_what_it_evaluates(vault: tuple[Path, Path]) -> None:
    data = cli_json(*vault, "base", "books.base", "--check")
    first = data["views"][0]
    assert first["refuses"] == []
    for construct in (
        "file.inFolder" and ".inFolder()",
        ".hasTag()",
        "if()",
        "sort",
        "formula.label",
    ):
        assert construct in first["evaluates"], construct


def test_an_unknown_view_is_exit_2(vault: tuple[Path, Path]) -> None:
    result = run_inprocess(
        "base", "books.base", "--view", "Nope", "--vault", vault[0], "--db", vault[1]
    )
    assert result.code == 2
    assert "'By rating'" in result.stderr and "'Cheap'" in result.stderr


def test_files_outside_the_narrowed_rows_keep_their_tags_and_links(
    vault: tuple[Path, Path],
) -> None:
    # The folder and tag filters narrow the rows in SQL; a formula may still name any file.
    text = (
        "filters:\n  and:\n    - file.inFolder('Books')\n    - file.hasTag('cyberpunk')\n"
        'formulas:\n  web: \'file("Projects/Website.md").hasTag("web")\'\n'
        "  back: 'link(\"Roadmap\").asFile().backlinks'\n"
        "  tags: 'file(\"Website\").tags'\n"
        "views:\n  - name: V\n    order: [formula.web, formula.back, formula.tags]\n"
    )
    name = _write_base(vault, "outside.base", text)
    data = cli_json(*vault, "base", name)
    assert [
        (r["path"], r["formula.web"], r["formula.back"], r["formula.tags"]) for r in data["rows"]
    ] == [("Books/Neuromancer.md", True, ["[[Projects/Archive/Old]]"], ["project", "web"])]
