"""The command table: every command's name, help, examples, options and handler, as data.

Both the argparse parser (``notedex.cli.parser``) and the argparse-free fast path
(``notedex.cli.fastpath``) are built from this one table, so an option, its default or its help
is written once. It is on every query's path: no argparse, no ``re``, no ``typing`` at run time
(STYLE 7). Over 400 lines on purpose: the table is one piece of data, read on every run.
"""

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Option kinds: how a value is read. argparse gets a type for each; the fast path reads "text",
# "count" and "flag" itself and leaves any other kind to argparse.
TEXT = "text"
COUNT = "count"  # a whole number >= 1 (`parse_count`)
COUNT0 = "count0"  # a whole number >= 0 (`parse_count` with minimum 0)
SECONDS = "seconds"  # a float; its range is the handler's to check
FLAG = "flag"  # on/off, no value (argparse's store_true)
APPEND = "append"  # a text value, repeatable: a list of them (argparse's append)


class Option:
    """One argument of a command: a positional (a name without "-"), a value option or a flag.

    ``help`` may use argparse's ``%(default)...`` so a default is written only in ``default``.
    """

    __slots__ = ("choices", "default", "dest", "group", "help", "kind", "metavar", "name", "nargs")

    def __init__(
        self,
        name: str,
        help: str | None = None,
        *,
        kind: str = TEXT,
        dest: str | None = None,
        default: "Any" = None,
        choices: tuple[str, ...] | None = None,
        metavar: str | None = None,
        nargs: str | None = None,
        group: str | None = None,
    ) -> None:
        self.name = name
        self.help = help
        self.kind = kind
        self.dest = dest or name.lstrip("-").replace("-", "_")
        self.default = False if kind == FLAG else default
        self.choices = choices
        self.metavar = metavar
        self.nargs = nargs
        self.group = group

    @property
    def positional(self) -> bool:
        return not self.name.startswith("-")


class Command:
    """One subcommand: what ``notedex NAME --help`` shows, what it accepts, what runs it."""

    __slots__ = ("_made", "_options", "examples", "fast", "handler", "help", "json", "name")

    def __init__(
        self,
        name: str,
        help: str,
        examples: tuple[str, ...],
        handler: tuple[str, str],
        options: "Callable[[], tuple[Option, ...]]" = tuple,
        *,
        json: bool = True,
        fast: bool = False,
    ) -> None:
        self.name = name
        self.help = help
        self.examples = examples
        self.handler = handler
        """The handler, ``notedex.cli.<module>.<name>`` as ``(module, name)``, imported when the
        command runs (``run``): a query loads its own handlers' module (``cli.lookup`` and
        ``cli.questions`` for the hot path's three), not every command's (STYLE 7)."""
        self._made: tuple[Option, ...] | None = None
        self._options = options
        self.json = json
        """Whether the command takes ``--json`` (daemon and mcp talk on stdout otherwise)."""
        self.fast = fast
        """Parsed by the fast path in its ordinary forms (the query commands people repeat)."""

    @property
    def options(self) -> tuple[Option, ...]:
        """The command's own arguments, made when first asked for: a query makes its own, not
        the 48 of every other command (about 0.2M instructions of every run, issue 30's speed
        budget)."""
        if self._made is None:
            self._made = self._options()
        return self._made

    @property
    def common(self) -> tuple[Option, ...]:
        """The global options every command takes (ARCHITECTURE "CLI contract")."""
        return COMMON if self.json else COMMON_WITHOUT_JSON

    def all_options(self) -> tuple[Option, ...]:
        return self.common + self.options

    def run(self, args: "Any") -> int:
        """Run the handler on the parsed command line: its module read by ``cli.preload``."""
        from notedex.cli import preload

        module, name = self.handler
        preload((f"notedex.cli.{module}",))
        handlers = __import__(f"notedex.cli.{module}", fromlist=[name])
        code: int = getattr(handlers, name)(args)
        return code


def parse_count(text: str, minimum: int = 1) -> int | str:
    """A whole number >= ``minimum``, or the reason ``text`` is not one (argparse prints it)."""
    try:
        value = int(text)
    except ValueError:
        return f"not a whole number: {text!r}"
    return value if value >= minimum else f"must be at least {minimum}"


VAULT_AND_INDEX = "vault and index"
JSON = Option("--json", "print exactly one JSON document on stdout", kind=FLAG)
COMMON_WITHOUT_JSON = (
    Option(
        "--vault",
        "the vault folder (default: $NOTEDEX_VAULT, else `vault` in the config file, else the "
        "nearest folder at or above the working directory holding .obsidian/)",
        metavar="PATH",
        group=VAULT_AND_INDEX,
    ),
    Option(
        "--db",
        "the index file (default: $NOTEDEX_DB, else one per vault in the state folder)",
        metavar="PATH",
        group=VAULT_AND_INDEX,
    ),
    Option(
        "--no-refresh",
        "answer from the index as it is (by default, without a running daemon, "
        "changed files are re-indexed first)",
        kind=FLAG,
    ),
    Option("--debug", "show tracebacks for internal errors", kind=FLAG),
    Option(
        "--color",
        "bold and terminal hyperlinks in text output: auto (on a terminal, unless $NO_COLOR is "
        "set), always or never (default %(default)s)",
        choices=("auto", "always", "never"),
        default="auto",
        metavar="WHEN",
    ),
)
# --json comes right after the group, before --no-refresh: the order `--help` has always shown.
COMMON = (*COMMON_WITHOUT_JSON[:2], JSON, *COMMON_WITHOUT_JSON[2:])

PROG = "notedex"
DESCRIPTION = (
    "An always-fresh SQLite index of a Markdown (Obsidian) vault, and instant answers from it."
)
EPILOG = """\
examples:
  notedex lookup "which notes discuss the Cobra CLI framework?"
  notedex health --json
  notedex scan --tag golang
  notedex show "PARA method" --body
  notedex capture "Idea: try the PARA method for the inbox"
  notedex daemon --vault ~/notes

The vault is --vault, else $NOTEDEX_VAULT, else `vault` in the config file, else the nearest
folder above the working directory that holds .obsidian/. Global options (--vault, --db,
--json, --no-refresh, --debug, --color) go before or after the command. Exit codes: 0 ok, 1 findings
(health found broken links or anchors; eval had failing cases), 2 usage or input error, 69
service manager unreachable, 75 a daemon is already running, 70 internal error.
"""


NOTE_TYPE = Option(
    "--type", "only notes of this frontmatter type (any case)", dest="note_type", metavar="TYPE"
)
# The note filter (query/filters.py, SEMANTICS 14): every listing takes it, AND-ed.
TAGS = Option(
    "--tag",
    "only notes with this tag (nested tags count for their parents; repeat: all of them)",
    kind=APPEND,
)
FILTER = (
    TAGS,
    NOTE_TYPE,
    Option(
        "--folder",
        "only notes in this vault folder or below (repeat: any of them)",
        kind=APPEND,
        metavar="PATH",
    ),
    Option(
        "--where",
        "only notes whose properties meet EXPR (repeat: all of them): status=draft, "
        "status!=done, priority>=2, due<2026-12-31, tags~=project (list contains), reviewed "
        "(checkbox true or set), !reviewed (missing or false)",
        kind=APPEND,
        metavar="EXPR",
    ),
    Option(
        "--modified-since",
        "only notes modified on or after DATE (2026-12-31, 2026-12-31T18:00, local time) or in "
        "the last N days (7d)",
        metavar="DATE|Nd",
    ),
    Option("--modified-before", "only notes modified before DATE or N days ago", metavar="DATE|Nd"),
    Option(
        "--created-since",
        "only notes created on or after DATE or in the last N days (the file's change time)",
        metavar="DATE|Nd",
    ),
    Option("--created-before", "only notes created before DATE or N days ago", metavar="DATE|Nd"),
)
SORT = (
    Option(
        "--sort",
        "order by modified, created, title, path or a property's value (its notes first)",
        metavar="FIELD",
    ),
    Option("--reverse", "the other way round (newest or largest first)", kind=FLAG),
)
PATHS = Option("--paths", "print only the notes' vault paths, one a line (for xargs)", kind=FLAG)
NUL = Option(
    "-0", "like --paths, each path ended by a NUL byte (for xargs -0)", kind=FLAG, dest="nul"
)
OUTPUT_PATHS = (PATHS, NUL)
OFFSET = Option(
    "--offset",
    "skip the first N items of each list (default 0)",
    kind=COUNT0,
    default=0,
    metavar="N",
)
PAGE = (
    Option("--limit", "show at most N items of each list (default: all)", kind=COUNT, metavar="N"),
    OFFSET,
)

TABLE = (
    Command(
        "lookup",
        "Find the notes a question or keywords are about: titles and tags first, then aliases, "
        "link texts and one hop along the links.",
        (
            "notedex lookup cobra",
            'notedex lookup "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？" --json',
            "notedex lookup cobra --limit 5 --tag golang",
            "notedex lookup cobra --folder Projects --where status!=done",
        ),
        ("lookup", "cmd_lookup"),
        lambda: (
            Option("question", "a question in English or Chinese, or keywords", nargs="+"),
            Option(
                "--limit",
                "show at most N candidates (default %(default)d)",
                kind=COUNT,
                default=10,
            ),
            OFFSET,
            *FILTER,
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "health",
        "Report broken links and anchors (with suggested fixes), orphans, unlinked notes, dead "
        "ends, unused attachments, warnings and errors. Exits 1 when links or anchors are broken.",
        (
            "notedex health",
            "notedex health --json | jq .brokenLinkCount",
            "notedex health -0 | xargs -0 -I{} echo 'fix: {}'",
            "notedex health --ignore in-comment --ignore 'Templates/'",
            "notedex health --only broken-link --json",
            "notedex health --folder Projects --where status=active",
        ),
        ("questions", "cmd_health"),
        lambda: (
            *FILTER,
            Option(
                "--only",
                "report only findings of this code (repeatable; `in-comment`: only those "
                "inside comments); the codes are listed in docs/cli.md",
                kind=APPEND,
                metavar="CODE",
            ),
            Option(
                "--ignore",
                "leave out findings of this code, or on paths matching this glob (repeatable; "
                "a folder is written Templates/); adds to `ignore` in the config file",
                kind=APPEND,
                metavar="CODE|GLOB",
            ),
            *PAGE,
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "scan",
        "List every note with its id, title, type, status, tags and aliases, and the parse errors.",
        (
            "notedex scan",
            "notedex scan --tag obsidian --json",
            "notedex scan --type method --limit 2 --offset 1",
            "notedex scan --tag obsidian -0 | xargs -0 wc -w",
            "notedex scan --where status=active --folder Projects --sort modified --reverse",
            "notedex scan --where '!status' --modified-since 3650d",
        ),
        ("listings", "cmd_scan"),
        lambda: (*FILTER, *SORT, *PAGE, *OUTPUT_PATHS),
        fast=True,
    ),
    Command(
        "tasks",
        "List the Markdown tasks of every note (- [ ], - [x] and custom statuses like - [/]) "
        "with path, line, status, text, tags and the dates the Tasks plugin or Dataview "
        "write; by due date, then path and line.",
        (
            "notedex tasks --open",
            "notedex tasks --open --due-before 2027-12-31 --json",
            "notedex tasks --status / --status '?' --tag cli",
            "notedex tasks --done --paths",
            "notedex tasks --due-after 2026-01-01 --json",
        ),
        ("listings", "cmd_tasks"),
        lambda: (
            Option("--open", "only open tasks: any status but x, X and - (cancelled)", kind=FLAG),
            Option("--done", "only done tasks: [x] or [X]", kind=FLAG),
            Option(
                "--status",
                "only tasks with this status character, e.g. - or / (repeatable; with "
                "--open or --done, a task that matches any of them)",
                kind=APPEND,
                metavar="C",
            ),
            Option(
                "--due-before",
                "only tasks due before DATE: YYYY-MM-DD, today, Nd (N days from today) or -Nd "
                "(N days ago: write --due-before=-Nd)",
                metavar="DATE",
            ),
            Option("--due-after", "only tasks due after DATE (as --due-before)", metavar="DATE"),
            *FILTER,
            *PAGE,
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "recent",
        "List notes by modification time, newest first, with the time each was modified.",
        (
            "notedex recent",
            "notedex recent --limit 5 --folder Projects --json",
            "notedex recent --modified-since 7d --where status!=done",
        ),
        ("listings", "cmd_recent"),
        lambda: (
            Option("--limit", "show at most N notes (default %(default)d)", kind=COUNT, default=20),
            *FILTER,
            *SORT,
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "properties",
        "List every property with its type (Obsidian's: text, list, number, checkbox, date, "
        "datetime) and note count, or one property's values with their note counts.",
        (
            "notedex properties",
            "notedex properties status --json",
            "notedex properties tags --folder Projects",
        ),
        ("listings", "cmd_properties"),
        lambda: (Option("name", "one property: list its values", nargs="?"), *FILTER),
    ),
    Command(
        "tags",
        "List every tag with its note count; nested tags count for their parents, as in "
        "Obsidian's tag pane.",
        (
            "notedex tags",
            "notedex tags --json | jq '.tags[:5]'",
            "notedex tags --folder Projects",
        ),
        ("listings", "cmd_tags"),
        lambda: (*FILTER, *PAGE),
        fast=True,
    ),
    Command(
        "mentions",
        "List the unlinked mentions of a note: other notes that name its title or an alias "
        "outside links, code, math and HTML, with line and column.",
        ("notedex mentions 内部リンク", "notedex mentions Reading/内部リンク.md --json"),
        ("listings", "cmd_mentions"),
        lambda: (
            Option("note", "the note, named as for show: a path, a title, an alias or an id"),
            *PAGE,
        ),
        fast=True,
    ),
    Command(
        "graph",
        "Print the link graph: notes, attachments and unresolved targets, with edge counts.",
        (
            "notedex graph --json",
            'notedex graph --around "PARA method" --depth 2',
            "notedex graph --format dot | dot -Tsvg > vault.svg",
            "notedex graph --folder Projects --json",
        ),
        ("listings", "cmd_graph"),
        lambda: (
            *FILTER,
            Option(
                "--around",
                "only the notes within --depth links of this note (named as for show)",
                metavar="NOTE",
            ),
            Option(
                "--depth",
                "with --around: how many links away, either way (default %(default)d)",
                kind=COUNT,
                default=1,
                metavar="N",
            ),
            Option(
                "--format",
                "text or Graphviz dot (default %(default)s)",
                choices=("text", "dot"),
                default="text",
                dest="graph_format",
            ),
            *PAGE,
        ),
        fast=True,
    ),
    Command(
        "show",
        "Show one note's metadata, links and backlinks (and with --body its text, with "
        "--lines A-B those lines of it, numbered as in the file).",
        (
            'notedex show "PARA method"',
            'notedex show "Projects/Cobra CLI 框架.md" --body --json',
            'notedex show "Projects/Cobra CLI 框架.md" --lines 8-11 --json',
        ),
        ("listings", "cmd_show"),
        lambda: (
            Option(
                "note",
                "the note: a path from here or absolute, a vault path (with or without .md), "
                "a title, an alias or an id",
            ),
            Option("--body", "include the note's text (without frontmatter)", kind=FLAG),
            Option(
                "--max-bytes",
                "cut --body after N bytes of UTF-8, marked truncated (default %(default)d)",
                kind=COUNT,
                default=100_000,
                metavar="N",
            ),
            Option(
                "--lines",
                "only these lines of the body: A-B, A or A- (numbered as in the file, "
                "frontmatter included)",
                metavar="A-B",
            ),
        ),
        fast=True,
    ),
    Command(
        "quote",
        "Check that a quoted passage is really in a note: where it is (line, column, first and "
        "last line), or the closest passage and its similarity. Exits 1 when it is not found.",
        (
            'notedex quote "Projects/Cobra CLI 框架.md" "spf13/cobra" --json',
            """echo '[{"path": "Projects/Cobra CLI 框架.md", "text": "spf13/cobra"}]' """
            "| notedex quote --check - --json",
        ),
        ("listings", "cmd_quote"),
        lambda: (
            Option("note", "a vault path (with or without .md) or a title", nargs="?"),
            Option(
                "text",
                "the passage as quoted (whitespace, emphasis, link syntax and curly quotes "
                "do not matter)",
                nargs="?",
            ),
            Option(
                "--check",
                'check every {"path", "text"} item of a JSON file (- reads stdin) instead',
                metavar="FILE",
            ),
        ),
    ),
    Command(
        "capture",
        "Write a new note into the inbox folder: `inbox` in the config file, default 00_Inbox "
        "(never overwrites an existing file).",
        (
            'notedex capture "Look into spf13/cobra for the new CLI"',
            'echo "text" | notedex capture -',
        ),
        ("writes", "cmd_capture"),
        lambda: (Option("text", "the note's text; - reads standard input"),),
    ),
    Command(
        "fix",
        "Apply health's suggestions for broken links and anchors: by default show them as a "
        "unified diff and write nothing (exit 1 when there is something to fix); --apply writes "
        "them. Only the target or anchor of a link changes (docs/cli.md, `fix`).",
        (
            "notedex fix",
            "notedex fix --only broken-anchor --path 'Projects/*'",
            "notedex fix --apply --min-confidence 0.9",
        ),
        ("writes", "cmd_fix"),
        lambda: (
            Option("--apply", "write the edits into the vault (default: show the diff)", kind=FLAG),
            Option(
                "--only",
                "only the findings with this code",
                choices=("broken-link", "broken-anchor"),
                metavar="CODE",
            ),
            Option("--path", "only in notes whose vault path matches this glob", metavar="GLOB"),
            Option(
                "--min-confidence",
                "only suggestions at least this sure, 0.6 to 1 (default 0.6: what health offers)",
                kind=SECONDS,
                metavar="C",
            ),
        ),
    ),
    Command(
        "mv",
        "Move or rename a note, an attachment or a folder (vault paths) and rewrite every link "
        "to what moved, each in its own style, so each lands where it did; then check that no "
        "link or anchor broke (docs/cli.md, `mv`).",
        (
            'notedex mv "Projects/Cobra shell completion.md" Archive/ --dry-run',
            "notedex mv Projects Archive/Projects --dry-run",
        ),
        ("writes", "cmd_mv"),
        lambda: (
            Option("src", "the file or folder to move, as a vault path"),
            Option("dst", "its new vault path, or an existing folder to move it into"),
            Option("--dry-run", "print the moves and the diff; write nothing", kind=FLAG),
        ),
    ),
    Command(
        "status",
        "Show the vault, the index, counts, freshness and whether a daemon is running.",
        ("notedex status", "notedex status --json"),
        ("listings", "cmd_status"),
        fast=True,
    ),
    Command(
        "index",
        "Bring the index up to date with the vault now (incremental unless --full).",
        ("notedex index", "notedex index --full"),
        ("upkeep", "cmd_index"),
        lambda: (Option("--full", "rebuild the index from scratch", kind=FLAG),),
    ),
    Command(
        "daemon",
        "Run in the foreground, watching the vault and keeping the index fresh (for systemd/launchd).",
        ("notedex daemon --vault ~/notes",),
        ("upkeep", "cmd_daemon"),
        lambda: (Option("--poll", "use the polling observer (network file systems)", kind=FLAG),),
        json=False,
    ),
    Command(
        "service",
        "Install, remove or inspect the background service (systemd user unit or launchd agent).",
        ("notedex service install --dry-run", "notedex service status"),
        ("upkeep", "cmd_service"),
        lambda: (
            Option("action", choices=("install", "uninstall", "status")),
            Option("--dry-run", "print what would be written and run", kind=FLAG),
        ),
    ),
    Command(
        "eval",
        "Run retrieval cases (RecallNest canary format) against lookup and score them.",
        ("notedex eval examples/demo-cases.json --vault examples/demo-vault",),
        ("integrations", "cmd_eval"),
        lambda: (Option("cases", 'a JSON file with a list of cases (or {"cases": [...]})'),),
    ),
    Command(
        "search",
        'Full-text search of note bodies: words, "exact phrases", prefix* and -excluded words; '
        "each hit with its line, column and a snippet. Quote the whole query when it has -words.",
        (
            "notedex search cobra",
            "notedex search '\"shell completion\" -zsh' --json",
            "notedex search 'comple*' --limit 5",
            "notedex search 框架",
            "notedex search cobra --folder Projects --where status!=done",
            "notedex search cobra --paths --sort path | head -3",
        ),
        ("questions", "cmd_search"),
        lambda: (
            Option("text", 'words (all must occur), "exact phrase", prefix*, -word', nargs="+"),
            Option("--limit", "show at most N notes (default %(default)d)", kind=COUNT, default=20),
            OFFSET,
            *FILTER,
            Option(
                "--sort",
                "with --paths: path lists the matching notes in path order (default: best first)",
                choices=("path",),
            ),
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "export",
        "Write every note as RecallNest connector-v1 JSON (text, tags, links, folder, hash) "
        "to stdout or a file.",
        (
            "notedex export --format connector-v1 > vault.json",
            "notedex export --format connector-v1 --changed-since 2026-04-01T00:00:00Z --out new.json",
            "notedex export --folder Projects --where status=published > projects.json",
        ),
        ("integrations", "cmd_export"),
        lambda: (
            *FILTER,
            Option(
                "--format",
                "the output format (default %(default)s)",
                choices=("connector-v1",),
                default="connector-v1",
            ),
            Option(
                "--changed-since",
                "only notes modified after this ISO 8601 date or time (no zone: local time)",
                metavar="ISO",
            ),
            Option("--out", "write to FILE (outside the vault) instead of stdout", metavar="FILE"),
        ),
    ),
    Command(
        "base",
        "Evaluate an Obsidian Bases file (or a note's ```base block) without the app: filters, "
        "formulas, sort, limit, groupBy and summaries; exit 2 names anything not implemented.",
        (
            "notedex base books.base --vault examples/bases/vault",
            'notedex base books.base --view "By rating" --json --vault examples/bases/vault',
            "notedex base --list --vault examples/bases/vault",
            "notedex base books.base --check --vault examples/bases/vault",
        ),
        ("listings", "cmd_base"),
        lambda: (
            Option("file", "a .base file or a note with a ```base block", nargs="?"),
            Option("--view", "the view to run, by name (default: the first)", metavar="NAME"),
            Option("--list", "list the vault's .base files and their views", kind=FLAG),
            Option(
                "--check",
                "report per view what it evaluates and what it refuses, without running it "
                "(exit 1 when something is refused)",
                kind=FLAG,
            ),
            *OUTPUT_PATHS,
        ),
        fast=True,
    ),
    Command(
        "completion",
        "Print a shell completion script: commands, options and note paths.",
        (
            'eval "$(notedex completion bash)"   # in ~/.bashrc',
            'eval "$(notedex completion zsh)"    # in ~/.zshrc',
            "notedex completion fish > ~/.config/fish/completions/notedex.fish",
        ),
        ("integrations", "cmd_completion"),
        lambda: (Option("shell", "the shell to complete for", choices=("bash", "zsh", "fish")),),
        json=False,
    ),
    Command(
        "mcp",
        "Serve the index to AI agents as an MCP server on stdio: read-only tools lookup, search, "
        "show, quote, health, tags, mentions, scan, tasks, status, graph, base and properties, "
        "and the notes as resources "
        "(needs the extra: pip install 'notedex[mcp]').",
        (
            "notedex mcp --vault ~/notes",
            "claude mcp add notedex -- notedex mcp --vault ~/notes",
            "notedex mcp --vault ~/notes --allow-capture",
        ),
        ("integrations", "cmd_mcp"),
        lambda: (
            Option(
                "--timeout",
                "the deadline of every tool call (default %(default)g)",
                kind=SECONDS,
                default=30.0,
                metavar="SECONDS",
            ),
            Option(
                "--allow-capture",
                "also offer the capture tool: it creates new notes in the inbox, nothing else",
                kind=FLAG,
            ),
        ),
        json=False,
    ),
)

COMMANDS: dict[str, Command] = {command.name: command for command in TABLE}
