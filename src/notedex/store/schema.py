"""The index schema: a versioned cache of the vault (STYLE 3). Bump SCHEMA_VERSION on any change."""

from __future__ import annotations

SCHEMA_VERSION = 8  # 7: path_key is fold(path); 8: notes_excluded partial index

# porter stems Latin words; unicode61 folds case and diacritics. CJK arrives pre-segmented
# (vault.text.segment) so every bigram is a token.
TOKENIZER = "porter unicode61 remove_diacritics 2"

DDL = f"""
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

-- Every vault file, notes and attachments alike: link targets and the reconcile etags.
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- vault-relative, '/', NFC
    path_key TEXT NOT NULL,             -- fold(path), for path-prefix queries
    disk_rel TEXT,                      -- on-disk relative name when it differs from path (NFD)
    is_note INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    indexed_ns INTEGER NOT NULL         -- when we last read it: racy-clean detection
);
CREATE INDEX IF NOT EXISTS files_path_key ON files(path_key);

CREATE TABLE IF NOT EXISTS notes (
    file_id INTEGER PRIMARY KEY REFERENCES files(id),
    stem TEXT NOT NULL,
    title TEXT NOT NULL,
    frontmatter_title TEXT,
    first_h1 TEXT,
    note_id TEXT,
    type TEXT,
    status TEXT,
    excluded INTEGER NOT NULL DEFAULT 0,  -- Obsidian "Excluded files": link targets, not reported
    content_hash TEXT NOT NULL,
    properties TEXT                       -- JSON, for show/export
);
CREATE INDEX IF NOT EXISTS notes_note_id ON notes(note_id);
CREATE INDEX IF NOT EXISTS notes_excluded ON notes(file_id) WHERE excluded = 1;

CREATE TABLE IF NOT EXISTS tags (
    file_id INTEGER NOT NULL,
    tag TEXT NOT NULL,                  -- first-seen spelling
    tag_key TEXT NOT NULL,              -- lower-cased, for filtering (nested: tag_key LIKE 'a/%')
    source TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (file_id, tag_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tags_key ON tags(tag_key);

CREATE TABLE IF NOT EXISTS aliases (
    file_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    alias TEXT NOT NULL,
    PRIMARY KEY (file_id, position)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS links (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    raw TEXT NOT NULL,
    linkpath TEXT NOT NULL,
    subpath TEXT,
    display TEXT,
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,
    name_key TEXT NOT NULL,             -- resolve.name_key(linkpath): which creations can change it
    target_id INTEGER,                  -- files.id, NULL when unresolved or a self-link
    ambiguous INTEGER NOT NULL DEFAULT 0
);
-- Covering for the health queries: "has a backlink from another note" and "has an outgoing
-- reference" are answered from these indexes alone, one probe per note.
CREATE INDEX IF NOT EXISTS links_source ON links(source_id, linkpath, target_id);
CREATE INDEX IF NOT EXISTS links_target ON links(target_id, source_id) WHERE target_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS links_name_key ON links(name_key);
CREATE INDEX IF NOT EXISTS links_unresolved ON links(source_id)
    WHERE target_id IS NULL AND linkpath <> '';
CREATE INDEX IF NOT EXISTS links_ambiguous ON links(source_id) WHERE ambiguous = 1;

-- Errors and warnings, per vault path (a note, or a walk problem on any path).
CREATE TABLE IF NOT EXISTS problems (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    severity TEXT NOT NULL CHECK (severity IN ('error', 'warning')),
    kind TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS problems_path ON problems(path);

-- Structure search: what lookup matches. rowid = files.id of the note.
--   title: stem, frontmatter title, first H1; tags; aliases;
--   anchors: the texts other notes use to link here; unresolved: this note's broken link keys.
CREATE VIRTUAL TABLE IF NOT EXISTS note_fts USING fts5(
    title, tags, aliases, anchors, unresolved,
    tokenize = '{TOKENIZER}'
);

-- Notes whose structure-search rows a large apply still has to recompute (crash-safe).
CREATE TABLE IF NOT EXISTS fts_pending (
    id INTEGER PRIMARY KEY
);

-- Loose title matching for lookup's stage 2: any substring of 3+ characters, indexed.
-- External content: the text stays in notes; only the trigram index is stored.
CREATE VIRTUAL TABLE IF NOT EXISTS title_grams USING fts5(
    stem, title,
    content = 'notes', content_rowid = 'file_id',
    tokenize = 'trigram'
);

-- Full-text search over bodies. rowid = files.id of the note.
CREATE VIRTUAL TABLE IF NOT EXISTS body_fts USING fts5(
    body,
    tokenize = '{TOKENIZER}'
);
"""

# Tables in dependency order, for a full rebuild.
TABLES = (
    "links", "aliases", "tags", "problems", "notes", "files", "note_fts", "body_fts", "fts_pending",
)
# Every FTS5 table, for integrity-check and optimize. title_grams is external content (notes):
# it is dropped with the schema and emptied with 'delete-all', never with DELETE.
FTS_TABLES = ("note_fts", "body_fts", "title_grams")
