"""`fix`: the suggestions of `health` that are safe to apply (SEMANTICS 8.10, 8.11), as edits.

The plan reads the broken links and anchors with their suggestions from the index
(``store.health_lists``), keeps those at or above the confidence asked for, reads each source file
once (``edit.safewrite``), finds every link where the index saw it (line, column, the text as
written) and rewrites only its target or anchor (``vault.relink``). Then it proves each file's
edit: the new text, parsed as the indexer parses it, has the same links in the same order,
each edited one resolving to the suggested file with the suggested anchor and showing the same
display text, the others unchanged. An edit that fails any of this is skipped and reported,
never written. ``apply`` writes the files through ``edit.safewrite`` (a file changed since it
was read is skipped).
"""

from __future__ import annotations

import difflib
import fnmatch
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from notedex.edit.safewrite import Snapshot, VaultWriter, why_not_written
from notedex.store import health_lists, relinks
from notedex.vault.anchors import anchor_confidence
from notedex.vault.fixes import SUGGESTION_THRESHOLD, broken_link_confidence
from notedex.vault.markdown.links import wikilink_parts
from notedex.vault.model import Link
from notedex.vault.parse import parse_note
from notedex.vault.reading import OutsideVault
from notedex.vault.relink import path_in_style, read_link, rewrite
from notedex.vault.resolve import Resolver

__all__ = ["CODES", "Edit", "FixPlan", "apply", "plan_fixes"]

BROKEN_LINK, BROKEN_ANCHOR = "broken-link", "broken-anchor"
CODES = (BROKEN_LINK, BROKEN_ANCHOR)
"""The findings `fix --only` names (the codes of `health`)."""


@dataclass(frozen=True)
class Edit:
    """One link rewritten: where (as `health` lists it), from what to what, and why."""

    source: str
    line: int
    column: int
    code: str
    text: str
    replacement: str
    reason: str
    confidence: float
    target: str
    """The vault path the link points to after the edit."""
    subpath: str | None
    """The anchor it names after the edit."""

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "text": self.text,
            "replacement": self.replacement,
            "reason": self.reason,
            "confidence": self.confidence,
        }


@dataclass
class FileEdit:
    source: str
    """The note's vault path (NFC, as the index names it)."""
    snapshot: Snapshot
    text: str
    new_text: str
    edits: list[Edit]


@dataclass
class FixPlan:
    files: list[FileEdit] = field(default_factory=list)
    skipped: list[dict[str, object]] = field(default_factory=list)
    """Edits not offered, each with its source, line, column and why."""

    @property
    def edits(self) -> list[Edit]:
        return [edit for file in self.files for edit in file.edits]

    def diff(self) -> str:
        """The plan as a unified diff, one file after another (``a/PATH``, ``b/PATH``)."""
        out: list[str] = []
        for file in self.files:
            out.extend(
                difflib.unified_diff(
                    file.text.splitlines(keepends=True),
                    file.new_text.splitlines(keepends=True),
                    f"a/{file.source}",
                    f"b/{file.source}",
                )
            )
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n\\ No newline at end of file\n"
        return "".join(out)


@dataclass(frozen=True)
class _Wanted:
    """A finding's suggestion, before its file is read."""

    source: str
    line: int
    column: int
    code: str
    text: str
    reason: str
    confidence: float
    target: str
    subpath: str | None
    new_linkpath_shortest: str | None
    """For a broken link: the suggestion's own linkpath (the bare name when unique)."""


def plan_fixes(
    conn: sqlite3.Connection,
    vault: str,
    *,
    only: Iterable[str] = CODES,
    path_glob: str | None = None,
    min_confidence: float = SUGGESTION_THRESHOLD,
) -> FixPlan:
    """The edits that apply the index's suggestions (see the module docstring)."""
    codes = set(only)
    disk = relinks.vault_paths(conn)
    resolver = Resolver(disk)
    wanted: list[_Wanted] = []
    if BROKEN_LINK in codes:
        wanted += _link_fixes(health_lists.broken_links(conn), resolver)
    if BROKEN_ANCHOR in codes:
        wanted += _anchor_fixes(health_lists.broken_anchors(conn))
    by_source: dict[str, list[_Wanted]] = {}
    for want in wanted:
        if path_glob is not None and not fnmatch.fnmatchcase(want.source, path_glob):
            continue
        if want.confidence < min_confidence:
            continue
        by_source.setdefault(want.source, []).append(want)
    plan = FixPlan()
    writer = VaultWriter(vault)
    for source in sorted(by_source):
        _plan_file(plan, writer, disk.get(source, source), source, by_source[source], resolver)
    return plan


def _link_fixes(rows: Iterable[sqlite3.Row], resolver: Resolver) -> list[_Wanted]:
    out = []
    for row in rows:
        if row["suggestion"] is None or not row["suggestion"].startswith("[["):
            continue
        parts = wikilink_parts(row["suggestion"][2:-2])
        if parts is None:
            continue
        linkpath = parts[0]
        target = resolver.resolve(linkpath, row["source"]).target
        if target is None:
            continue
        confidence = broken_link_confidence(row["reason"], row["target"])
        if confidence is None:
            continue
        out.append(
            _Wanted(
                row["source"],
                row["line"],
                row["column"],
                BROKEN_LINK,
                row["text"],
                row["reason"],
                confidence,
                target,
                None,
                linkpath,
            )
        )
    return out


def _anchor_fixes(rows: Iterable[sqlite3.Row]) -> list[_Wanted]:
    return [
        _Wanted(
            row["source"],
            row["line"],
            row["column"],
            BROKEN_ANCHOR,
            row["text"],
            row["reason"],
            anchor_confidence(row["subpath"], row["suggestion"], row["reason"]),
            row["target"],
            row["suggestion"],
            None,
        )
        for row in rows
        if row["suggestion"] is not None
    ]


def _skip(plan: FixPlan, want: _Wanted, why: str) -> None:
    plan.skipped.append(
        {"source": want.source, "line": want.line, "column": want.column, "reason": why}
    )


def _plan_file(
    plan: FixPlan,
    writer: VaultWriter,
    disk_rel: str,
    source: str,
    wants: list[_Wanted],
    resolver: Resolver,
) -> None:
    try:
        snapshot = writer.read(disk_rel)
    except (OSError, OutsideVault) as exc:
        for want in wants:
            _skip(plan, want, f"cannot read the file: {exc.strerror or exc}")
        return
    try:
        decoded = snapshot.data.decode("utf-8")
    except UnicodeDecodeError:
        for want in wants:
            _skip(plan, want, "the file is not valid UTF-8: never rewritten")
        return
    bom = "\ufeff" if decoded.startswith("\ufeff") else ""
    text = decoded[len(bom) :]
    starts = [0]
    starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")
    edits: list[tuple[int, Edit]] = []
    for want in sorted(wants, key=lambda w: (w.line, w.column)):
        edit = _edit(text, starts, want, resolver)
        if isinstance(edit, str):
            _skip(plan, want, edit)
        else:
            edits.append(edit)
    kept = _proved(plan, snapshot, source, text, edits, resolver)
    if not kept:
        return
    new_text = _applied(text, kept)
    plan.files.append(FileEdit(source, snapshot, bom + text, bom + new_text, [e for _, e in kept]))


def _applied(text: str, edits: list[tuple[int, Edit]]) -> str:
    out, at = [], 0
    for offset, edit in edits:
        out.append(text[at:offset])
        out.append(edit.replacement)
        at = offset + len(edit.text)
    out.append(text[at:])
    return "".join(out)


def _edit(
    text: str, starts: list[int], want: _Wanted, resolver: Resolver
) -> tuple[int, Edit] | str:
    """The edit of one finding at its place in ``text``, or why there is none."""
    if want.line > len(starts):
        return "the file no longer holds this link where the index saw it (run `notedex index`)"
    offset = starts[want.line - 1] + want.column - 1
    if text[offset : offset + len(want.text)] != want.text:
        return "the file no longer holds this link where the index saw it (run `notedex index`)"
    link = read_link(want.text)
    if link is None:
        return "the link as written cannot be rewritten"
    line_end = text.find("\n", offset)
    line_start = starts[want.line - 1]
    in_table = text[line_start : line_end if line_end >= 0 else len(text)].lstrip().startswith("|")
    if want.new_linkpath_shortest is not None:
        written = link.linkpath
        if link.markdown:
            from notedex.vault.markdown.links import percent_decoded

            try:
                written = percent_decoded(written)
            except (UnicodeDecodeError, ValueError):
                return "the link as written cannot be rewritten"
        linkpath = path_in_style(
            written.strip(), want.target, want.source, want.new_linkpath_shortest
        )
        replacement = rewrite(link, linkpath=linkpath, in_table=in_table)
    else:
        replacement = rewrite(link, subpath=want.subpath, in_table=in_table)
    edit = Edit(
        want.source,
        want.line,
        want.column,
        want.code,
        want.text,
        replacement,
        want.reason,
        want.confidence,
        want.target,
        want.subpath,
    )
    return offset, edit


def _proved(
    plan: FixPlan,
    snapshot: Snapshot,
    source: str,
    text: str,
    edits: list[tuple[int, Edit]],
    resolver: Resolver,
) -> list[tuple[int, Edit]]:
    """The edits whose result the parser reads as meant (the module docstring); an edit that
    is not is dropped and the rest proved again."""
    while edits:
        new_text = _applied(text, edits)
        bad = _first_bad(text, new_text, source, edits, resolver)
        if bad is None:
            return edits
        index, why = bad
        edit = edits.pop(index)[1]
        plan.skipped.append(
            {"source": edit.source, "line": edit.line, "column": edit.column, "reason": why}
        )
    return edits


def _first_bad(
    text: str, new_text: str, source: str, edits: list[tuple[int, Edit]], resolver: Resolver
) -> tuple[int, str] | None:
    old_links = parse_note(text.encode("utf-8"), source).links
    new_links = parse_note(new_text.encode("utf-8"), source).links
    if len(old_links) != len(new_links):
        # Which edit made or broke a link: the first whose own file alone differs.
        for index, (offset, edit) in enumerate(edits):
            alone = _applied(text, [(offset, edit)])
            if len(parse_note(alone.encode("utf-8"), source).links) != len(old_links):
                return index, "the rewritten link would change the links around it"
        return 0, "the rewritten links would change the links around them"
    at = {(link.line, link.column): i for i, link in enumerate(old_links)}
    edited: dict[int, int] = {}
    for index, (_, edit) in enumerate(edits):
        position = at.get((edit.line, edit.column))
        if position is None:
            return index, "the index's link is not where the parser finds it"
        edited[position] = index
    for position, (old, new) in enumerate(zip(old_links, new_links, strict=True)):
        mine = edited.get(position)
        if mine is None:
            if _parts(old) != _parts(new):
                return 0, "the rewritten links would change another link"
            continue
        index = mine
        edit = edits[index][1]
        why = _meant(old, new, edit, source, resolver)
        if why is not None:
            return index, why
    return None


def _parts(link: Link) -> tuple[object, ...]:
    return (link.kind, link.linkpath, link.subpath, link.display)


def _meant(old: Link, new: Link, edit: Edit, source: str, resolver: Resolver) -> str | None:
    """Why the rewritten link ``new`` is not what ``edit`` meant, or None."""
    if new.kind != old.kind:
        return "the rewritten link would change its kind"
    if resolver.resolve(new.linkpath, source).target != edit.target:
        return "the rewritten link would not resolve to the suggested file"
    if edit.subpath is not None and new.subpath != edit.subpath:
        return "the rewritten link would not name the suggested anchor"
    if edit.subpath is None and new.subpath != old.subpath:
        return "the rewritten link would lose its anchor"
    if old.display is not None and new.display != old.display:
        return "the rewritten link would change its display text"
    return None


def apply(plan: FixPlan, writer: VaultWriter) -> tuple[list[str], list[dict[str, str]]]:
    """Write the plan's files: (the paths written, the files skipped with why)."""
    written: list[str] = []
    skipped: list[dict[str, str]] = []
    items = [(file.snapshot, file.new_text.encode("utf-8")) for file in plan.files]
    for file, problem in zip(plan.files, writer.replace_many(items), strict=True):
        if problem is None:
            written.append(file.source)
        else:
            skipped.append({"path": file.source, "reason": why_not_written(problem)})
    return written, skipped
