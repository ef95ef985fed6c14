"""The index schema: a versioned cache of the vault (STYLE 3). Bump SCHEMA_VERSION (store.schema_head) on any change.

Over 400 lines on purpose: the DDL is one script that store.database runs whole, and the
triggers that keep health's and tags' stored answers (issue 12) stand beside their tables.
"""

# SCHEMA_VERSION and NOTE_TITLE live in store.schema_head (the query path reads them without
# this module's DDL); bump SCHEMA_VERSION there on any change, with its history.
from notedex.store.schema_head import NOTE_TITLE as NOTE_TITLE
from notedex.store.schema_head import SCHEMA_VERSION as SCHEMA_VERSION

REBUILD_SUFFIX = ".rebuild"
"""``<db>.rebuild``: an index being built to be swapped in (store.swap); ``status`` tells."""

# porter stems Latin words; unicode61 folds case and diacritics. CJK arrives pre-segmented
# (vault.text.segment) so every bigram is a token.
TOKENIZER = "porter unicode61 remove_diacritics 2"

# links.raw as written, for a row of `links l` (see link_text).
LINK_TEXT = """coalesce(l.raw, CASE WHEN l.kind IN (1, 3) THEN '!' ELSE '' END || CASE
    WHEN l.kind IN (2, 3) THEN '[' || coalesce(l.display, '') || '](' || replace(l.linkpath, ' ', '%20')
                               || coalesce(l.subpath, '') || ')'
    ELSE '[[' || l.linkpath || coalesce(l.subpath, '') || coalesce('|' || l.display, '') || ']]'
END)"""

# The text a link gives its target in link_fts's `anchors` (its display, then its linkpath), for
# a row of `links` (unqualified: the view link_texts_now and store/findings.py read it).
LINK_ANCHOR = "coalesce(display || ' ', '') || linkpath"

# health's brokenAnchors object (docs/cli.md) for a row of `broken_anchors b` with its link
# `links l`, source `files s` and target `files t`: one list for the stored documents
# (broken_anchor_docs, below) and the rows health_lists.broken_anchors returns.
BROKEN_ANCHOR_FIELDS = (
    ("source", "s.path"),
    ("line", "l.line"),
    ("column", "l.col"),
    ("text", LINK_TEXT),
    ("target", "t.path"),
    ("subpath", "l.subpath"),
    ("kind", "b.kind"),
    ("suggestion", "b.suggestion"),
    ("reason", "b.reason"),
    ("confidence", "b.confidence"),
)
BROKEN_ANCHOR_JOIN = """
    FROM broken_anchors b CROSS JOIN links l ON l.source_id = b.source_id AND l.seq = b.seq
    CROSS JOIN files s ON s.id = b.source_id CROSS JOIN files t ON t.id = b.target_id
"""


def with_comment_flag(doc: str, flag: str) -> str:
    """``doc`` (a JSON object) ending with ``"inComment": true`` where ``flag`` (issue 33), as
    it was elsewhere: the key is there only for a link inside a comment."""
    return f"CASE WHEN {flag} THEN json_insert({doc}, '$.inComment', json('true')) ELSE {doc} END"


_ANCHOR_DOC = with_comment_flag(
    "json_object(" + ", ".join(f"'{k}', {v}" for k, v in BROKEN_ANCHOR_FIELDS) + ")",
    "l.in_comment",
)


BROKEN_LINK_DOC = with_comment_flag(
    "json_object("
    + ", ".join(
        f"'{key}', {column}"
        for key, column in (
            ("source", "source"),
            ("line", "line"),
            ("column", "col"),
            ("text", "text"),
            ("target", "target"),
        )
    )
    # SEMANTICS 8.10 (issue 33): below the threshold the suggestion is not offered (its stored
    # confidence is NULL).
    + ", 'suggestion', CASE WHEN confidence IS NOT NULL THEN suggestion END"
    ", 'reason', CASE WHEN confidence IS NOT NULL THEN reason END"
    ", 'confidence', confidence)",
    "in_comment",
)
"""health's brokenLinks object (docs/cli.md) for a row of ``broken_links``, rendered as health
reads the rows in key order: no join, one table (issue 35, size: the stored copy of these
objects, broken_link_docs, was over twice the table's bytes)."""


def _anchor_docs_of(where: str) -> str:
    """The statement that (re)writes the stored documents of the broken anchors ``where``."""
    return f"""
    INSERT OR REPLACE INTO broken_anchor_docs(source, line, col, seq, doc)
    SELECT s.path, l.line, l.col, l.seq, {_ANCHOR_DOC}
    {BROKEN_ANCHOR_JOIN} WHERE {where};"""


def _anchor_doc_gone(source_id: str, seq: str) -> str:
    """The statement that deletes the stored document of the broken anchor of the link
    (``source_id``, ``seq``): a document is keyed by its source's path, which is always the
    file's path now (``PATH_ANCHOR_DOCS``, ``moved_anchor_docs``), and a note's documents are
    one short range of the key (issue 35, size: no index by link, 3 MB at 100k notes)."""
    return f"""
    DELETE FROM broken_anchor_docs
    WHERE source = (SELECT path FROM files WHERE id = {source_id}) AND seq = {seq};"""


ANCHOR_DOC_INSERT = "broken_anchors_doc_insert"
"""The trigger that writes a broken anchor's stored document as its row is inserted; an
insert into an empty table drops it and writes every document at once (``EVERY_ANCHOR_DOC``)."""
EVERY_ANCHOR_DOC = _anchor_docs_of("1").rstrip().rstrip(";") + " ORDER BY b.source_id, b.seq"
"""The stored document of every broken anchor, in one statement: for rows inserted into an
empty table with ``ANCHOR_DOC_INSERT`` dropped (a first index: 0.27 s at 100k notes' 50,000
broken anchors, against 0.7 s for a trigger program per row). In the key order of the rows,
which is the documents' too: the planner would read them by target (broken_anchors_target),
and the documents' B-trees took them at random (0.5 s)."""

PATH_ANCHOR_DOCS = "files_path_anchor_docs"
"""The trigger that rewrites the stored documents of a file's broken anchors when its path
changes; a move of many files updates their paths in two statements instead
(``moved_anchor_docs``)."""


def moved_anchor_docs(moved: str) -> tuple[str, str]:
    """The statements that give the stored documents of the broken anchors out of and into
    the moved files their new paths, as ``PATH_ANCHOR_DOCS`` does for one file: ``moved`` is a
    table of (id, old, new). Only the path fields change (``json_set`` keeps the other fields' text
    and their order, and quotes the path as ``json_object`` does), so a folder rename does not
    join and render 12,000 documents again (issue 17, speed). Each document is written once:
    one out of a moved file gets its source and, if its target moved too (a link within the
    folder, a self-link: about a sixth of a folder rename's), its target in the same write;
    the second statement takes the rest, into a moved file from one that stayed. ``moved``
    also holds each file's old path (``old``), which its documents are keyed by until then."""
    # IN (subquery), not UPDATE ... FROM: the planner knows nothing of the temp table and would
    # scan every document. The source is a key column: set only where it changes. A document
    # is found by its source's path (old, for the moved sources) and its link's seq.
    return (
        f"""
        UPDATE broken_anchor_docs SET (source, doc) = (
            SELECT m.new, CASE WHEN t.new IS NULL
                THEN json_set(broken_anchor_docs.doc, '$.source', m.new)
                ELSE json_set(broken_anchor_docs.doc, '$.source', m.new, '$.target', t.new) END
            FROM {moved} m CROSS JOIN broken_anchors b
                ON b.source_id = m.id AND b.seq = broken_anchor_docs.seq
            LEFT JOIN {moved} t ON t.id = b.target_id
            WHERE m.old = broken_anchor_docs.source)
        WHERE source IN (SELECT old FROM {moved})""",
        f"""
        UPDATE broken_anchor_docs SET doc = json_set(doc, '$.target', (
            SELECT m.new FROM files s CROSS JOIN broken_anchors b ON b.source_id = s.id
            CROSS JOIN {moved} m ON m.id = b.target_id
            WHERE s.path = broken_anchor_docs.source AND b.seq = broken_anchor_docs.seq))
        WHERE source IN (
            SELECT s.path FROM {moved} m CROSS JOIN broken_anchors b ON b.target_id = m.id
            CROSS JOIN files s ON s.id = b.source_id
            WHERE b.source_id NOT IN (SELECT id FROM {moved}))
          AND (source, seq) IN (
            SELECT s.path, b.seq FROM {moved} m CROSS JOIN broken_anchors b ON b.target_id = m.id
            CROSS JOIN files s ON s.id = b.source_id
            WHERE b.source_id NOT IN (SELECT id FROM {moved}))""",
    )


DDL = f"""
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

-- Every vault file, notes and attachments alike: link targets and the reconcile etags.
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- vault-relative, '/', NFC
    disk_rel TEXT,                      -- on-disk relative name when it differs from path (NFD)
    is_note INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    indexed_ns INTEGER NOT NULL,        -- when we last read it: racy-clean detection
    ctime_ns INTEGER NOT NULL DEFAULT 0 -- change time: moves on every write, cannot be set back
);
-- Hard links and symlinks to one file share its inode: an event names only one of them.
CREATE INDEX IF NOT EXISTS files_inode ON files(inode);
-- The files filed under a name (nx_file_name_crc, the writer's: resolve.file_name_crc): a
-- one-shot writer (`mv`) finds the files of a few names without keying every file (issue 33).
CREATE INDEX IF NOT EXISTS files_name_key ON files(nx_file_name_crc(path));

CREATE TABLE IF NOT EXISTS notes (
    file_id INTEGER PRIMARY KEY REFERENCES files(id),
    stem TEXT NOT NULL,                 -- title = coalesce(frontmatter_title, stem): see NOTE_TITLE
    frontmatter_title TEXT,
    first_h1 TEXT,
    note_id TEXT,
    type TEXT,
    status TEXT,
    excluded INTEGER NOT NULL DEFAULT 0,  -- Obsidian "Excluded files": link targets, not reported
    content_hash INTEGER NOT NULL,        -- content_key(sha256 hex): the first 60 bits
    properties TEXT,                      -- JSON, for show/export
    outline TEXT                          -- headings and block ids, NULL when none:
                                          -- store/outline.py (SEMANTICS 10.1, 10.2)
);
CREATE INDEX IF NOT EXISTS notes_excluded ON notes(file_id) WHERE excluded = 1;
-- A note deleted just after one of its content was created is a rename (store/renames.py).
CREATE INDEX IF NOT EXISTS notes_content ON notes(content_hash);

-- One row per property value (a list: one per item), typed by its value as Obsidian types it
-- (vault/properties.py, SEMANTICS 14): what --where, --sort PROPERTY and `properties` read.
CREATE TABLE IF NOT EXISTS properties (
    file_id INTEGER NOT NULL,
    key TEXT NOT NULL,                  -- the name folded (NFC, lower)
    position INTEGER NOT NULL,          -- 0 for a single value, else the list item's index
    is_list INTEGER NOT NULL,
    kind TEXT NOT NULL,                 -- text, number, checkbox, date, datetime, null, object
    value TEXT,                         -- as written (dates ISO, checkboxes true/false)
    fold TEXT,                          -- text lower-cased; dates as YYYY-MM-DDTHH:MM:SS
    num REAL,                           -- a number, or text that reads as one
    PRIMARY KEY (file_id, key, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS properties_key ON properties(key, fold);

-- A vault has a few hundred tag spellings on 100k notes: each is stored once.
CREATE TABLE IF NOT EXISTS tag_names (
    id INTEGER PRIMARY KEY,
    tag TEXT NOT NULL UNIQUE,           -- a spelling as written
    tag_key TEXT NOT NULL               -- lower-cased, for filtering (nested: a/b counts for a)
);
CREATE INDEX IF NOT EXISTS tag_names_key ON tag_names(tag_key);

CREATE TABLE IF NOT EXISTS tags (
    file_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    tag_id INTEGER NOT NULL,            -- tag_names.id of the first-seen spelling in this note
    inline INTEGER NOT NULL,            -- 1 from the body, 0 from the frontmatter
    PRIMARY KEY (file_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag_id);

CREATE TABLE IF NOT EXISTS aliases (
    file_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    alias TEXT NOT NULL,
    alias_key TEXT NOT NULL,            -- resolve.name_key(alias): the broken links it may fix
    PRIMARY KEY (file_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS aliases_key ON aliases(alias_key);

-- Clustered by source: a note's links are one range of the table, in document order.
CREATE TABLE IF NOT EXISTS links (
    source_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,               -- position among the note's links (document order)
    kind INTEGER NOT NULL,              -- index into LINK_KINDS
    linkpath TEXT NOT NULL,
    subpath TEXT,
    display TEXT,
    raw TEXT,                           -- the text as written; NULL when it is link_text(...)
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,
    target_id INTEGER,                  -- files.id, NULL when unresolved or a self-link
    ambiguous INTEGER NOT NULL DEFAULT 0,
    name_key TEXT,                      -- resolve.name_key(linkpath), only while unresolved
    in_comment INTEGER NOT NULL DEFAULT 0,  -- inside a %%comment%% or <!-- comment -->
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_target ON links(target_id) WHERE target_id IS NOT NULL;
-- Broken links (SEMANTICS 8), and the links a new file may resolve (SEMANTICS 7).
CREATE INDEX IF NOT EXISTS links_unresolved ON links(name_key) WHERE name_key IS NOT NULL;
-- The same keys by their end (nx_reverse, the writer's): with links_unresolved, the broken keys
-- one edit from a note's name are two range probes, not a read of every broken link (issue 35).
CREATE INDEX IF NOT EXISTS links_unresolved_reversed ON links(nx_reverse(name_key))
WHERE name_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS links_ambiguous ON links(source_id) WHERE ambiguous = 1;
-- The links inside comments (issue 33): health counts its `in-comment` findings by them, from
-- the index alone (name_key and in_comment make it covering: 5,463 look-ups into links cost
-- 18 ms warm, 93 ms cold, at 100k notes).
CREATE INDEX IF NOT EXISTS links_in_comment ON links(source_id, seq, name_key, in_comment)
WHERE in_comment = 1;
-- The links a path can decide (SEMANTICS 7.5-7.7: a folder in the linkpath, or a tie-break), by
-- target: the links into moved files a folder rename re-resolves (LinkTargets.reresolve_moved),
-- about 12% of a vault's links. The WHERE must stay links._PATH_DEPENDENT, word for word.
CREATE INDEX IF NOT EXISTS links_path_dependent ON links(target_id)
WHERE ambiguous = 1 OR instr(linkpath, '/') > 0;

-- health's findings (SEMANTICS 8) for the reported notes (not Obsidian-excluded), kept by the
-- writer for every note whose links or backlinks change, in report order: health reads them
-- as they are, so its cost grows with the findings, not with the vault.
CREATE TABLE IF NOT EXISTS broken_links (
    source TEXT NOT NULL,               -- the note's path
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,
    seq INTEGER NOT NULL,               -- links.seq
    text TEXT NOT NULL,                 -- the link as written
    target TEXT NOT NULL,               -- its broken key (SEMANTICS 7)
    suggestion TEXT,                    -- a link that would resolve, or NULL (SEMANTICS 8.3)
    reason TEXT,                        -- 'alias', 'folder', 'renamed' or 'typo', or NULL
    confidence REAL,                    -- the suggestion's (SEMANTICS 8.10) when it is offered,
                                        -- else NULL: nx_link_confidence, the one rule
    in_comment INTEGER NOT NULL DEFAULT 0,  -- links.in_comment (issue 33)
    PRIMARY KEY (source, line, col, seq)
) WITHOUT ROWID;

-- SEMANTICS 10.7: links whose target note has no such heading or block, by links row. Kept
-- for the links out of and into every dirty note (its outline or its links changed).
CREATE TABLE IF NOT EXISTS broken_anchors (
    source_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,               -- links.seq
    target_id INTEGER NOT NULL,         -- the target note (the source itself for [[#H]])
    kind TEXT NOT NULL,                 -- 'heading' or 'block'
    suggestion TEXT,                    -- the closest subpath of the target, or NULL
    reason TEXT,                        -- why: 'prefix', 'words', 'typo', or NULL
    confidence REAL,                    -- how sure (SEMANTICS 10.8), or NULL
    PRIMARY KEY (source_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS broken_anchors_target ON broken_anchors(target_id);

-- health's findings about single links declared in notedex.codes (`Finding.link_where`, issue
-- 33: self-links), kept for every dirty note by store/linkfindings.py; ids, not paths, so a
-- move leaves them as they are, and health joins them to their links and files.
CREATE TABLE IF NOT EXISTS link_findings (
    code TEXT NOT NULL,                 -- the finding's code
    source_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,               -- links.seq
    PRIMARY KEY (code, source_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS link_findings_source ON link_findings(source_id);

-- health's findings about whole files declared in notedex.codes (`Finding.file_where`, issue
-- 33: orphans, unlinked notes, dead ends, unused attachments), kept for every dirty file by
-- store/linkfindings.py with what health prints of them, in report order (by code, then
-- path), so health reads them in order; a move updates the path in place. A file's rows are
-- found by its path, always files.path (issue 35, size: no index by file id).
CREATE TABLE IF NOT EXISTS file_findings (
    code TEXT NOT NULL,                 -- the finding's code
    path TEXT NOT NULL,                 -- the file's path
    title TEXT,                         -- the note's title; NULL for a finding about files
                                        -- health renders `Finding.file_fields` as it reads
    PRIMARY KEY (code, path)
) WITHOUT ROWID;

-- health's brokenAnchors as the JSON objects it prints, in report order (SEMANTICS 10.7): a
-- copy of broken_anchors with its link's fields and both paths, kept by the triggers below
-- (a row written or deleted, a file renamed in place), so health reads one column in order
-- instead of joining every broken anchor to its link and two files (issue 12, speed). A
-- change finds a link's document by its source's path and seq (_anchor_doc_gone).
CREATE TABLE IF NOT EXISTS broken_anchor_docs (
    source TEXT NOT NULL,               -- the source's path, always files.path now
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    doc TEXT NOT NULL,                  -- the brokenAnchors object (docs/cli.md)
    PRIMARY KEY (source, line, col, seq)
) WITHOUT ROWID;
-- INSERT OR REPLACE into broken_anchors fires no delete trigger (recursive_triggers is off):
-- a replaced row's document goes here first.
CREATE TRIGGER IF NOT EXISTS {ANCHOR_DOC_INSERT} AFTER INSERT ON broken_anchors BEGIN
    {_anchor_doc_gone("new.source_id", "new.seq")}
    {_anchor_docs_of("b.source_id = new.source_id AND b.seq = new.seq")}
END;
CREATE TRIGGER IF NOT EXISTS broken_anchors_doc_update AFTER UPDATE ON broken_anchors BEGIN
    {_anchor_doc_gone("old.source_id", "old.seq")}
    {_anchor_docs_of("b.source_id = new.source_id AND b.seq = new.seq")}
END;
CREATE TRIGGER IF NOT EXISTS broken_anchors_doc_delete AFTER DELETE ON broken_anchors BEGIN
    {_anchor_doc_gone("old.source_id", "old.seq")}
END;
CREATE TRIGGER IF NOT EXISTS {PATH_ANCHOR_DOCS} AFTER UPDATE OF path ON files
WHEN old.path IS NOT new.path BEGIN
    DELETE FROM broken_anchor_docs WHERE source = old.path;
    {_anchor_docs_of("b.source_id = new.id")}
    {_anchor_docs_of("b.target_id = new.id")}
END;

-- `tags` (SEMANTICS 4.10) counted ahead, for the notes that are not excluded: tag_uses per
-- spelling, tag_rollup per key (the notes with it or a tag nested in it, each note once),
-- tagged_notes (the notes with a tag), and per note what it adds (tag_note_keys), so a change
-- is a difference, not a recount. The triggers only mark the notes whose tags or exclusion
-- changed (tagged_dirty; a note row is written before its tags and deleted after them,
-- store/notes.py, so those mark it too); store/tagcounts.py applies the differences at the
-- end of every findings refresh. Tag rows are inserted in one place, store/notes.py, which
-- marks their notes there, once per note: a trigger per inserted row cost a cold index of
-- 100k notes 0.9 s on the writer's thread (issue 12, wall).
CREATE TABLE IF NOT EXISTS tag_uses (
    tag_id INTEGER PRIMARY KEY,         -- tag_names.id
    notes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tag_rollup (
    tag_key TEXT PRIMARY KEY,           -- a tag key or a parent of one
    notes INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tagged_notes (
    file_id INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS tag_note_keys (
    file_id INTEGER PRIMARY KEY,        -- a counted note (not excluded, with tags)
    tag_ids TEXT NOT NULL               -- its spellings counted in tag_uses, JSON; what it adds
                                        -- to tag_rollup is their keys rolled up (tagcounts)
);
CREATE TABLE IF NOT EXISTS tagged_dirty (
    file_id INTEGER PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS tags_count_delete AFTER DELETE ON tags BEGIN
    INSERT OR IGNORE INTO tagged_dirty(file_id) VALUES (old.file_id);
END;
CREATE TRIGGER IF NOT EXISTS tags_count_update AFTER UPDATE ON tags BEGIN
    INSERT OR IGNORE INTO tagged_dirty(file_id) VALUES (old.file_id), (new.file_id);
END;
CREATE TRIGGER IF NOT EXISTS notes_count_excluded AFTER UPDATE OF excluded ON notes
WHEN old.excluded IS NOT new.excluded BEGIN
    INSERT OR IGNORE INTO tagged_dirty(file_id) VALUES (new.file_id);
END;

-- SEMANTICS 8.3: the files seen moved or renamed (a move, or a note deleted and one of the same
-- content created in one apply), newest last, at most RENAME_HISTORY rows. file_id follows the
-- file through later moves; a file deleted takes its rows with it.
CREATE TABLE IF NOT EXISTS renames (
    seq INTEGER PRIMARY KEY,
    old_key TEXT NOT NULL,              -- the old name as a broken link's key: file_stem_key of
                                        -- a note, file_name_key of an attachment
    old_path TEXT NOT NULL,
    file_id INTEGER NOT NULL            -- files.id now
);
CREATE INDEX IF NOT EXISTS renames_key ON renames(old_key);
CREATE INDEX IF NOT EXISTS renames_file ON renames(file_id);

-- Obsidian Bases (issue 32): each .base file's YAML as JSON, read by the indexer (PyYAML) so
-- that `notedex base` reads it with the stdlib; `error` says why a file is no base (doc NULL).
CREATE TABLE IF NOT EXISTS bases (
    file_id INTEGER PRIMARY KEY,        -- files.id of the .base file
    doc TEXT,
    error TEXT
);

-- Errors and warnings, per vault path (a note, or a walk problem on any path).
CREATE TABLE IF NOT EXISTS problems (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    severity TEXT NOT NULL CHECK (severity IN ('error', 'warning')),
    kind TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS problems_path ON problems(path);
-- The notes that could not be read (files.unreadable_paths, after every apply), not every problem.
CREATE INDEX IF NOT EXISTS problems_unreadable ON problems(path)
WHERE kind = 'read' AND severity = 'error';

-- Structure search: what lookup matches, computed from the tables (nx_segment is the writer's
-- vault.text.segment), so its text is not stored twice. file_id = files.id of the note.
--   title: stem, frontmatter title, first H1; tags; aliases.
CREATE VIEW IF NOT EXISTS note_fts_text AS
SELECT n.file_id AS file_id,
       nx_segment(n.stem || ' ' || coalesce(n.frontmatter_title, '') || ' '
                  || coalesce(n.first_h1, '')) AS title,
       nx_segment((SELECT group_concat(tag, ' ') FROM (
           SELECT k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id
           WHERE t.file_id = n.file_id ORDER BY t.position))) AS tags,
       nx_segment((SELECT group_concat(alias, ' ') FROM (
           SELECT alias FROM aliases WHERE file_id = n.file_id ORDER BY position))) AS aliases
FROM notes n;
-- What link_fts should hold for each note, computed from `links`:
--   anchors: the texts other notes use to link here; unresolved: this note's broken link keys.
CREATE VIEW IF NOT EXISTS link_texts_now AS
SELECT n.file_id AS file_id,
       nx_segment((SELECT group_concat(anchor, ' ') FROM (
           SELECT DISTINCT {LINK_ANCHOR} AS anchor
           FROM links WHERE target_id = n.file_id AND source_id <> n.file_id
           ORDER BY anchor))) AS anchors,
       nx_segment((SELECT group_concat(linkpath, ' ') FROM (
           SELECT DISTINCT linkpath FROM links
           WHERE source_id = n.file_id AND target_id IS NULL AND linkpath <> ''
           ORDER BY linkpath))) AS unresolved
FROM notes n;
-- link_fts's content as it was indexed, segmented (issue 17, speed): a row here is a row of
-- link_fts with exactly this text, so FTS5 deletes a row by reading it back, not by deriving
-- it again through a view, and the writer rewrites only the rows whose text changes
-- (findings.refresh_fts compares link_texts_now with it).
CREATE TABLE IF NOT EXISTS link_texts (
    file_id INTEGER PRIMARY KEY,        -- notes.file_id
    anchors TEXT NOT NULL,
    unresolved TEXT NOT NULL
);

-- External content: FTS5 reads a row's old text from the view to delete it, so the writer
-- takes a note's note_fts row out before any of its inputs change (findings.withdraw).
-- Two tables: FTS5's BM25 normalises by the length of the whole row, so the
-- texts other notes link here with (anchors) live apart and never make a well-linked note
-- rank lower (ARCHITECTURE "Two-stage lookup").
CREATE VIRTUAL TABLE IF NOT EXISTS note_fts USING fts5(
    title, tags, aliases,
    content = 'note_fts_text', content_rowid = 'file_id',
    tokenize = '{TOKENIZER}'
);
-- Lookup's tier 2 ranks by BM25 over a note's names alone (ARCHITECTURE "Two-stage lookup"):
-- the same view's title and aliases, withdrawn and inserted with note_fts.
CREATE VIRTUAL TABLE IF NOT EXISTS name_fts USING fts5(
    title, aliases,
    content = 'note_fts_text', content_rowid = 'file_id',
    tokenize = '{TOKENIZER}'
);
CREATE VIRTUAL TABLE IF NOT EXISTS link_fts USING fts5(
    anchors, unresolved,
    content = 'link_texts', content_rowid = 'file_id',
    tokenize = '{TOKENIZER}'
);

-- Notes whose structure-search rows are withdrawn and still to be inserted again (crash-safe).
CREATE TABLE IF NOT EXISTS fts_pending (
    id INTEGER PRIMARY KEY
);

-- Lookup's tier 1 (ARCHITECTURE "Two-stage lookup"): every name a note answers to exactly,
-- folded by vault.text.exact_name_key (match_key's words joined by spaces): its stem,
-- frontmatter title and first H1 (alias = 0) and its aliases (alias = 1), each also less its
-- stop words and hub words (vault.text.name_keys, schema 22), so a question's
-- exact names are one index seek, not a BM25 ranking of every note that holds its words.
-- Written with the note's rows (store/notes.py); a move re-keys the stem. No index by note:
-- the writer deletes a note's rows by their keys, derived again from the rows they came from
-- (issue 35, size).
CREATE TABLE IF NOT EXISTS exact_names (
    key TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    alias INTEGER NOT NULL,
    PRIMARY KEY (key, file_id, alias)
) WITHOUT ROWID;

-- SEMANTICS 13: a note's Markdown tasks, written and deleted with its other rows
-- (store/notes.py); a move keeps them (the path is the file's). `notedex tasks` reads them.
CREATE TABLE IF NOT EXISTS tasks (
    file_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,               -- the task's place in the note
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,               -- of the `[`
    status TEXT NOT NULL,               -- the one character between the brackets
    state INTEGER NOT NULL,             -- index into TASK_STATES (SEMANTICS 13.3)
    text TEXT NOT NULL,
    tags TEXT,                          -- its inline tags, a JSON array; NULL for none
    due TEXT, scheduled TEXT, start TEXT, created TEXT, done TEXT, cancelled TEXT,
    PRIMARY KEY (file_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_status ON tasks(state, status);
CREATE INDEX IF NOT EXISTS tasks_due ON tasks(due) WHERE due IS NOT NULL;

-- Loose title matching for lookup's stage 2: any substring of 3+ characters, indexed.
-- External content: the text stays in notes; only the trigram index is stored.
-- The title is the frontmatter title or else the stem, so those two columns cover it.
CREATE VIRTUAL TABLE IF NOT EXISTS title_grams USING fts5(
    stem, frontmatter_title,
    content = 'notes', content_rowid = 'file_id',
    columnsize = 0,
    tokenize = 'trigram'
);

-- Full-text search over bodies. rowid = files.id of the note. External content: the text
-- FTS5 needs to delete a row is vault.text.segment(body), zlib-compressed in body_store and
-- read back through the view; only the writer registers nx_inflate. Readers never read it:
-- search matches and ranks with the index alone and takes positions from the files
-- (ARCHITECTURE "The body index"). The writer deletes a body_fts row before its body_store row.
CREATE TABLE IF NOT EXISTS body_store (
    file_id INTEGER PRIMARY KEY,
    z BLOB NOT NULL                     -- zlib, with body_dict's dictionary once there is one
);
-- The preset dictionary of body_store's streams (store/bodyzip.py, schema 27): 32 kB of the
-- vault's own bodies, taken once per index; a stream names it by its Adler-32.
CREATE TABLE IF NOT EXISTS body_dict (
    adler INTEGER PRIMARY KEY,
    d BLOB NOT NULL
);
CREATE VIEW IF NOT EXISTS body_text AS
SELECT file_id, nx_inflate(z) AS body FROM body_store;
CREATE VIRTUAL TABLE IF NOT EXISTS body_fts USING fts5(
    body,
    content = 'body_text', content_rowid = 'file_id',
    tokenize = '{TOKENIZER}'
);
"""

_TRIGGER = "CREATE TRIGGER IF NOT EXISTS "
_TRIGGER_END = "\nEND;\n"


def split_ddl() -> tuple[str, list[str]]:
    """``DDL`` without its triggers, and the triggers as TEMP triggers on the main tables.

    The triggers are the writer's business: every writer connection creates them for itself
    (``store.database.open_writer_connection``), so they are not in the file's schema, which
    every query's connection parses whole when it opens the index (SQLite has no lazy schema
    load): the 14 triggers were about 0.5 ms of each open, more than half of it (issue 11,
    speed; measured on the 10k bench index). They are written beside their tables all the
    same; this cuts them out (``str`` methods: no ``re`` on the query path).
    """
    kept: list[str] = []
    triggers: list[str] = []
    rest = DDL
    while (start := rest.find(_TRIGGER)) >= 0:
        end = rest.index(_TRIGGER_END, start) + len(_TRIGGER_END)
        kept.append(rest[:start])
        head, on, tail = rest[start + len(_TRIGGER) : end].partition(" ON ")
        triggers.append(f"CREATE TEMP TRIGGER IF NOT EXISTS {head}{on}main.{tail}")
        rest = rest[end:]
    kept.append(rest)
    return "".join(kept), triggers


def trigger_ddl(name: str) -> str:
    """The TEMP trigger ``name`` of ``split_ddl``, to create it again."""
    head = f"CREATE TEMP TRIGGER IF NOT EXISTS {name} "
    return next(sql for sql in split_ddl()[1] if sql.startswith(head))


BUILD_DEFERRED_INDEXES = (
    "files_inode",
    "links_target",
    "links_ambiguous",
    "links_in_comment",
    "links_path_dependent",
    "notes_content",
    "tags_tag",
    "aliases_key",
    "problems_path",
    "tasks_status",
    "tasks_due",
    "links_unresolved_reversed",
    "properties_key",
)
"""The indexes a build aside creates after its batches, not entry by entry (``IndexWriter.
indexes_deferred``): none is read while the batches of a new file are written (a batch reads
files by path, aliases by note, links by key). links_unresolved stays: a batch's `alias`
refixes look up the broken links by key. links_unresolved_reversed (an ``nx_reverse`` call
into Python for each broken link inserted) and properties_key (a key and a value per row, in
no order) joined them in issue 35 (build35b): the `typo` probes that read the first run
only when a file is registered, before a first build's batches, and only queries read the
second."""

# Tables in dependency order, for a full rebuild.
TABLES = (
    "tasks",
    "links",
    "exact_names",
    "aliases",
    "tags",
    "tag_names",
    "broken_links",
    "broken_anchors",
    "broken_anchor_docs",
    "file_findings",
    "link_findings",
    "renames",
    "problems",
    "bases",
    "notes",
    "files",
    "body_store",
    "body_dict",
    "link_texts",
    "fts_pending",
    "tag_uses",
    "tag_rollup",
    "tagged_notes",
    "tag_note_keys",
    "tagged_dirty",
)
RETIRED_TABLES = ("lonely_notes", "lonely_docs", "unused_attachments", "broken_link_docs")
"""Tables of earlier schema versions, dropped when an index of one is rebuilt in place."""
EXTERNAL_FTS = ("note_fts", "name_fts", "link_fts", "title_grams", "body_fts")
# Every FTS5 table, for integrity-check and optimize. All five are external content: they are
# dropped with the schema and emptied with 'delete-all', never with DELETE.
VIEWS = ("note_fts_text", "link_texts_now", "body_text")
FTS_TABLES = ("note_fts", "name_fts", "link_fts", "body_fts", "title_grams")

# tasks.state: stored as the index into this tuple (the rule is vault.model.task_state).
TASK_STATES = ("open", "done", "cancelled")
TASK_DATES = ("due", "scheduled", "start", "created", "done", "cancelled")
"""The date columns of ``tasks``, in the order of ``vault.model.Task``'s fields."""

# links.kind: stored as the index into this tuple.
LINK_KINDS = ("wikilink", "embed", "markdown", "markdown-embed", "frontmatter")

# SEMANTICS 8.3: the rename history keeps this many rows.
RENAME_HISTORY = 1000

FILE_FIELDS = {"path": "f.path", "title": NOTE_TITLE}
"""What a declared file finding's JSON object can hold (``Finding.file_fields``), for a file
``f`` and its note ``n``: ``file_findings`` keeps the path and the title, and health renders
the object from them as it reads (``store.health_lists.health_json_sql``)."""


def link_text(kind: int, linkpath: str, subpath: str | None, display: str | None) -> str:
    """The usual spelling of a link; ``links.raw`` is stored only when the note differs.

    Must agree with ``LINK_TEXT`` (the same text built by SQLite), which readers use.
    """
    embed = "!" if kind in (1, 3) else ""
    if kind in (2, 3):
        return f"{embed}[{display or ''}]({linkpath.replace(' ', '%20')}{subpath or ''})"
    bar = "" if display is None else "|" + display
    return f"{embed}[[{linkpath}{subpath or ''}{bar}]]"


# links.kind as its name, for a row of `links l`.
LINK_KIND = (
    "CASE l.kind " + " ".join(f"WHEN {i} THEN '{k}'" for i, k in enumerate(LINK_KINDS)) + " END"
)

# vault.resolve.broken_key(l.linkpath) in SQL (linkpath is NFC already): without a trailing .md.
BROKEN_KEY = """CASE WHEN length(l.linkpath) > 3 AND lower(substr(l.linkpath, -3)) = '.md'
                      AND substr(l.linkpath, -4, 1) <> '/'
                 THEN substr(l.linkpath, 1, length(l.linkpath) - 3) ELSE l.linkpath END"""


def content_key(sha256_hex: str) -> int:
    """notes.content_hash: the first 60 bits of the content's sha256 (an 8-byte integer).

    A note that could not be read has no hash (""): -1, which no content gives.
    """
    return int(sha256_hex[:15], 16) if sha256_hex else -1
