"""A start after a clean stop (issue 35): the start-up walk adds each folder's watch as it goes
and passes over the files whose stat matches their row. What changed while the daemon was
stopped is indexed, however small the change; what changes after READY, in any folder, is
heard."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import write
from tests.indexcheck import age
from tests.system.daemons import Daemons, assert_converges, note, populate


def test_a_clean_start_finds_every_change_made_while_stopped_and_hears_every_folder(
    daemons: Daemons, vault: Path, db_path: Path, tmp_path: Path
) -> None:
    populate(vault, 120)
    write(vault / "deep" / "a" / "b" / "c" / "leaf.md", note("Leaf"))
    age(vault)
    first = daemons.start()
    assert first.find("rescan done", cause="startup", added=121)
    assert first.stop() == 0

    # While stopped: an edit in place that keeps the size and puts the mtime back (only the
    # change time moves), a new note in a new folder, a deleted note.
    edited = vault / "notes" / "f0" / "n1.md"
    before = edited.stat()
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("[[n2]]", "[[m2]]"), encoding="utf-8")
    assert edited.stat().st_size == before.st_size
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    write(vault / "made" / "while" / "stopped.md", note("Made while stopped"))
    (vault / "notes" / "f1" / "n102.md").unlink()

    run = daemons.start()
    done = run.wait_for("rescan done", cause="startup")
    assert (done["added"], done["removed"], done["changed"]) == (1, 1, 1), done
    assert_converges(vault, db_path, tmp_path, run=run)
    # Every folder was watched by the walk: a note made after READY at any depth is heard.
    write(vault / "deep" / "a" / "b" / "c" / "after.md", note("After", links="[[Leaf]]"))
    write(vault / "made" / "while" / "next.md", note("Next"))
    write(vault / ".obsidian" / "app.json", "{}")
    assert_converges(vault, db_path, tmp_path, run=run)
