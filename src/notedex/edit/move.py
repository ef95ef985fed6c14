"""`mv SRC DST`: move or rename a note, an attachment or a folder inside the vault and rewrite
every link whose target moved, so that each link lands on the same file as before
(ARCHITECTURE "Writing the vault", docs/cli.md `mv`).

The plan reads from the index (``store.relinks``) the links of the moved files and those into
files that share a name with one (no other link can land elsewhere) and resolves each before and after the
move with the vault's rule (``vault.resolve``), the files' new paths in place of the old. A
link that would land elsewhere (its file moved, or its note moved away from a relative target,
or a name it used became ambiguous) gets its target rewritten (``vault.relink``: kind, display
text, anchor, embed and escapes kept) with the path style of the vault's ``newLinkFormat``
(``.obsidian/app.json``: the shortest path that lands on the file alone, relative to the note,
or from the vault root), or in its own style when the vault has no readable ``app.json``. Each rewritten link is
proved by the resolver. The files are read once and written through ``edit.safewrite`` after the rename (a file changed since it was read is
skipped); ``.canvas`` files get their ``file`` nodes' paths changed.
"""

from __future__ import annotations

import errno
import json
import os
import posixpath
import re
import sqlite3
from dataclasses import dataclass, field, replace

from notedex.edit.safewrite import Snapshot, VaultWriter, why_not_written
from notedex.store import relinks
from notedex.vault.files import is_hidden_path, is_note_name, load_app_settings
from notedex.vault.markdown.links import percent_decoded
from notedex.vault.reading import OutsideVault
from notedex.vault.relink import path_in_style, read_link, rewrite
from notedex.vault.resolve import Resolver, file_keys, lookup_key

__all__ = ["MovePlan", "carry_out", "plan_move"]


class MoveError(ValueError):
    """A move that cannot be done (a usage error: exit 2)."""


@dataclass
class Rewrite:
    source: str
    """The file's vault path before the move."""
    snapshot: Snapshot
    text: str
    new_text: str
    links: int


@dataclass
class MovePlan:
    moves: list[tuple[str, str]]
    """(old, new) vault path of every file that moves."""
    top: tuple[str, str]
    """What is renamed on disk: the file or folder, old and new."""
    rewrites: list[Rewrite] = field(default_factory=list)
    skipped: list[dict[str, object]] = field(default_factory=list)
    link_format: str | None = None
    """``newLinkFormat`` of the vault's ``.obsidian/app.json`` (``link_format``), or None: each
    rewritten link keeps its own path style."""

    def diff(self) -> str:
        import difflib

        moved = dict(self.moves)
        out: list[str] = []
        for rewrite_ in self.rewrites:
            new_path = moved.get(rewrite_.source, rewrite_.source)
            out.extend(
                difflib.unified_diff(
                    rewrite_.text.splitlines(keepends=True),
                    rewrite_.new_text.splitlines(keepends=True),
                    f"a/{rewrite_.source}",
                    f"b/{new_path}",
                )
            )
        return "".join(out)


def _vault_path(text: str) -> str:
    parts = [p for p in text.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts or not parts:
        raise MoveError(f"not a path inside the vault: {text!r}")
    return "/".join(parts)


def plan_move(conn: sqlite3.Connection, vault: str, src: str, dst: str) -> MovePlan:
    """The moves and the link rewrites of ``mv src dst`` (vault paths)."""
    src, dst = _vault_path(src), _vault_path(dst)
    root = os.path.realpath(vault)
    disk = relinks.vault_paths(conn)
    old_paths = sorted(disk)
    src_disk = os.path.join(root, src)
    if not os.path.lexists(src_disk):
        raise MoveError(f"no such file or folder in the vault: {src}")
    if os.path.isdir(os.path.join(root, dst)) and not os.path.islink(os.path.join(root, dst)):
        dst = f"{dst}/{src.rpartition('/')[2]}"
    if os.path.lexists(os.path.join(root, dst)):
        raise MoveError(f"{dst} exists: mv never replaces a file")
    if is_hidden_path(dst):
        raise MoveError(f"{dst} is hidden (a name starts with '.'): it would leave the vault")
    if dst == src or dst.startswith(src + "/"):
        raise MoveError(f"cannot move {src} into itself")
    if os.path.isdir(src_disk) and not os.path.islink(src_disk):
        prefix = src + "/"
        moves = [(p, dst + "/" + p[len(prefix) :]) for p in old_paths if p.startswith(prefix)]
    else:
        moves = [(src, dst)]
    plan = MovePlan(moves, (src, dst), link_format=link_format(root))
    _plan_links(plan, conn, vault, disk, old_paths)
    return plan


def _plan_links(
    plan: MovePlan, conn: sqlite3.Connection, vault: str, disk: dict[str, str], old: list[str]
) -> None:
    moved = dict(plan.moves)
    # A link lands by the files filed under its name (vault.resolve.file_keys): only the links
    # of a moved file, or into a file that shares a name with one, can land elsewhere.
    keys = {key for pair in plan.moves for path in pair for key in file_keys(path) if key}
    sharing = relinks.paths_filed_under(conn, keys)
    touched = sorted(set(sharing) | (moved.keys() & disk.keys()))
    rows = [row for row in relinks.links_touching(conn, touched) if row["target"] is not None]
    # The resolvers hold the files filed under the names resolved here (a link's lookup key,
    # its target's and the moved files' names): a Resolver of those files resolves these
    # linkpaths as one of the whole vault (file_keys), without folding a 100k vault's paths.
    # The resolver after the move is the one before with the moved files taken out and put
    # back (SEMANTICS 7 never depends on the order files were added in).
    wanted = set(keys)
    for row in rows:
        wanted.add(lookup_key(row["linkpath"]))
        wanted.update(key for key in file_keys(row["target"]) if key)
    filed = {path: file_keys(path) for path in relinks.paths_filed_under(conn, wanted)}
    before = Resolver()
    for path, keys_ in filed.items():
        before.add(path, keys_)
    after = before.copy()
    indexed = [(old_path, new_path) for old_path, new_path in plan.moves if old_path in filed]
    for old_path, _ in indexed:
        after.remove(old_path)
    for old_path, new_path in indexed:
        same_name = new_path.rpartition("/")[2] == old_path.rpartition("/")[2]
        after.add(new_path, filed[old_path] if same_name else None)
    writer = VaultWriter(vault)
    by_source: dict[str, list[tuple[int, int, str, str]]] = {}
    for row in rows:
        source, target, linkpath = row["source"], row["target"], row["linkpath"]
        new_source = moved.get(source, source)
        expected = moved.get(target, target)
        landing = after.resolve(linkpath, new_source)
        if landing.target == expected and (
            not landing.ambiguous or before.resolve(linkpath, source).ambiguous
        ):
            continue  # lands where it did; a name it uses did not become ambiguous
        by_source.setdefault(source, []).append((row["line"], row["column"], row["text"], expected))
    for source in sorted(by_source):
        _plan_file(plan, writer, disk.get(source, source), source, by_source[source], after, moved)
    canvases = [path for path in old if path.lower().endswith(".canvas")]
    for canvas in canvases:
        _plan_canvas(plan, writer, disk.get(canvas, canvas), canvas, moved)


LINK_FORMATS = ("shortest", "relative", "absolute")
"""Obsidian's "New link format" values (``newLinkFormat``); "shortest" is its default."""


def link_format(root: str) -> str | None:
    """The path style `mv` writes a rewritten link in (docs/design/writing.md "Link style"):
    the vault's ``newLinkFormat``, "shortest" when its ``app.json`` does not set it (Obsidian
    writes only changed settings), None (each link keeps its own style) when there is no
    readable ``app.json`` or its value is none of ``LINK_FORMATS``."""
    settings = load_app_settings(root)
    if settings is None:
        return None
    value = settings.get("newLinkFormat", "shortest")
    return value if value in LINK_FORMATS else None


def _shortest(target: str, source: str, after: Resolver) -> str:
    """The bare name when it resolves to ``target`` alone from ``source``, else the path
    (a note without ``.md``)."""
    name = target.rpartition("/")[2]
    bare = name[:-3] if is_note_name(name) else name
    landing = after.resolve(bare, source)
    if landing.target == target and not landing.ambiguous:
        return bare
    return target[:-3] if is_note_name(name) else target


def _candidates(
    written: str, expected: str, source: str, after: Resolver, style: str | None
) -> list[str]:
    """The linkpaths to try, in order: in the path style ``style`` (``link_format``; None:
    the style ``written`` has), then with the vault path, then ``/``-rooted (a file at the root
    shares its bare name). The file name keeps its ``.md`` as written."""
    name = written.rpartition("/")[2]
    styled = {"shortest": name, "relative": "../" + name, "absolute": "x/" + name}.get(
        style or "", written
    )
    shortest = _shortest(expected, source, after)
    full = path_in_style("x/" + name, expected, source, expected)
    tries = [path_in_style(styled, expected, source, shortest)]
    if style == "relative":  # the same folder's file by a bare name, else with "./"
        tries.append(path_in_style("./" + name, expected, source, shortest))
    return [*tries, full, "/" + full]


def _plan_file(
    plan: MovePlan,
    writer: VaultWriter,
    disk_rel: str,
    source: str,
    links: list[tuple[int, int, str, str]],
    after: Resolver,
    moved: dict[str, str],
) -> None:
    new_source = moved.get(source, source)
    style = plan.link_format
    try:
        snapshot = writer.read(disk_rel)
        text = snapshot.data.decode("utf-8")
    except (OSError, OutsideVault, UnicodeDecodeError) as exc:
        plan.skipped.append({"source": source, "reason": f"cannot read the file: {exc}"})
        return
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    starts = [0, *(i + 1 for i, ch in enumerate(body) if ch == "\n")]
    out, at, count = [], 0, 0
    for line, column, written, expected in sorted(links):
        offset = starts[line - 1] + column - 1 if line <= len(starts) else -1
        link = read_link(written)
        if offset < at or body[offset : offset + len(written)] != written or link is None:
            plan.skipped.append(
                {"source": source, "line": line, "column": column, "reason": "not where indexed"}
            )
            continue
        linkpath = link.linkpath
        if link.markdown:
            linkpath = percent_decoded(linkpath)
        line_text = body[starts[line - 1] : body.find("\n", offset) % (len(body) + 1)]
        in_table = line_text.lstrip().startswith("|")
        replacement = None
        for new_path in _candidates(linkpath.strip(), expected, new_source, after, style):
            landing = after.resolve(new_path, new_source)
            if landing.target == expected and not landing.ambiguous:
                replacement = rewrite(link, linkpath=new_path, in_table=in_table)
                break
        if replacement is None:
            plan.skipped.append(
                {"source": source, "line": line, "column": column, "reason": "no unique path"}
            )
            continue
        out += [body[at:offset], replacement]
        at = offset + len(written)
        count += 1
    if count:
        out.append(body[at:])
        new_text = bom + "".join(out)
        plan.rewrites.append(Rewrite(source, snapshot, text, new_text, count))


def _plan_canvas(
    plan: MovePlan, writer: VaultWriter, disk_rel: str, canvas: str, moved: dict[str, str]
) -> None:
    """A canvas's ``file`` nodes name vault paths: each moved one gets its new path, the rest
    of the JSON as written."""
    try:
        snapshot = writer.read(disk_rel)
        text = snapshot.data.decode("utf-8")
        nodes = json.loads(text).get("nodes", [])
    except (OSError, OutsideVault, UnicodeDecodeError, ValueError, AttributeError):
        return
    names = {
        node["file"]
        for node in nodes
        if isinstance(node, dict) and isinstance(node.get("file"), str) and node["file"] in moved
    }
    new_text, count = text, 0
    for name in names:
        pattern = re.compile(r'("file"\s*:\s*)' + re.escape(json.dumps(name)))
        new_value = json.dumps(moved[name])
        new_text, n = pattern.subn(lambda m: m[1] + new_value, new_text)  # noqa: B023
        count += n
    if count:
        plan.rewrites.append(Rewrite(canvas, snapshot, text, new_text, count))


def carry_out(plan: MovePlan, vault: str) -> tuple[list[str], list[dict[str, str]]]:
    """Rename on disk, then write the rewritten files at their new places: (paths written,
    files not written with why)."""
    root = os.path.realpath(vault)
    writer = VaultWriter(vault)
    src, dst = plan.top
    real_src = writer.real_path(src) if not os.path.islink(os.path.join(root, src)) else src
    parent = posixpath.dirname(dst)
    if parent:
        writer.real_path(parent + "/x")  # OutsideVault if the new folder leads out
        os.makedirs(os.path.join(root, parent), exist_ok=True)
        writer.real_path(parent + "/x")
    target = os.path.join(root, dst)
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "exists; not replaced", dst)
    os.rename(os.path.join(root, real_src), target)
    writer.unsynced.update({posixpath.dirname(real_src), parent})  # the rename itself, durable
    moved = dict(plan.moves)
    written: list[str] = []
    changed: list[dict[str, str]] = []
    items: list[tuple[Snapshot, bytes]] = []
    paths: list[str] = []
    for item in plan.rewrites:
        new_path = moved.get(item.source, item.source)
        snapshot = item.snapshot
        if item.source in moved:
            try:
                snapshot = replace(snapshot, path=new_path, real=writer.real_path(new_path))
            except OutsideVault:
                changed.append({"path": new_path, "reason": "it now leads out of the vault"})
                continue
        items.append((snapshot, item.new_text.encode("utf-8")))
        paths.append(new_path)
    for new_path, problem in zip(paths, writer.replace_many(items), strict=True):
        if problem is None:
            written.append(new_path)
        else:
            changed.append({"path": new_path, "reason": why_not_written(problem)})
    return written, changed
