"""health's codes: one stable name per kind of finding, warning and error (issue 33), the
declarations of health's lists, and the selection ``--only``/``--ignore`` and the config file's
``ignore = [...]`` make of them (docs/cli.md, "Codes").

Pure data and small pure functions, on the query path: stdlib only, no ``re``, no ``typing``
at run time. ``vault`` writes a problem's kind as its code (``Problem.kind``); the stored kinds
``read`` and ``walk`` (which the writer's SQL selects by) are named here.
"""

TYPE_CHECKING = False  # mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


class Finding:
    """One list of health's report, declared: its code, its JSON list and count keys, its
    severity, its text section's title and what the items say in the text form.

    ``path_key``: the item field that names the note a path glob is matched against.
    ``commented``: its items carry ``inComment`` (links), which ``--ignore in-comment`` reads.
    ``exits``: a finding left after the ignores makes ``health`` exit 1."""

    __slots__ = (
        "code",
        "commented",
        "count_key",
        "exits",
        "file_fields",
        "file_where",
        "link_where",
        "list_key",
        "meaning",
        "path_key",
        "severity",
        "title",
        "upkeep",
    )

    def __init__(
        self,
        code: str,
        list_key: str,
        meaning: str,
        *,
        title: str,
        severity: str = "warning",
        count_key: str | None = None,
        path_key: str = "path",
        commented: bool = False,
        exits: bool = False,
        link_where: str | None = None,
        file_where: str | None = None,
        file_fields: "tuple[str, ...]" = ("path",),
        upkeep: str | None = None,
    ) -> None:
        self.code = code
        self.list_key = list_key
        self.meaning = meaning
        self.title = title
        self.severity = severity
        self.count_key = count_key
        self.path_key = path_key
        self.commented = commented
        self.exits = exits
        self.link_where = link_where
        """A finding about single links, declared by its rows: the condition on a link ``l``
        of a reported note that makes it one. The generic upkeep (store.linkfindings) keeps
        its rows exact for every note whose links change (edits, moves, deletions, new
        targets); health reads them as ``{source, line, column, text}`` in report order,
        and the text form lists them under ``title``. Adding such a finding is this entry,
        its test and its doc line."""
        self.file_where = file_where
        """A finding about whole files (a note or an attachment), declared by its rows: the
        condition on a file ``f`` (and, for a finding about notes, whose ``file_fields``
        show their ``title``, its note ``n``) that makes it one. The generic upkeep (store.linkfindings) keeps its rows
        ``file_findings(code, path)`` exact for every dirty file; health reads them as the
        objects of ``file_fields`` (``path``, ``title``) in path order."""
        self.file_fields = file_fields
        self.upkeep = upkeep
        """A finding that does not fit the generic upkeep names its own hook here (module and
        function of ``notedex.store``), which ``refresh_findings`` runs in the registry's
        order; ``None`` for a declared one (``link_where`` or ``file_where``)."""


# SEMANTICS 8: a link in from another note that is not excluded (Obsidian's graph hides
# excluded files, edges included), and a link out to another file or a broken one (a self-link
# is neither). Probes of one note's links by its id: the cost follows the dirty notes.
_LINKED_IN = """EXISTS (SELECT 1 FROM links l
    WHERE l.target_id = n.file_id AND l.source_id <> n.file_id
      AND NOT EXISTS (SELECT 1 FROM notes x WHERE x.file_id = l.source_id AND x.excluded = 1))"""
_LINKS_OUT = """EXISTS (SELECT 1 FROM links l
    WHERE l.source_id = n.file_id AND l.linkpath <> ''
      AND (l.target_id IS NULL OR l.target_id <> l.source_id))"""

FINDINGS = (
    Finding(
        "orphan",
        "orphanNotes",
        "a note with no link in from another note and no link out",
        title="Orphans: no links in or out",
        count_key="orphanCount",
        file_where=f"n.excluded = 0 AND NOT {_LINKED_IN} AND NOT {_LINKS_OUT}",
        file_fields=("path", "title"),
    ),
    Finding(
        "unlinked",
        "unlinkedNotes",
        "a note no other note links to, that links out",
        title="Unlinked: nothing links here",
        file_where=f"n.excluded = 0 AND NOT {_LINKED_IN} AND {_LINKS_OUT}",
        file_fields=("path", "title"),
    ),
    Finding(
        "broken-link",
        "brokenLinks",
        "a link or embed that resolves to no file",
        title="Broken links",
        severity="error",
        count_key="brokenLinkCount",
        path_key="source",
        commented=True,
        exits=True,
        # Its own upkeep: each row carries a suggestion computed in Python from the whole
        # vault's names and the rename history, refixed when a name comes or goes elsewhere.
        upkeep="findings.refresh_broken_links",
    ),
    Finding(
        "broken-anchor",
        "brokenAnchors",
        "a link to a heading or block its target note does not have",
        title="Broken anchors: no such heading or block",
        severity="error",
        count_key="brokenAnchorCount",
        path_key="source",
        commented=True,
        exits=True,
        # Its own upkeep: the verdict reads the target's outline (in another process at a
        # large build's end), and a target's edit re-checks the links into it.
        upkeep="findings_anchors.refresh",
    ),
    Finding(
        "dead-end",
        "deadEnds",
        "a note with no link out (links to itself aside)",
        title="Dead ends: no links out",
        count_key="deadEndCount",
        # SEMANTICS 8.8: whatever links in.
        file_where=f"n.excluded = 0 AND NOT {_LINKS_OUT}",
        file_fields=("path", "title"),
    ),
    Finding(
        "unused-attachment",
        "unusedAttachments",
        "an attachment no note links to or embeds",
        title="Unused attachments: no note links to or embeds them",
        count_key="unusedAttachmentCount",
        # SEMANTICS 8.9: an attachment (no notes row) that no link resolves to.
        file_where="f.is_note = 0 AND NOT EXISTS (SELECT 1 FROM links l WHERE l.target_id = f.id)",
    ),
    Finding(
        "self-link",
        "selfLinks",
        "a link from a note to itself by its name, without a heading or block (not broken)",
        title="Self-links: a note linking to itself",
        count_key="selfLinkCount",
        path_key="source",
        # Resolved to its own source, by a name or path (not `[[#H]]`), with no subpath.
        link_where="l.target_id = l.source_id AND l.linkpath <> '' AND l.subpath IS NULL",
    ),
)
"""health's finding lists, in the report's order (warnings and errors follow)."""

PROBLEM_LISTS = ("warnings", "errors")

LINK_FINDINGS = tuple(f for f in FINDINGS if f.link_where is not None)
"""The findings kept by the generic upkeep of single links (``Finding.link_where``)."""
FILE_FINDINGS = tuple(f for f in FINDINGS if f.file_where is not None)
"""The findings kept by the generic upkeep of whole files (``Finding.file_where``)."""

PROBLEM_CODES = {
    # warnings
    "ambiguous-link": "a link two files answer to equally; Obsidian's tie-break picked one",
    "empty-tag": "a `tags:` item that is empty",
    "tag-not-text": "a `tags:` item that is a number, a date or a list, not text",
    "tag-with-space": "a `tags:` item with a space in it, which Obsidian ignores",
    "singular-key": "`tag:` or `alias:`, which Obsidian ignores (it reads `tags:`, `aliases:`)",
    "not-a-list": "`tags:` or `aliases:` that is neither a string nor a list",
    "alias-not-text": "an `aliases:` item that is not text",
    "not-single-value": "`id:`, `type:` or `status:` given a list or a map",
    "duplicate-property": "a property written twice in one frontmatter; the first is used",
    "skipped-path": "a path the vault walk skipped (unreadable folder, bad name, symlink)",
    # errors
    "bad-yaml": "frontmatter that is not valid YAML; the note is read without it",
    "bad-encoding": "a note that is not valid UTF-8, read with replacement characters",
    "binary": "a .md file with binary content, indexed by name only",
    "too-large": "a note over max_bytes, indexed by name only",
    "unreadable": "a note that could not be read",
    "internal-error": "a note the parser failed on (a bug: please report it)",
}
"""The codes of warnings and errors, with their one-line meanings (docs/cli.md)."""

STORED_KINDS = {"read": "unreadable", "walk": "skipped-path"}
"""problems.kind values that are not codes themselves: the writer selects by them."""

IN_COMMENT = "in-comment"
IN_COMMENT_MEANING = (
    "a flag, not a list: a broken link or anchor inside a %%comment%% or <!-- comment -->"
)

CODES = {
    **{f.code: f.meaning for f in FINDINGS},
    **PROBLEM_CODES,
    IN_COMMENT: IN_COMMENT_MEANING,
}
"""Every code ``--only`` and ``--ignore`` accept, with its meaning."""


def is_code_like(word: str) -> bool:
    """A word ``--ignore`` reads as a code, not a path glob: no ``/``, ``.``, ``*``, ``?``
    or ``[`` (a folder is written ``Templates/``)."""
    return bool(word) and not any(ch in word for ch in "/.*?[")


class Selection:
    """What ``--only``, ``--ignore`` and the config's ``ignore`` leave of the report."""

    __slots__ = ("globs", "ignored", "only")

    def __init__(
        self, only: "Iterable[str]" = (), ignored: "Iterable[str]" = (), globs: "Iterable[str]" = ()
    ) -> None:
        self.only = frozenset(only)
        self.ignored = frozenset(ignored)
        self.globs = tuple(globs)

    @property
    def empty(self) -> bool:
        return not (self.only or self.ignored or self.globs)

    def wants(self, code: str, commented: bool = False) -> bool:
        """Whether any finding of ``code`` can stay (``commented``: its findings can be in a
        comment)."""
        codes = self.only - {IN_COMMENT}
        if codes and code not in codes:
            return False
        if IN_COMMENT in self.only and not commented:
            return False
        return code not in self.ignored

    def keeps_path(self, path: str) -> bool:
        return not any(_glob_matches(glob, path) for glob in self.globs)

    def keeps(self, code: str, path: str, in_comment: bool = False) -> bool:
        """Whether one finding of ``code`` on ``path`` stays: its code is among ``--only``'s
        (if any) and not ignored; ``in-comment`` in ``--only`` keeps only the findings in
        comments, in the ignores drops them; no ignored glob matches its path."""
        if in_comment and IN_COMMENT in self.ignored:
            return False
        if not in_comment and IN_COMMENT in self.only:
            return False
        codes = self.only - {IN_COMMENT}
        if codes and code not in codes:
            return False
        return code not in self.ignored and self.keeps_path(path)


def unknown_code_hint(word: str) -> str:
    """ "did you mean ..." for a word that is no code, else the list of codes."""
    import difflib  # only on an error

    close = difflib.get_close_matches(word, list(CODES), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}?"
    return "codes: " + ", ".join(CODES)


def selection(
    only: "Sequence[str]", ignore: "Sequence[str]", config_ignore: "Sequence[str]" = ()
) -> "tuple[Selection, list[str]]":
    """The selection of ``--only`` (codes), ``--ignore`` (codes or path globs) and the config
    file's ``ignore`` list; raises ValueError for an unknown code on the command line, and
    returns a warning for each unknown code of the config file (it is skipped)."""
    warnings: list[str] = []
    only_codes: list[str] = []
    for word in only:
        if word not in CODES:
            raise ValueError(f"--only: no such code {word!r}; {unknown_code_hint(word)}")
        only_codes.append(word)
    ignored: list[str] = []
    globs: list[str] = []
    for origin, words in (("--ignore", ignore), ("config", config_ignore)):
        for word in words:
            if word in CODES:
                ignored.append(word)
            elif not is_code_like(word):
                globs.append(word)
            elif origin == "config":
                warnings.append(
                    f"config file: ignore: no such code {word!r} (skipped); "
                    f"{unknown_code_hint(word)}"
                )
            else:
                raise ValueError(
                    f"--ignore: no such code {word!r}; {unknown_code_hint(word)} "
                    "(a folder is written with a slash: Templates/)"
                )
    return Selection(only_codes, ignored, globs), warnings


def _glob_matches(glob: str, path: str) -> bool:
    """``fnmatch`` on the vault path, ``*`` crossing folders; a glob that ends with ``/`` (or
    names a folder without a wildcard) matches everything under that folder."""
    if glob.endswith("/"):
        return path.startswith(glob)
    if not any(ch in glob for ch in "*?["):
        return path == glob or path.startswith(glob + "/")
    from fnmatch import fnmatchcase  # only with a glob

    return fnmatchcase(path, glob)
