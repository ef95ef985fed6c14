"""`notedex export --format connector-v1` (issue 7): RecallNest's connector-v1 field table,
checked against the files on disk and against `scan`/`show`, never against our own export code.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path

from tests.helpers import run_inprocess, write

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def export(vault: Path, db: Path, *args: str | Path, code: int = 0) -> dict:
    result = run_inprocess(
        "export", "--format", "connector-v1", *args, "--vault", vault, "--db", db, "--no-refresh"
    )
    assert result.code == code, result.stderr
    return json.loads(result.stdout) if code == 0 and result.stdout else {"stderr": result.stderr}


def cli_json(vault: Path, db: Path, *args: str) -> dict:
    result = run_inprocess(*args, "--vault", vault, "--db", db, "--json", "--no-refresh")
    assert result.code in (0, 1), result.stderr
    return json.loads(result.stdout)


def body_of(raw: bytes) -> str:
    """SEMANTICS 2, independently: a block at byte 0 that closes at a line that is exactly ---."""
    text = raw.decode("utf-8").removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if lines and lines[0].rstrip("\r\n") == "---":
        for i, line in enumerate(lines[1:], 1):
            if line.rstrip("\r\n") == "---":
                return "".join(lines[i + 1 :])
    return text


def parse_iso(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_document_follows_the_connector_v1_field_table(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    doc = export(vault, db)
    assert doc["version"] == "connector-v1"
    assert doc["source"] == "obsidian"
    assert doc["scope"] == "vault:demo-vault"
    assert ISO.match(doc["producedAt"])
    assert abs(parse_iso(doc["producedAt"]) - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)
    assert isinstance(doc["records"], list)

    scan = {n["path"]: n for n in cli_json(vault, db, "scan")["notes"]}
    assert {r["sourceMetadata"]["relativePath"] for r in doc["records"]} == set(scan)
    for record in doc["records"]:
        rel = record["sourceMetadata"]["relativePath"]
        disk = vault / rel
        raw = disk.read_bytes()
        assert set(record) == {
            "id",
            "title",
            "text",
            "tags",
            "timestamp",
            "contentHash",
            "sourceMetadata",
        }
        assert record["id"] == f"obsidian:{rel}"
        assert record["title"] == Path(rel).stem
        assert record["text"] == body_of(raw)
        assert record["contentHash"] == hashlib.sha256(raw).hexdigest()[:16]
        assert ISO.match(record["timestamp"])
        mtime = dt.datetime.fromtimestamp(disk.stat().st_mtime, dt.UTC)
        assert abs(parse_iso(record["timestamp"]) - mtime) < dt.timedelta(milliseconds=2)
        assert isinstance(record["sourceMetadata"]["frontmatter"], dict)
        assert all(isinstance(t, str) for t in record["tags"])
        assert len(record["tags"]) == len(set(record["tags"]))

        tags = [t for t in record["tags"] if not t.startswith(("link:", "folder:"))]
        assert tags == scan[rel]["tags"]
        folder = rel.rpartition("/")[0]
        assert [t for t in record["tags"] if t.startswith("folder:")] == (
            [f"folder:{folder}"] if folder else []
        )

        shown = cli_json(vault, db, "show", rel)
        expected_links = {
            f"link:{link['target'] or link['key']}"
            for link in shown["links"]
            if (link["target"] or link["key"]) and link["target"] != rel
        }
        assert {t for t in record["tags"] if t.startswith("link:")} == expected_links


def test_frontmatter_and_broken_links_in_a_record(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Target.md", "target\n")
    write(vault / "img" / "pic.png", "png")
    write(
        vault / "Deep" / "Source.md",
        "---\ntags: [alpha, beta/gamma]\nstatus: draft\n---\n"
        "Text #inline with [[Target]], [[Missing Note]], ![[pic.png]] and [[#Heading]].\n",
    )
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    doc = export(vault, db)
    record = next(r for r in doc["records"] if r["id"] == "obsidian:Deep/Source.md")
    assert record["tags"] == [
        "alpha", "beta/gamma", "inline",
        "link:Target.md", "link:Missing Note", "link:img/pic.png",
        "folder:Deep",
    ]  # fmt: skip
    assert record["sourceMetadata"] == {
        "relativePath": "Deep/Source.md",
        "frontmatter": {"tags": ["alpha", "beta/gamma"], "status": "draft"},
    }
    assert record["text"].startswith("Text #inline")
    assert doc["scope"] == "vault:vault"


def test_changed_since_exports_only_newer_notes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    old = write(vault / "Old.md", "old\n")
    new = write(vault / "New.md", "new\n")
    os.utime(old, (1_700_000_000, 1_700_000_000))  # 2023-11-14T22:13:20Z
    os.utime(new, (1_800_000_000, 1_800_000_000))  # 2027-01-15T08:00:00Z
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0

    def ids(since: str) -> list[str]:
        return [r["id"] for r in export(vault, db, "--changed-since", since)["records"]]

    assert ids("2025-01-01T00:00:00Z") == ["obsidian:New.md"]
    assert ids("2020-01-01") == ["obsidian:New.md", "obsidian:Old.md"]
    assert ids("2027-01-15T08:00:00Z") == []  # strictly newer
    assert ids("2027-01-15T07:59:59.999+00:00") == ["obsidian:New.md"]
    bad = export(vault, db, "--changed-since", "last tuesday", code=2)
    assert "ISO 8601" in bad["stderr"]


def test_out_writes_a_file_outside_the_vault_only(demo: tuple[Path, Path], tmp_path: Path) -> None:
    vault, db = demo
    out = tmp_path / "export.json"
    result = run_inprocess(
        "export", "--out", out, "--vault", vault, "--db", db, "--json", "--no-refresh"
    )
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert summary == {"out": str(out), "records": len(doc["records"]), "skipped": 0}
    assert doc["version"] == "connector-v1"
    inside = run_inprocess(
        "export", "--out", vault / "x.json", "--vault", vault, "--db", db, "--no-refresh"
    )
    assert inside.code == 2 and "outside the vault" in inside.stderr
    assert not (vault / "x.json").exists()


def test_excluded_and_unreadable_notes_are_left_out(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Templates/"]}))
    write(vault / "Keep.md", "keep\n")
    write(vault / "Templates" / "Daily.md", "template\n")
    (vault / "Binary.md").write_bytes(b"\x89PNG\0\0\0binary")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    result = run_inprocess("export", "--vault", vault, "--db", db, "--no-refresh")
    assert result.code == 0, result.stderr
    assert [r["id"] for r in json.loads(result.stdout)["records"]] == ["obsidian:Keep.md"]
    assert "skipped Binary.md" in result.stderr


def test_export_refreshes_first_like_every_query(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    db = tmp_path / "index.db"
    write(vault / "First.md", "one\n")
    result = run_inprocess("export", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert [r["id"] for r in json.loads(result.stdout)["records"]] == ["obsidian:First.md"]
