"""Generate the community example vault: a few thousand notes shaped like a public Obsidian
community vault (plugins, themes, people, guides, sync, forum threads, MOCs; CJK too).

    python examples/community/generate.py OUT_DIR [--seed N] [--force]

The notes that ``examples/community-cases.json`` asks about are written by hand in
``examples/community/seed/`` and copied as they are; around them the generator writes the bulk
of a real community vault: plugin notes named by their ids (H1 and alias: the plugin's name),
people named by handles (the person's name in an alias, and in the H1 for most), themes, CSS
snippets, forum threads by year, showcases, release notes, Chinese, Japanese and Korean notes,
and the MOCs (hub pages) that link them all. Its vocabulary leaves out the words the seed notes
and the cases are about (kanban, board, resolver, template, sync, generator...), so every
question of the cases meets the vault's distractors that were written on purpose, and the bulk
adds volume, common words and hubs.

Deterministic: one ``random.Random(seed)``, no clock, no iteration over sets; the same seed gives
a byte-identical vault. Stdlib only; the rules on the output folder (refuse a non-empty one,
``--force`` replaces only a generated one) and on YAML scalars are ``bench/genvault.py``'s,
imported. ``generate()`` returns a manifest: every note with its
intended links (link path -> the vault path it must resolve to, or None for the few planted
broken links), which the tests check with notedex's own resolver. This file is longer than the
house limit of about 400 lines because most of it is vocabulary.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import random
import sys
import unicodedata
from pathlib import Path
from types import ModuleType
from typing import Any

SEED_DIR = Path(__file__).resolve().parent / "seed"
DEFAULT_SEED = 30


def _genvault() -> ModuleType:
    """bench/genvault.py, for its rules on the output folder and on YAML scalars (one place)."""
    module = sys.modules.get("genvault")
    if module is None:
        path = Path(__file__).resolve().parents[2] / "bench" / "genvault.py"
        spec = importlib.util.spec_from_file_location("genvault", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["genvault"] = module  # its dataclasses look their module up here
        spec.loader.exec_module(module)
    return module


_GENVAULT = _genvault()
GenerateError = _GENVAULT.GenVaultError
MARKER = _GENVAULT.MARKER_NAME
"""genvault's marker: a dot-prefixed file that lets ``--force`` know what it may delete."""

# --- vocabulary ---------------------------------------------------------------------------------


def _items(text: str) -> list[str]:
    """``a|b c|d`` -> ``["a", "b c", "d"]``, whitespace (line breaks too) folded to one space."""
    return [" ".join(item.split()) for item in text.split("|")]


PLUGIN_ADJ = """Smart Quick Better Simple Advanced Auto Easy Super Mini Power Clean Hidden Floating
Sticky Rich Custom Dynamic Global Local Pretty Tidy Lazy Instant Random Linked Nested Colored
Compact Extended Handy""".split()

# noun -> category (tags plugin/<category>)
PLUGIN_NOUNS = {
    "Links": "links",
    "Tables": "editing",
    "Tabs": "appearance",
    "Folders": "files",
    "Headings": "editing",
    "Footnotes": "writing",
    "Highlights": "editing",
    "Bookmarks": "links",
    "Snippets": "appearance",
    "Outlines": "writing",
    "Timelines": "diagrams",
    "Charts": "diagrams",
    "Checklists": "tasks",
    "Reminders": "tasks",
    "Quotes": "writing",
    "Colors": "appearance",
    "Fonts": "appearance",
    "Icons": "appearance",
    "Banners": "appearance",
    "Status Bar": "appearance",
    "Word Count": "writing",
    "Reading Time": "writing",
    "Commands": "automation",
    "Sidebar": "appearance",
    "Ribbon": "appearance",
    "Breadcrumbs": "links",
    "Sorting": "files",
    "Clipboard": "editing",
    "Paste": "editing",
    "Images": "media",
    "Audio": "media",
    "Math": "study",
    "Mermaid": "diagrams",
    "Slides": "publishing",
    "Maps": "media",
    "Habits": "tasks",
    "Journal": "writing",
    "Pomodoro": "tasks",
    "Focus": "writing",
    "Typewriter": "writing",
    "Spellcheck": "writing",
    "Translate": "writing",
    "Emoji": "editing",
    "Metadata": "data",
    "Backups": "files",
    "Export": "publishing",
    "Import": "files",
    "HTML": "publishing",
    "Callouts": "editing",
    "Lists": "editing",
    "Columns": "appearance",
    "Cursor": "editing",
    "Scroll": "appearance",
    "Tooltips": "appearance",
    "Hover": "links",
    "Previews": "links",
    "Workspaces": "files",
    "Stacks": "appearance",
    "Zoom": "appearance",
    "Counters": "data",
    "Badges": "appearance",
    "Dates": "calendar",
    "Contacts": "data",
    "Bibliography": "research",
    "Printing": "publishing",
    "Comments": "writing",
    "Annotations": "research",
    "Blocks": "editing",
    "Search": "search",
    "Query": "data",
    "Charts View": "data",
}

CATEGORY_NAMES = {
    "appearance": "Appearance",
    "automation": "Automation",
    "calendar": "Calendar and dates",
    "data": "Data and queries",
    "diagrams": "Diagrams",
    "editing": "Editing",
    "files": "Files",
    "links": "Links",
    "media": "Media",
    "publishing": "Publishing",
    "research": "Research",
    "search": "Search",
    "study": "Study",
    "sync": "Sync",
    "tasks": "Task management",
    "writing": "Writing",
}

FEATURES = _items(
    """a button in the ribbon|a command to the palette|a panel to the right sidebar|an option
to the file menu|a setting per folder|a view of its own|a hover preview|a status bar counter|a
code block processor|a context menu entry|keyboard-only navigation|a mobile toolbar entry"""
)
PLACES = _items(
    """the editor|reading view|the file explorer|the canvas|the outline|the tab bar|the
command palette|every new note|the graph|the properties panel"""
)
PLUGIN_LINES = [
    "Desktop and mobile. Settings live under Community plugins.",
    "Early versions were slow on large folders; this is fixed since 1.2.",
    "Open source, MIT licence. Issues and ideas are welcome on the repository.",
    "The author answers questions in the forum thread.",
    "Disable it before reporting a bug in another plugin.",
    "Supports the app's own CSS variables, so it follows the active theme.",
]

FIRST = """Anna Ben Carla David Elena Felix Grace Hugo Irene Jonas Karin Leo Maya Nils Olga Pablo
Quinn Rosa Sven Tara Umar Vera Wim Xenia Yusuf Zoe Aiko Bruno Chiara Dmitri Eva Farah Goran Hana
Ivan Jun Kofi Lena Mateo Nadia Oskar Priya Rafael Sofia Tomas Ursula Viktor Wen Yara Amir Bea
Cyril Dana Emil Fiona Gianni Helga Ines Joao Kai Lotte Marek Noor Omar Paula Ravi Selma Teo Ulla
Vilja Aleksi Bianca Cosmin Dorota Erik Frida Gustav Hiro Ilse Jakob""".split()
LAST = """Andersen Becker Costa Dubois Eriksen Fischer Gomes Hansen Ivanova Jensen Keller Lindqvist
Moreau Novak Olsen Petrov Quint Romano Silva Tanaka Urban Vogel Weber Xu Yilmaz Zimmer Abbott
Brandt Carvalho Dahl Engel Ferreira Gallo Horvat Ito Jovanovic Kowalczyk Laine Mendes Nielsen
Ortega Pereira Rossi Santos Takahashi Ueda Varga Wagner Young Zelenko Aalto Bauer Conti Duarte
Ekman Falk Greco Holm Iglesias Janssen Kaur Lund Marino Nakagawa Oliveira Pham Reyes Sato Toth
Ulrich Vidal Wolff""".split()

THEME_ADJ = """Amber Velvet Quiet Misty Golden Crimson Ivory Cobalt Sage Coral Slate Lunar Solar
Autumn Winter Spring Ocean Forest Desert Arctic Copper Indigo Cedar Maple Willow Ember Frost Dusk
Dawn Storm""".split()
THEME_NOUNS = """Coast Night Garden Paper Ink Glass Stone Harbor Meadow Valley Ridge Lake Grove
Field Bloom Leaf Pine Sky Tide Wave""".split()
THEME_LINES = [
    "Readable line length, generous margins and a calm accent colour.",
    "Colourful headings, rounded callouts and a compact file explorer.",
    "Made for long writing sessions: a serif font and no visual noise.",
    "High contrast, for small screens and bright rooms.",
]

SNIPPET_ACTIONS = """Hide Center Colour Shrink Widen Pin Fade Round Underline Highlight Indent Align
Float Stack Dim""".split()
SNIPPET_THINGS = _items(
    """the ribbon|the status bar|tab headers|the vault name|scrollbars|file icons|the
inline title|image captions|checkboxes|code blocks|blockquotes|tables|headings|lists|callout
icons|tags|links|footnotes|the sidebar"""
)

FORUM_VERBS = """hide move sort export pin resize collapse colour filter count print share merge
split archive""".split()
FORUM_OBJECTS = _items(
    """attachments|headings|tabs|bookmarks|footnotes|images|tables|code blocks|the
sidebar|the status bar|embedded images|checkboxes|the file explorer|links|tags"""
)
PLATFORMS = "Android iPad iPhone Linux Windows macOS ChromeOS".split()
FORUM_REPLIES = [
    "Reply: this is a known issue, see the plugin's repository.",
    "Reply: restart the app after changing the setting.",
    "Reply: it works for me on the latest version.",
    "Reply: a CSS snippet can do this, see the Snippets folder.",
    "Reply: disable other plugins one by one to find the culprit.",
]
SHOWCASE_KINDS = "research writing teaching study journaling coding reading".split()

ZH_SUFFIXES = ["使用心得", "常见问题", "设置技巧", "学习笔记"]
JA_SUFFIXES = ["の使い方", "の設定"]
KO_SUFFIXES = [" 사용법", " 설정"]
ZH_LINES = [
    "这个插件装好以后，在设置里打开就能用。",
    "手机上也能用，但是有些功能只在电脑上有。",
    "更新以后如果出问题，先关掉其他插件再试。",
]
JA_LINES = ["設定画面から有効にする。", "スマホでも使えるが、一部の機能はパソコンのみ。"]
KO_LINES = [
    "설정에서 켜면 바로 쓸 수 있다.",
    "모바일에서도 쓸 수 있지만 일부 기능은 데스크톱 전용이다.",
]

CHATTER = [
    "I have used it daily for a year and it has never lost a line.",
    "The settings tab explains every option, with an example for each.",
    "On a phone the buttons are small, but everything else is the same.",
    "It slowed down start-up a little with many notes open.",
    "Turning it off and on again fixed the odd behaviour for me.",
    "The documentation is short and clear; the changelog is worth reading.",
    "A good first plugin for anyone new to the app.",
    "It plays well with the core outline and the backlinks pane.",
    "Several people in the forum asked for a keyboard shortcut for this.",
    "The author fixed my report within a week.",
    "Version 2 changed the defaults, so check them after updating.",
    "Works offline; nothing leaves the device.",
]
"""Generic sentences of community notes: volume for the body index, no subject of a case."""

BROKEN_KEYS = ["Obsidian 2.0 wishlist", "Plugin review checklist"]
"""Link keys that no note has: a real vault has a few (threads link to pages never written)."""

# --- model --------------------------------------------------------------------------------------


class Vault:
    """The notes to write: path -> text, and the manifest of every note's intended links."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.files: dict[str, str] = {}
        self.links: dict[str, list[tuple[str, str | None]]] = {}
        self.stems: dict[str, str] = {}
        """Lower-cased stem -> path: every stem is unique, so ``[[stem]]`` names one note."""
        self.plugins: list[tuple[str, str, str]] = []  # (stem, name, category)
        self.people: list[tuple[str, str]] = []  # (handle, name)
        self.themes: list[str] = []
        self.bulk_people: list[tuple[str, str]] = []
        self.bulk_plugins: list[tuple[str, str, str]] = []
        self.bulk_themes: list[str] = []
        """The generated people, plugins and themes: generated notes name only these (the MOCs
        name everything), so the hand-written notes meet no generated note about themselves."""

    def free(self, stem: str) -> bool:
        return stem.lower() not in self.stems

    def claim(self, path: str) -> None:
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        if not self.free(stem):
            raise ValueError(f"two notes named {stem}")
        self.stems[stem.lower()] = path

    def link(self, source: str, stem: str, text: str | None = None) -> str:
        """``[[stem|text]]`` from ``source``, recorded in the manifest."""
        target = self.stems.get(stem.lower())
        self.links.setdefault(source, []).append((stem, target))
        return f"[[{stem}|{text}]]" if text and text != stem else f"[[{stem}]]"

    def add(self, path: str, front: dict[str, Any], body: str) -> None:
        lines = ["---"]
        block = self.rng.random() < 0.3  # people write lists both ways
        for key, value in front.items():
            if block and isinstance(value, list):
                lines.append(f"{key}:")
                lines += [f"  - {_yaml(item)}" for item in value]
            else:
                lines.append(f"{key}: {_yaml(value)}")
        lines.append("---")
        self.files[path] = "\n".join(lines) + "\n" + body.rstrip("\n") + "\n"


def _yaml(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    scalar: str = _GENVAULT._yaml_scalar(str(value))
    return scalar


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if ch.isascii()).lower()


# --- the hand-written notes ---------------------------------------------------------------------


def seed_notes() -> dict[str, str]:
    """The hand-written notes, by vault path, in path order."""
    notes = {}
    for path in sorted(SEED_DIR.rglob("*.md")):
        notes[path.relative_to(SEED_DIR).as_posix()] = path.read_text(encoding="utf-8")
    return notes


def _front_list(text: str, key: str) -> list[str]:
    """A flow list (``key: [a, b]``) of the seed notes' frontmatter, which is all they use."""
    for line in text.split("---", 2)[1].splitlines():
        if line.startswith(f"{key}: ["):
            return [item.strip() for item in line[len(key) + 3 : -1].split(",")]
    return []


def _seed(vault: Vault) -> None:
    for path, text in seed_notes().items():
        vault.claim(path)
        vault.files[path] = text
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        aliases = _front_list(text, "aliases")
        tags = _front_list(text, "tags")
        if path.startswith("Plugins/"):
            category = next(t.split("/")[1] for t in tags if t.startswith("plugin/"))
            vault.plugins.append((stem, aliases[0], category))
        elif path.startswith("People/"):
            vault.people.append((stem, aliases[0]))
        elif path.startswith("Themes/"):
            vault.themes.append(stem)


# --- the bulk -----------------------------------------------------------------------------------


def _people(vault: Vault, count: int) -> None:
    rng = vault.rng
    names = {name for _, name in vault.people}
    while len(vault.people) < count:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        name = f"{first} {last}"
        style = rng.randrange(4)
        handle = [
            f"{_ascii(first)[0]}{_ascii(last)}",
            f"{_ascii(first)}{_ascii(last)[0]}{rng.randrange(10, 99)}",
            f"{_ascii(first)}-{_ascii(last)}",
            f"{_ascii(last)}{rng.randrange(1, 9999)}",
        ][style]
        if not vault.free(handle) or name in names:
            continue
        names.add(name)
        path = f"People/{handle}.md"
        vault.claim(path)
        vault.people.append((handle, name))


def _plugins(vault: Vault, count: int) -> None:
    rng = vault.rng
    nouns = sorted(PLUGIN_NOUNS)
    names = {name for _, name, _ in vault.plugins}
    while len(vault.plugins) < count:
        adj, noun = rng.choice(PLUGIN_ADJ), rng.choice(nouns)
        name = f"{adj} {noun}"
        slug = f"{adj}-{noun}".lower().replace(" ", "-")
        stem = [f"obsidian-{slug}", slug, f"{slug}-plugin"][rng.randrange(3)]
        if not vault.free(stem) or name in names:
            continue
        names.add(name)
        vault.claim(f"Plugins/{stem}.md")
        vault.plugins.append((stem, name, PLUGIN_NOUNS[noun]))


def _write_plugin(vault: Vault, stem: str, name: str, category: str, author: tuple[str, str]):
    rng = vault.rng
    path = f"Plugins/{stem}.md"
    handle, person = author
    body = [f"# {name}", ""]
    body.append(f"{name} adds {rng.choice(FEATURES)} to {rng.choice(PLACES)}.")
    body.append(f"By {vault.link(path, handle, person)}. {rng.choice(PLUGIN_LINES)}")
    if rng.random() < 0.5:
        other, other_name, _ = rng.choice(vault.bulk_plugins)
        if other != stem:
            body.append(f"Works well with {vault.link(path, other, other_name)}.")
    body += ["", *rng.sample(CHATTER, rng.randrange(1, 4))]
    body += ["", "## Settings", f"- {rng.choice(PLUGIN_LINES)}"]
    body.append("")
    body.append(f"Listed in {vault.link(path, f'Plugins - {CATEGORY_NAMES[category]}')}.")
    updated = datetime.date(2021, 1, 1) + datetime.timedelta(days=rng.randrange(1700))
    front = {
        "aliases": [name],
        "tags": ["plugin", f"plugin/{category}"],
        "author": f"[[{handle}]]",
        "repo": f"{handle}/{stem}",
        "updated": updated.isoformat(),
    }
    vault.links.setdefault(path, []).insert(0, (handle, vault.stems[handle.lower()]))
    vault.add(path, front, "\n".join(body))


def _write_person(vault: Vault, handle: str, name: str, made: list[tuple[str, str]]) -> None:
    rng = vault.rng
    path = f"People/{handle}.md"
    roll = rng.random()
    body = []
    if roll < 0.65:
        body += [f"# {name}", ""]
    elif roll < 0.85:
        body += [f"# @{handle}", ""]
    if made:
        items = ", ".join(vault.link(path, stem, plugin) for stem, plugin in made)
        body.append(f"Plugins: {items}.")
    else:
        body.append(f"Forum member since {rng.randrange(2020, 2026)}.")
    if rng.random() < 0.3:
        body.append(f"Uses the {rng.choice(vault.bulk_themes)} theme.")
    vault.add(path, {"aliases": [name], "tags": ["person"], "github": handle}, "\n".join(body))


def _themes(vault: Vault, count: int) -> None:
    rng = vault.rng
    while len(vault.themes) < count:
        name = f"{rng.choice(THEME_ADJ)} {rng.choice(THEME_NOUNS)}"
        if not vault.free(name):
            continue
        path = f"Themes/{name}.md"
        vault.claim(path)
        vault.themes.append(name)
        handle, person = rng.choice(vault.bulk_people)
        modes = rng.choice([["dark"], ["light"], ["dark", "light"]])
        body = f"# {name}\n\n{rng.choice(THEME_LINES)} By {vault.link(path, handle, person)}."
        front = {"tags": ["theme"], "modes": modes, "author": f"[[{handle}]]"}
        vault.links[path].insert(0, (handle, vault.stems[handle.lower()]))
        vault.add(path, front, body)


def _snippets(vault: Vault, count: int) -> list[str]:
    rng = vault.rng
    made: list[str] = []
    while len(made) < count:
        title = f"{rng.choice(SNIPPET_ACTIONS)} {rng.choice(SNIPPET_THINGS)}"
        if not vault.free(title):
            continue
        path = f"Snippets/{title}.md"
        vault.claim(path)
        made.append(title)
        css = f".workspace-{rng.choice(['ribbon', 'leaf', 'tab-header'])} {{ opacity: 0.6; }}"
        body = (
            f"# {title}\n\nA CSS snippet; save it under `.obsidian/snippets`.\n\n```css\n{css}\n```"
        )
        vault.add(path, {"tags": ["snippet", "css"]}, body)
    return made


def _forum(vault: Vault, count: int) -> None:
    rng = vault.rng
    made = 0
    while made < count:
        kind = rng.random()
        stem, name, _cat = rng.choice(vault.bulk_plugins)
        if kind < 0.45:
            title = f"How to {rng.choice(FORUM_VERBS)} {rng.choice(FORUM_OBJECTS)} on {rng.choice(PLATFORMS)}"
        elif kind < 0.65:
            title = f"{name} not working after update"
        elif kind < 0.8:
            other = rng.choice(vault.bulk_plugins)[1]
            title = f"{name} and {other} together"
        else:
            title = f"Feature request - {rng.choice(FORUM_VERBS)} {rng.choice(FORUM_OBJECTS)}"
        if not vault.free(title) or "/" in title:
            continue
        year = rng.randrange(2021, 2026)
        path = f"Forum/{year}/{title}.md"
        vault.claim(path)
        made += 1
        handle, person = rng.choice(vault.bulk_people)
        body = [f"# {title}", "", f"Asked by {vault.link(path, handle, person)}."]
        body += [*rng.sample(CHATTER, rng.randrange(0, 3)), ""]
        if rng.random() < 0.3:
            body.append(rng.choice(["#help", "#bug", "#solved", "#mobile/help"]))
        body.append(f"> {rng.choice(FORUM_REPLIES)} See {vault.link(path, stem, name)}.")
        if rng.random() < 0.01:
            body.append(f"Related: {vault.link(path, rng.choice(BROKEN_KEYS))}")
        tags = ["forum", rng.choice(PLATFORMS).lower()]
        vault.add(path, {"tags": tags}, "\n".join(body))


def _showcases(vault: Vault, count: int, attachments: list[str]) -> None:
    rng = vault.rng
    made = 0
    while made < count:
        handle, person = rng.choice(vault.bulk_people)
        title = f"{person}'s {rng.choice(SHOWCASE_KINDS)} setup"
        if not vault.free(title):
            continue
        path = f"Showcases/{title}.md"
        vault.claim(path)
        made += 1
        used = rng.sample(vault.bulk_plugins, 3)
        body = [f"# {title}", "", f"Shared by {vault.link(path, handle, person)}."]
        body.append("Plugins: " + ", ".join(vault.link(path, s, n) for s, n, _ in used) + ".")
        body.append(f"Theme: {vault.link(path, rng.choice(vault.bulk_themes))}.")
        if made <= 30:
            image = f"{handle}-setup.png"
            attachments.append(image)
            vault.links[path].append((image, f"attachments/{image}"))
            body += ["", f"![[{image}]]"]
        vault.add(path, {"tags": ["showcase"]}, "\n".join(body))


def _releases(vault: Vault, count: int) -> None:
    rng = vault.rng
    day = datetime.date(2021, 1, 4).toordinal()
    for i in range(count):
        day += rng.randrange(5, 25)
        date = datetime.date.fromordinal(day).isoformat()
        path = f"Changelog/{date} release.md"
        vault.claim(path)
        version = f"1.{i // 8}.{i % 8}"
        stem, name, _ = rng.choice(vault.bulk_plugins)
        body = f"# Obsidian {version}\n\n- Faster start-up.\n- {name} compatibility: {vault.link(path, stem, name)}."
        vault.add(path, {"tags": ["release"], "version": version}, body)


def _cjk(vault: Vault) -> None:
    rng = vault.rng
    chosen = rng.sample(vault.bulk_plugins, 160)
    for i, (stem, name, _) in enumerate(chosen):
        if i < 100:
            folder, title, lines = "中文", f"{name} {ZH_SUFFIXES[i % 4]}", ZH_LINES
            tag = "中文"
        elif i < 130:
            folder, title, lines = "日本語", f"{name}{JA_SUFFIXES[i % 2]}", JA_LINES
            tag = "日本語"
        else:
            folder, title, lines = "한국어", f"{name}{KO_SUFFIXES[i % 2]}", KO_LINES
            tag = "한국어"
        if not vault.free(title):
            continue
        path = f"{folder}/{title}.md"
        vault.claim(path)
        body = f"# {title}\n\n{rng.choice(lines)} {vault.link(path, stem, name)}"
        vault.add(
            path,
            {"tags": [tag, {"中文": "插件", "日本語": "プラグイン"}.get(tag, "플러그인")]},
            body,
        )


def _mocs(vault: Vault) -> None:
    by_category: dict[str, list[tuple[str, str]]] = {}
    for stem, name, category in vault.plugins:
        by_category.setdefault(category, []).append((stem, name))
    hub = "MOCs/Plugins MOC.md"
    lines = ["# Plugins MOC", "", "Every community plugin in this vault, by category.", ""]
    for category in sorted(CATEGORY_NAMES):
        title = f"Plugins - {CATEGORY_NAMES[category]}"
        lines.append(f"- {vault.link(hub, title)}")
        path = f"MOCs/{title}.md"
        members = sorted(by_category.get(category, []), key=lambda p: p[1].lower())
        body = [f"# {title}", ""] + [f"- {vault.link(path, s, n)}" for s, n in members]
        vault.add(path, {"tags": ["moc", "plugin"]}, "\n".join(body))
    vault.add(hub, {"tags": ["moc"]}, "\n".join(lines))
    path = "MOCs/People MOC.md"
    people = sorted(vault.people, key=lambda p: p[1].lower())
    body = ["# People MOC", ""] + [f"- {vault.link(path, h, n)}" for h, n in people]
    vault.add(path, {"tags": ["moc", "person"]}, "\n".join(body))
    path = "MOCs/Themes MOC.md"
    body = ["# Themes MOC", ""] + [f"- {vault.link(path, t)}" for t in sorted(vault.themes)]
    vault.add(path, {"tags": ["moc", "theme"]}, "\n".join(body))


def _guides_moc(vault: Vault) -> None:
    path = "MOCs/Guides MOC.md"
    body = ["# Guides MOC", "", "## Guides"]
    for folder in ("Guides/", "Sync/", "Glossary/", "Snippets/"):
        if folder != "Guides/":
            body += ["", f"## {folder.rstrip('/')}"]
        stems = sorted(
            p.rsplit("/", 1)[-1].removesuffix(".md") for p in vault.files if p.startswith(folder)
        )
        body += [f"- {vault.link(path, stem)}" for stem in stems]
    vault.add(path, {"tags": ["moc", "guide"]}, "\n".join(body))


def build(seed: int = DEFAULT_SEED) -> tuple[Vault, list[str]]:
    """Plan and render the whole vault in memory (no I/O but reading the seed notes)."""
    vault = Vault(seed)
    _seed(vault)
    for path in ("MOCs/Plugins MOC.md", "MOCs/People MOC.md", "MOCs/Themes MOC.md"):
        vault.claim(path)
    vault.claim("MOCs/Guides MOC.md")
    seeded_people, seeded_plugins = len(vault.people), len(vault.plugins)
    _people(vault, 900)
    _plugins(vault, 1300)
    vault.bulk_people = vault.people[seeded_people:]
    vault.bulk_plugins = vault.plugins[seeded_plugins:]
    for category in sorted(CATEGORY_NAMES):
        vault.claim(f"MOCs/Plugins - {CATEGORY_NAMES[category]}.md")
    seeded_themes = len(vault.themes)
    _themes(vault, 250)
    vault.bulk_themes = vault.themes[seeded_themes:]
    attachments: list[str] = []
    rng = vault.rng
    made: dict[str, list[tuple[str, str]]] = {}
    for stem, name, category in vault.bulk_plugins:
        author = rng.choice(vault.bulk_people)
        made.setdefault(author[0], []).append((stem, name))
        _write_plugin(vault, stem, name, category, author)
    for handle, name in vault.bulk_people:
        _write_person(vault, handle, name, made.get(handle, []))
    _snippets(vault, 150)
    _forum(vault, 700)
    _showcases(vault, 200, attachments)
    _releases(vault, 60)
    _cjk(vault)
    _mocs(vault)
    _guides_moc(vault)
    return vault, attachments


# --- writing ------------------------------------------------------------------------------------


def generate(out: Path, seed: int = DEFAULT_SEED, *, force: bool = False) -> dict[str, Any]:
    """Write the vault under ``out``; return its manifest (notes, links, attachments)."""
    out = Path(out)
    _GENVAULT._prepare_out(out, force)
    vault, attachments = build(seed)
    for path in sorted(vault.files):
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(vault.files[path], encoding="utf-8", newline="\n")
    (out / "attachments").mkdir(exist_ok=True)
    for image in sorted(attachments):
        (out / "attachments" / image).write_bytes(_GENVAULT._PNG_BYTES)
    settings = out / ".obsidian"
    settings.mkdir(exist_ok=True)
    (settings / "app.json").write_text('{"alwaysUpdateLinks": true}\n', encoding="utf-8")
    seeds = seed_notes()  # read once: per plugin it read every seed note 1,300 times (4 s)
    enabled = sorted(stem for stem, _, _ in vault.plugins if f"Plugins/{stem}.md" in seeds)
    (settings / "community-plugins.json").write_text(json.dumps(enabled) + "\n", encoding="utf-8")
    marker = {"generator": "examples/community/generate.py", "seed": seed}
    (out / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return {
        "notes": sorted(vault.files),
        "links": {path: vault.links.get(path, []) for path in sorted(vault.files)},
        "attachments": [f"attachments/{image}" for image in sorted(attachments)],
        "seed": sorted(seeds),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write the vault into")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--force", action="store_true", help="replace a vault made by this tool")
    args = parser.parse_args(argv)
    try:
        manifest = generate(args.out, args.seed, force=args.force)
    except GenerateError as exc:
        print(f"generate.py: {exc}", file=sys.stderr)
        return 2
    print(
        f"{len(manifest['notes'])} notes, {len(manifest['attachments'])} attachments in {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
