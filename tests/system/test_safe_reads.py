"""No text from outside the vault, whatever the index says (issue 31, items 2 and 3).

A note that became a symlink out of the vault after it was indexed is still in the index (with
``--no-refresh``, while a daemon has not caught up, or when a refresh kept its row), so every
reader of note text must apply the symlink policy at the moment it reads (vault.reading): the
CLI's ``show --body``/``--lines``, ``quote``, ``quote --check``, ``export``, search positions and
``mentions``, and MCP ``show``, ``quote``, ``search`` and ``resources/read``. The race test swaps
a note for an outward symlink every millisecond while the CLI and MCP read it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from notedex.vault.reading import OUTSIDE_MESSAGE
from tests.helpers import run_cli, run_inprocess, write
from tests.system.mcpwire import McpWire, text_of

SECRET = "TOPSECRET"
INSIDE = "# Plan\n\nThe plan of record, kept inside the vault.\n"


def _vault(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(vault, db, the outside file): ``Plan.md`` indexed, then swapped for an outward link."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Plan.md", INSIDE)
    write(vault / "Other.md", "# Other\n\nSee the Plan of record.\n")
    outside = write(tmp_path / "outside" / "secret.md", f"# Plan\n\nThe plan {SECRET} of record.\n")
    db = tmp_path / "index.db"
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db, outside


def _swap_for_link(vault: Path, outside: Path) -> None:
    tmp = vault / ".swap"
    os.symlink(outside, tmp)
    os.replace(tmp, vault / "Plan.md")


def _cli(vault: Path, db: Path, *args: str | Path) -> tuple[int, str, str]:
    result = run_cli(*args, "--vault", vault, "--db", db, "--no-refresh")
    return result.code, result.stdout, result.stderr


def test_no_command_reads_a_note_that_became_an_outward_symlink(tmp_path: Path) -> None:
    vault, db, outside = _vault(tmp_path)
    # Before the swap, the same commands read the note: the refusals below are the link's.
    code, out, _ = _cli(vault, db, "show", "Plan.md", "--body", "--json")
    assert code == 0 and "plan of record" in json.loads(out)["body"]
    _swap_for_link(vault, outside)

    refused = [
        ("show", "Plan.md", "--body", "--json"),
        ("show", "Plan.md", "--lines", "1-3", "--json"),
        ("quote", "Plan.md", "The plan", "--json"),
    ]
    for args in refused:
        code, out, err = _cli(vault, db, *args)
        assert code == 2, (args, code, out, err)
        assert SECRET not in out + err, args
        assert out == "" and f"cannot read Plan.md: {OUTSIDE_MESSAGE}" in err, (args, err)

    check = write(tmp_path / "quotes.json", json.dumps([{"path": "Plan.md", "text": "The plan"}]))
    code, out, _ = _cli(vault, db, "quote", "--check", check, "--json")
    item = json.loads(out)["results"][0]
    assert code == 1 and SECRET not in out
    assert item["found"] is False and OUTSIDE_MESSAGE in item["error"]

    code, out, err = _cli(vault, db, "export", "--format", "connector-v1")
    assert code == 0 and SECRET not in out
    assert [r["id"] for r in json.loads(out)["records"]] == ["obsidian:Other.md"]
    assert f"skipped Plan.md: cannot read it: {OUTSIDE_MESSAGE}" in err

    # The index still matches "plan": the hit is listed, with no position or snippet from outside.
    code, out, _ = _cli(vault, db, "search", "plan", "--json")
    hits = {h["path"]: h for h in json.loads(out)["hits"]}
    assert code == 0 and SECRET not in out
    assert hits["Plan.md"]["snippet"] is None and hits["Other.md"]["snippet"]


def test_follow_symlinks_reads_it_as_the_setting_says(tmp_path: Path) -> None:
    vault, db, outside = _vault(tmp_path)
    _swap_for_link(vault, outside)
    config = write(tmp_path / "config.toml", "follow_symlinks = true\n")
    result = run_cli(
        "show", "Plan.md", "--body", "--json", "--vault", vault, "--db", db, "--no-refresh",
        env={"NOTEDEX_CONFIG": str(config)},
    )  # fmt: skip
    assert result.code == 0 and SECRET in json.loads(result.stdout)["body"]


def test_mcp_reads_no_note_that_became_an_outward_symlink(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    vault, db, outside = _vault(tmp_path)
    with McpWire(vault, db, "--no-refresh") as server:
        server.initialize()
        before = server.call("show", {"note": "Plan.md", "body": True})
        assert not before["isError"] and "plan of record" in text_of(before)
        _swap_for_link(vault, outside)
        answers = [
            server.call("show", {"note": "Plan.md", "body": True}),
            server.call("show", {"note": "Plan.md", "lines": "1-3"}),
            server.call("quote", {"note": "Plan.md", "text": "The plan"}),
        ]
        search = server.call("search", {"query": "plan"})
        resource = server.request("resources/read", {"uri": "notedex:///Plan.md"})
    for answer in answers:
        assert answer["isError"] and SECRET not in text_of(answer)
        assert OUTSIDE_MESSAGE in text_of(answer)
    assert not search["isError"] and SECRET not in text_of(search)
    hits = {h["path"]: h for h in json.loads(text_of(search))["hits"]}
    assert hits["Plan.md"]["snippet"] is None
    assert "error" in resource and SECRET not in json.dumps(resource)
    assert OUTSIDE_MESSAGE in resource["error"]["message"]


class _Swapper:
    """Swaps ``Plan.md`` for an outward symlink and back, every millisecond, in a thread."""

    def __init__(self, vault: Path, outside: Path) -> None:
        self.vault, self.outside = vault, outside
        self.stop = threading.Event()
        self.swaps = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        link, copy = self.vault / ".link", self.vault / ".copy"
        note = self.vault / "Plan.md"
        while not self.stop.is_set():
            os.symlink(self.outside, link)
            os.replace(link, note)
            time.sleep(0.001)
            copy.write_text(INSIDE, encoding="utf-8")
            os.replace(copy, note)
            time.sleep(0.001)
            self.swaps += 1

    def __enter__(self) -> _Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


@pytest.mark.slow
def test_a_note_swapped_every_millisecond_never_gives_outside_text(tmp_path: Path) -> None:
    """5,000 reads (MCP show, resources/read and quote; the CLI's show --body and quote, run
    in-process for speed) while the note flips between itself and an outward symlink: the
    outside text 0 times, and both outcomes seen, so the race was really run."""
    pytest.importorskip("mcp")
    vault, db, outside = _vault(tmp_path)
    outcomes = {"inside": 0, "refused": 0, "outside": 0, "other": 0}

    def count(text: str, refused: bool) -> None:
        if SECRET in text:
            outcomes["outside"] += 1
        elif refused and OUTSIDE_MESSAGE in text:
            outcomes["refused"] += 1
        elif not refused and "plan of record" in text:
            outcomes["inside"] += 1
        else:
            outcomes["other"] += 1  # e.g. the note missing for an instant: not a leak

    deadline = time.monotonic() + 240  # bounded: the counts below say whether enough ran
    reads = 0
    with McpWire(vault, db, "--no-refresh") as server, _Swapper(vault, outside) as swapper:
        server.initialize()
        while reads < 5000 and time.monotonic() < deadline:
            kind = reads % 5
            if kind == 0:
                answer = server.call("show", {"note": "Plan.md", "body": True})
                count(text_of(answer), answer["isError"])
            elif kind == 1:
                reply = server.request("resources/read", {"uri": "notedex:///Plan.md"})
                count(json.dumps(reply, ensure_ascii=False), "error" in reply)
            elif kind == 2:
                answer = server.call("quote", {"note": "Plan.md", "text": "plan of record"})
                count(text_of(answer), answer["isError"])
            else:
                args = ("show", "Plan.md", "--body", "--json")
                if kind == 4:
                    args = ("quote", "Plan.md", "plan of record", "--json")
                result = run_inprocess(*args, "--vault", vault, "--db", db, "--no-refresh")
                count(result.stdout + result.stderr, result.code == 2)
            reads += 1
        swaps = swapper.swaps
    assert outcomes["outside"] == 0, outcomes
    assert reads == 5000, (reads, outcomes)
    assert outcomes["inside"] > 100 and outcomes["refused"] > 100, outcomes
    assert swaps > 500, swaps


def test_a_symlinked_lock_file_stops_the_cli_with_exit_2(tmp_path: Path) -> None:
    """Issue 31 item 6: `index` refuses a lock file that is a symlink (exit 2, one clear line)
    and leaves the link's target as it was."""
    vault = tmp_path / "vault"
    write(vault / "Note.md", "hello\n")
    db = tmp_path / "state" / "index.db"
    db.parent.mkdir()
    target = write(tmp_path / "precious.txt", "keep me\n")
    os.symlink(target, db.with_name("index.db.lock"))
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 2, result.stderr
    assert result.stdout == "" and "is a symlink" in result.stderr
    assert result.stderr.count("\n") == 1
    assert target.read_text(encoding="utf-8") == "keep me\n"
