"""The schema's version and the title expression: what every query reads of the schema, apart
from the DDL (``store.schema``, whose import is about 1.2M instructions, 3% of interpreter
start-up: issue 30's speed budget). Their one owner; ``store.schema`` re-exports both.
"""

SCHEMA_VERSION = 31  # 9: compact rows (issue 6), stored findings; 10: note_fts external content;
# 11: anchors and unresolved keys in link_fts, so they no longer lengthen note_fts rows for BM25
# 12: notes.outline and broken_anchors (issue 12)
# 13: body_fts is external content over body_store, the segmented bodies zlib-compressed (issue 15)
# 14: files_inode, so an edit through one name of a file re-checks its other names (issue 13.9)
# 15: renames (a bounded rename history), unused_attachments, dead ends in lonely_notes
# 16: health's lists as JSON (broken_anchor_docs, broken_link_docs, lonely_docs) and the tag
#     counts (tag_uses, tag_rollup, tagged_notes, tag_note_keys), kept by triggers and
#     store/tagcounts.py
# 17: exact_names, the folded names lookup's tier 1 looks up by index, and the triggers made
#     TEMP triggers of every writer connection (issue 11, speed)
# 18: link_texts, link_fts's content stored as indexed, so a re-resolution rewrites only the
#     rows whose text changes and never derives an old text again; links_path_dependent, the
#     links a path decides by target (issue 17, speed)
# 19: name_fts, the names alone (titles and aliases) that lookup's tier 2 ranks by (issue 11)
# 20: links_unresolved_reversed and problems_unreadable: an apply probes, never scans (issue 35)
# 21: files.ctime_ns, so an edit that keeps the size and puts the mtime back is still seen
#     (issue 31.7)
# 22: bases, each .base file's YAML as JSON, read at index time so that `notedex base` needs
#     no YAML parser (issue 32)
# 23: tasks, every Markdown task of a note with its status, text, tags and dates (issue 32)
# 24: links.in_comment (a link inside a %%comment%% or an HTML comment), and the problems'
#     kinds are health's codes (empty-tag, bad-yaml, ...), link_findings (self-links; issue 33)
# 25: properties, one row per property value with its type, for --where and `properties`
#     (issue 32)
# 26: exact_names also holds each name's keys less stop words and hub words (MOC...), and with
#     a word and its particle joined: tier 1 reads names as it reads questions (issue 30)
# 27: file_findings (orphans, unlinked notes, dead ends, unused attachments with their JSON,
#     kept by the generic upkeep of declared findings) replaces lonely_notes, lonely_docs and
#     unused_attachments; broken_anchors.confidence (issue 33)
# 28: body_dict, the preset zlib dictionary of body_store's streams: the bodies take about half
#     the bytes; file_findings keeps a note's title, not its JSON object, which health renders
#     as it reads (issue 35, size)
# 29: links_in_comment covers health's in-comment count (name_key, in_comment) (issue 33)
# 30: files_name_key, so a one-shot writer probes the files of a few names (issue 33)
# 31: tag_note_keys keeps a note's counted tag ids only, not their rolled-up keys, which
#     tagcounts derives through tag_names; broken_link_docs gone: broken_links keeps the
#     suggestion's confidence and the comment flag, and health renders its objects from them;
#     broken_anchor_docs without source_id and its index by link, file_findings without
#     file_id and its index by file, exact_names without its index by note (issue 35, size)

# SEMANTICS 3: the title is the frontmatter title (a non-empty string) or else the stem.
NOTE_TITLE = "coalesce(n.frontmatter_title, n.stem)"
