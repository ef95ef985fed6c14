"""The argparse side of the command line: every command's options, help text and examples.

Imported only when ``notedex.cli``'s fast path declines an argv (help, an error, a rarely
used command): argparse and its gettext look-ups cost a query several milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys

from notedex.errors import EXIT_USAGE

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from typing import Any


EPILOG = """\
examples:
  notedex lookup "which notes discuss the Cobra CLI framework?"
  notedex health --json
  notedex scan --tag golang
  notedex show "PARA method" --body
  notedex capture "Idea: try the PARA method for the inbox"
  notedex daemon --vault ~/notes

The vault is --vault, else $NOTEDEX_VAULT, else `vault` in the config file, else the nearest
folder above the working directory that holds .obsidian/. Exit codes: 0 ok, 1 findings
(health found broken links; eval had failing cases), 2 usage or input error, 75 a daemon is
already running, 70 internal error.
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, minus its `import shutil` (and bz2, lzma...) for the width.

    argparse builds a formatter inside every ``add_argument``, so the stock one costs every
    query a few milliseconds even when no help is printed.
    """

    def __init__(self, prog: str, **kwargs: Any) -> None:
        if kwargs.get("width") is None:
            try:
                columns = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(2).columns
            except (ValueError, OSError):
                columns = 80
            kwargs["width"] = max(columns - 2, 40)
        super().__init__(prog, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (and nothing on stdout)."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(json_flag: bool = True) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, formatter_class=HelpFormatter)
    group = common.add_argument_group("vault and index")
    group.add_argument("--vault", metavar="PATH", help="the vault folder (default: see below)")
    group.add_argument(
        "--db", metavar="PATH", help="the index file (default: per-vault, in the state dir)"
    )
    if json_flag:
        common.add_argument(
            "--json", action="store_true", help="print exactly one JSON document on stdout"
        )
    common.add_argument(
        "--no-refresh",
        action="store_true",
        help="answer from the index as it is (by default, without a running daemon, "
        "changed files are re-indexed first)",
    )
    common.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    return common


class _Unbuilt:
    """Stands in for a subcommand's parser that this run does not need."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None


def build_parser(only: str | None = None) -> Parser:
    """The full parser, or (``only``) just the top level plus one subcommand.

    Every argparse object costs gettext look-ups; a query builds only the parser it runs.
    """
    parser = Parser(
        prog="notedex",
        description="An always-fresh SQLite index of a Markdown (Obsidian) vault, and instant answers from it.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    from notedex import __version__

    parser.add_argument("--version", action="version", version=f"notedex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    common = _common()

    def add(name: str, help_text: str, examples: str, **kw: Any) -> Any:
        if only is not None and name != only:
            return _Unbuilt()
        return sub.add_parser(
            name,
            parents=[kw.pop("parent", common)],
            help=help_text,
            description=help_text,
            epilog="examples:\n" + examples,
            formatter_class=HelpFormatter,
            **kw,
        )

    p = add(
        "lookup",
        "Find the notes a question or keywords are about: titles and tags first, then aliases, "
        "link texts and one hop along the links.",
        '  notedex lookup cobra\n  notedex lookup "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？" --json\n'
        "  notedex lookup golang --limit 5 --tag go",
    )
    p.add_argument("question", nargs="+", help="a question in English or Chinese, or keywords")
    p.add_argument(
        "--limit", type=positive_int, default=10, help="show at most N candidates (default 10)"
    )
    p.add_argument("--tag", help="only notes with this tag (nested tags count for their parents)")
    p.add_argument("--type", dest="note_type", help="only notes of this frontmatter type")

    p = add(
        "health",
        "Report orphans, unlinked notes, broken links, warnings and errors. Exits 1 when links are broken.",
        "  notedex health\n  notedex health --json | jq .brokenLinkCount",
    )

    p = add(
        "scan",
        "List every note with its id, title, type, status, tags and aliases, and the parse errors.",
        "  notedex scan\n  notedex scan --tag project --json",
    )
    p.add_argument("--tag", help="only notes with this tag")
    p.add_argument("--type", dest="note_type", help="only notes of this frontmatter type")

    add(
        "graph",
        "Print the link graph: notes, attachments and unresolved targets, with edge counts.",
        "  notedex graph --json",
    )

    p = add(
        "show",
        "Show one note's metadata, links and backlinks (and with --body its text).",
        '  notedex show "PARA method"\n  notedex show Projects/cobra.md --body --json',
    )
    p.add_argument("note", help="a vault path (with or without .md) or a title")
    p.add_argument(
        "--body", action="store_true", help="include the note's text (without frontmatter)"
    )

    p = add(
        "capture",
        "Write a new note into the inbox folder (never overwrites an existing file).",
        '  notedex capture "Look into spf13/cobra for the new CLI"\n  echo "text" | notedex capture -',
    )
    p.add_argument("text", help="the note's text; - reads standard input")

    add(
        "status",
        "Show the vault, the index, counts, freshness and whether a daemon is running.",
        "  notedex status\n  notedex status --json",
    )

    p = add(
        "index",
        "Bring the index up to date with the vault now (incremental unless --full).",
        "  notedex index\n  notedex index --full",
    )
    p.add_argument("--full", action="store_true", help="rebuild the index from scratch")

    p = add(
        "daemon",
        "Run in the foreground, watching the vault and keeping the index fresh (for systemd/launchd).",
        "  notedex daemon --vault ~/notes",
        parent=_common(json_flag=False),
    )
    p.add_argument(
        "--poll", action="store_true", help="use the polling observer (network file systems)"
    )

    p = add(
        "service",
        "Install, remove or inspect the background service (systemd user unit or launchd agent).",
        "  notedex service install --dry-run\n  notedex service status",
    )
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("--dry-run", action="store_true", help="print what would be written and run")

    p = add(
        "eval",
        "Run retrieval cases (RecallNest canary format) against lookup and score them.",
        "  notedex eval examples/demo-cases.json --vault examples/demo-vault",
    )
    p.add_argument("cases", help='a JSON file with a list of cases (or {"cases": [...]})')

    p = add(
        "search",
        'Full-text search of note bodies: words, "exact phrases", prefix* and -excluded words; '
        "each hit with its line, column and a snippet. Quote the whole query when it has -words.",
        "  notedex search cobra\n  notedex search '\"shell completion\" -zsh' --json\n"
        "  notedex search 'comple*' --limit 5\n  notedex search 框架",
    )
    p.add_argument("text", nargs="+", help='words (all must occur), "exact phrase", prefix*, -word')
    p.add_argument(
        "--limit", type=positive_int, default=20, help="show at most N notes (default 20)"
    )

    p = add(
        "export",
        "Write every note as RecallNest connector-v1 JSON (text, tags, links, folder, hash) "
        "to stdout or a file.",
        "  notedex export --format connector-v1 > vault.json\n"
        "  notedex export --format connector-v1 --changed-since 2026-04-01T00:00:00Z --out new.json",
    )
    p.add_argument(
        "--format",
        choices=("connector-v1",),
        default="connector-v1",
        help="the output format (default connector-v1)",
    )
    p.add_argument(
        "--changed-since",
        metavar="ISO",
        help="only notes modified after this ISO 8601 date or time (no zone: local time)",
    )
    p.add_argument(
        "--out", metavar="FILE", help="write to FILE (outside the vault) instead of stdout"
    )

    p = add(
        "mcp",
        "Serve the index to AI agents as an MCP server on stdio: read-only tools lookup, search, "
        "show, health and scan (needs the extra: pip install 'notedex[mcp]').",
        "  notedex mcp --vault ~/notes\n  claude mcp add notedex -- notedex mcp --vault ~/notes",
        parent=_common(json_flag=False),
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="the deadline of every tool call (default 30)",
    )
    return parser


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
