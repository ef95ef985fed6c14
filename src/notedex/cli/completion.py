"""`notedex completion bash|zsh|fish`: shell completion scripts, generated from the command table.

Commands, every command's options (the global ones included), the values of options with
choices, and note paths where a command takes a note (``show``, ``quote``, ``graph --around``):
the script asks ``notedex scan --paths --no-refresh`` with the ``--vault``/``--db`` of the line
being completed, so completing never indexes and never waits for a writer.
"""

from __future__ import annotations

from notedex.cli.commands import COMMANDS, COMMON, FLAG, Command, Option

NOTE_COMMANDS = ("show", "quote")
"""Commands whose first word is a note."""
NOTE_OPTIONS = ("--around",)
"""Options whose value is a note."""
FILE_OPTIONS = ("--vault", "--db", "--out", "--check")
"""Options whose value is a file or folder."""
POSITIONAL_FILES = ("eval",)
"""Commands whose positional word is a file."""


def script(shell: str) -> str:
    if shell == "fish":
        return fish_script()
    text = bash_script()
    if shell == "zsh":
        # zsh runs the bash function through its bash compatibility layer.
        return (
            "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"
            + text
        )
    return text


def _options(command: Command) -> list[Option]:
    return [o for o in command.all_options() if not o.positional]


def _positional(command: Command) -> Option | None:
    return next((o for o in command.options if o.positional), None)


def bash_script() -> str:
    names = " ".join(COMMANDS)
    per_command = "\n".join(
        f'        {name}) opts="{" ".join(o.name for o in _options(c))} --help" ;;'
        for name, c in COMMANDS.items()
    )
    choices = "\n".join(
        f'        {name}:{o.name}) COMPREPLY=($(compgen -W "{" ".join(o.choices)}" -- "$cur")); '
        "return ;;"
        for name, c in COMMANDS.items()
        for o in _options(c)
        if o.choices
    )
    positional_choices = "\n".join(
        f'        {name}) COMPREPLY=($(compgen -W "{" ".join(p.choices)}" -- "$cur")); return ;;'
        for name, c in COMMANDS.items()
        if (p := _positional(c)) is not None and p.choices
    )
    valued = " ".join(o.name for o in COMMON if o.kind != FLAG)
    return f"""# notedex completion for bash (`notedex completion bash`)
_notedex_notes() {{
    local IFS=$'\\n'
    COMPREPLY=($(compgen -W "$(notedex scan --paths --no-refresh "${{_notedex_where[@]}}" 2>/dev/null)" -- "$cur"))
    compopt -o filenames 2>/dev/null
}}

_notedex() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="" i word opts=""
    _notedex_where=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        case "$word" in
            --vault|--db) _notedex_where+=("$word" "${{COMP_WORDS[i+1]}}"); ((i++)) ;;
            -*) ;;
            *) [[ -z "$cmd" ]] && cmd="$word" ;;
        esac
    done
    case "$prev" in
        {"|".join(FILE_OPTIONS)}) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        {"|".join(NOTE_OPTIONS)}) _notedex_notes; return ;;
    esac
    case "$cmd:$prev" in
{choices}
    esac
    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "{names} {valued} --json --no-refresh --debug --help --version" -- "$cur"))
        return
    fi
    case "$cmd" in
{per_command}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case "$cmd" in
        {"|".join(NOTE_COMMANDS)}) _notedex_notes ;;
        {"|".join(POSITIONAL_FILES)}) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
{positional_choices}
    esac
}}
complete -F _notedex notedex
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_script() -> str:
    notes = "(notedex scan --paths --no-refresh 2>/dev/null)"
    lines = [
        "# notedex completion for fish (`notedex completion fish`)",
        "complete -c notedex -f",
    ]
    for name, command in COMMANDS.items():
        lines.append(
            f"complete -c notedex -n __fish_use_subcommand -a {name} -d {_fish_quote(command.help[:60])}"
        )
        seen = f"'__fish_seen_subcommand_from {name}'"
        for option in _options(command):
            flag = (
                f"-s {option.name[1:]}"
                if not option.name.startswith("--")
                else f"-l {option.name[2:]}"
            )
            value = ""
            if option.kind != FLAG:
                if option.choices:
                    value = f" -x -a {_fish_quote(' '.join(option.choices))}"
                elif option.name in NOTE_OPTIONS:
                    value = f" -x -a {_fish_quote(notes)}"
                elif option.name in FILE_OPTIONS:
                    value = " -r -F"
                else:
                    value = " -x"
            description = _fish_quote((option.help or "").split(" (")[0][:60])
            lines.append(f"complete -c notedex -n {seen} {flag}{value} -d {description}")
        positional = _positional(command)
        if name in NOTE_COMMANDS:
            lines.append(f"complete -c notedex -n {seen} -a {_fish_quote(notes)}")
        elif name in POSITIONAL_FILES:
            lines.append(f"complete -c notedex -n {seen} -F")
        elif positional is not None and positional.choices:
            lines.append(
                f"complete -c notedex -n {seen} -a {_fish_quote(' '.join(positional.choices))}"
            )
    return "\n".join(lines) + "\n"
