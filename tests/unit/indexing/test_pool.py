"""indexing/pool.py: the parse workers segment each body and compress its body_store blob."""

from __future__ import annotations

import pickle
from pathlib import Path

from notedex.indexing.pool import parse_batches
from notedex.store.database import DeflatedBody, body_blob, deflate_body
from notedex.vault.model import VaultFile
from notedex.vault.text import segment
from notedex.vault.walk import walk_vault
from tests.indexcheck import make_vault


def test_each_parsed_body_carries_its_blob_across_the_process_boundary(tmp_path: Path) -> None:
    notes = {
        f"n{i:03}.md": f"# Note {i}\n\n重跑gen-itgc后 body {i} [[n{i + 1:03}]]\n"
        for i in range(450)
    }
    notes["empty.md"] = "---\ntitle: x\n---\n"
    vault = make_vault(tmp_path / "v", notes)
    files: list[VaultFile] = sorted(
        (vf for vf in walk_vault(vault).files if vf.path.endswith(".md")), key=lambda vf: vf.path
    )
    assert len(files) == 451
    # 451 notes and 2 workers: parsed in worker processes (PARALLEL_THRESHOLD), pickled back.
    parsed = [
        pair
        for batch in parse_batches(
            files, batch_size=200, workers=2, max_bytes=1 << 20, body_index=True
        )
        for pair in batch
    ]
    assert [note.path for note, _ in parsed] == [vf.path for vf in files]
    for note, body in parsed:
        text = (vault / note.path).read_text(encoding="utf-8")
        if note.path == "empty.md":
            assert body == ""
            continue
        assert isinstance(body, DeflatedBody) and body == segment(text)
        assert body_blob(body) == deflate_body(str(body))
        assert pickle.loads(pickle.dumps(body)).z == body.z
