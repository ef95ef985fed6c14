"""Generate a synthetic Obsidian-style vault and the ground truth about it.

    python bench/genvault.py --notes 10000 --seed 1 --out bench/out/v10k
    # -> bench/out/v10k/ (the vault) and bench/out/v10k.truth.json (beside it, not inside)

The vault feeds the benchmarks (1k/10k/100k notes) and the correctness tests: the truth file says,
for every note, the title, tags, aliases and resolved links that SEMANTICS.md demands. The truth
comes from the generator's own bookkeeping, never from notedex, so it is an independent check.

Every choice is kept simple enough that the bookkeeping is certainly right: no link ever depends
on the tie-break of SEMANTICS 7.7 (notes that share a stem are only linked by a path that matches
exactly one of them), file names are unique case-insensitively except for those shared stems, and
names never contain characters that change meaning inside links or YAML.

Same ``--notes`` and ``--seed`` give a byte-identical vault and truth file: one
``random.Random(seed)``, no clock, no iteration over sets.

Truth JSON (one note or list item per line):

- ``notes``: vault path (NFC) -> ``title`` (SEMANTICS 3), ``first_h1``, ``id``/``type``/``status``
  (strings or null), ``tags`` (frontmatter first, then inline; unique case-insensitively,
  first-seen spelling), ``aliases``, ``links``: ``[{kind, linkpath, target}]`` in document order
  (frontmatter links first); ``target`` is a vault path or null; self-links (``[[#H]]``) have
  linkpath ``""`` and the note itself as target (SEMANTICS 7.1).
- ``orphans``: sorted note paths (SEMANTICS 8). ``broken``: ``[{source, linkpath, key}]``.
- ``invalid_yaml``: notes whose frontmatter is not a YAML mapping (invalid YAML, a list or a
  scalar): each must carry an error, and nothing else in the vault is an error.
- ``attachments``; ``ignored``: dot-prefixed paths that are not vault files (SEMANTICS 1).
- ``doctor`` (only with ``--doctor``): the link doctor's planted cases under ``Doctor/``, which
  are not in ``notes``: ``brokenAnchors`` (every kind, with the suggestion and reason health must
  give), ``deadEnds``, ``unusedAttachments``, ``mentions`` (target note -> the exact places),
  ``renames`` (a rename to perform, and the `renamed` suggestion it must give the links to it).
  Dead ends, unused attachments and tags of the generated notes follow from ``notes``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shutil
import sys
import time
import unicodedata
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

GENERATOR = "notedex-genvault"
GENERATOR_VERSION = 1
MARKER_NAME = ".genvault.json"
"""Dot-prefixed, so not a vault file (SEMANTICS 1); lets ``--force`` know what it may delete."""

NBSP = "\u00a0"


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _vocab(text: str, sep: str | None = None) -> list[str]:
    return [word.strip() for word in _nfc(text).split(sep) if word.strip()]


# --- vocabulary --------------------------------------------------------------------------------

_EN_WORDS = _vocab(
    """
    project meeting review plan design garden recipe travel budget reading sleep habit python
    database index query cache server deploy release bug feature roadmap retro sprint idea draft
    outline summary chapter lecture paper theory experiment result data model network kernel
    memory storage backup sync vault note link graph search archive inbox journal weekly monthly
    goal health fitness running coffee tea music film book author quote history math physics
    chemistry biology language grammar vocabulary finance invoice tax contract client hiring
    interview onboarding team manager report metric dashboard incident postmortem alert oncall
    migration schema parser tokenizer compiler runtime thread process signal queue worker daemon
    config secret token session cookie browser mobile tablet desktop keyboard monitor camera
    photo video podcast episode season lesson course exam homework teacher student campus
    library museum city river mountain forest ocean island weather spring summer autumn winter
    morning evening weekend holiday birthday family friend neighbor doctor dentist pharmacy
    grocery kitchen bread cheese pasta salad soup dessert breakfast lunch dinner market store
    price discount shipping order refund warranty repair bicycle train flight hotel passport
    visa ticket map route bridge tower castle temple painting sculpture poem novel essay letter
    diary memo agenda minutes decision action owner deadline milestone estimate risk scope
    quality testing coverage benchmark profile latency throughput scaling cluster region zone
    """
)

_EN_ADJ = _vocab("""quick slow careful simple complex early late better worse new old small large
important minor open closed pending stable broken shared private public weekly daily rough
final clean messy quiet loud bright dark fresh stale""")

_EN_VERBS = _vocab("""checks moves builds breaks fixes needs shows keeps drops finds tracks explains
changes follows improves covers blocks waits reads writes sends merges splits loads saves
starts stops""")

_ZH_WORDS = _vocab(
    """
    项目 会议 计划 设计 笔记 读书 学习 数学 物理 历史 语言 数据 模型 网络 服务器 数据库 索引 查询
    缓存 部署 发布 问题 功能 路线 回顾 想法 草稿 大纲 总结 章节 论文 理论 实验 结果 健康 运动 咖啡
    音乐 电影 作者 旅行 预算 财务 合同 客户 面试 周报 月报 目标 习惯 睡眠 工作 生活 家庭 朋友 城市
    天气 早上 晚上 今天 明天 昨天 重要 简单 复杂 需要 可以 已经 应该 继续 完成 开始 整理 记录 检查
    修改 更新 讨论 分析 比较 测试 重跑 调试 优化 筆記 資料 閱讀 整理 歸檔 圖書館 博物館 公園 花園
    """
)

_ZH_PARTICLES = ["的", "了", "和", "在", "把", "对", "也", "还"]

_ASCII_TERMS = ["gen-itgc", "API", "SQL", "k8s", "CI", "PR", "v2", "Python", "SQLite", "OKR", "Q3"]

_ACCENTED = _vocab("Café Été Résumé Naïve Crème Fiancée Déjà Öl Über Señor")

_FOLDER_WORDS = _vocab(
    """Projects Areas Resources Archive Inbox Journal Work Personal Reading Research Meetings
    Clients Recipes Travel Finance Health Courses Drafts Ideas Templates People Books Papers
    Assets Media Reference Notes Logs Planning 项目 读书笔记 工作 生活 学习 归档 资料"""
)

_FOLDER_PHRASES = _vocab(
    """Daily Notes|Project Alpha|Project Beta|Reading List|Side Projects|Team Docs|Meeting Notes
    |Old Stuff|Course Notes|Book Notes|Work Log|Home Lab|Garden Plans|周 报""",
    "|",
)

_DUP_STEMS = _vocab("Index|README|Overview|TODO|Meeting Notes|Ideas|Summary|未命名|Log|Plan", "|")

_TAG_WORDS = _vocab("""todo idea review draft done reference meeting book paper python rust sql health
finance travel recipe project work personal urgent later someday question insight quote
howto snippet bug feature release research""")

_ZH_TAGS = _vocab("筆記 读书 学习 工作 想法 待办 日记 旅行 健康 資料")

_ALIAS_EXTRAS = ["AI", "ML", "KB", "SRE", "OKRs", "DB tips", "Road map", "周记"]

_YAML_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}
_PLAIN_YAML = re.compile(
    r"[A-Za-z\u00c0-\u024f\u4e00-\u9fff][A-Za-z0-9 _\-/\u00c0-\u024f\u4e00-\u9fff]*"
)

# Names that only ever appear in text that must NOT yield links (code, math, escapes...): they are
# reserved so that no real file can have them and a false positive always shows up as broken.
_FAKE_NAMES = [
    "Fake Code Link",
    "Fake Tilde Link",
    "Fake Shell Link",
    "Fake Fenced",
    "Fake Inline Code",
    "Fake Math Link",
    "Fake Math Inline",
    "Fake Dollar Math",
    "Fake Escaped",
    "Fake List Code",
    "Fake Callout Code",
    "Not A Link",
    "Someday Maybe",
    "Fake Quoted",
]

_FENCES: list[tuple[str, list[str], str]] = [
    (
        "```python",
        ["def link() -> str:", '    return "[[Fake Code Link]]"  # #notatag', 'TAGS = ["#python"]'],
        "```",
    ),
    (
        "~~~",
        ["#include <stdio.h>", '#define TAG "#fakec"', "see [[Fake Tilde Link]] #faketilde"],
        "~~~",
    ),
    ("```bash", ['grep -r "#todo" .  # [[Fake Shell Link]]', "echo ![[fake.png]]"], "```"),
    ("```", ["[t](Fake%20Fenced.md)", "# not a heading", "#notatag either"], "```"),
    ("~~~markdown", ["- [ ] [[Fake Tilde Link|shown]] #fakemd", "> ![[fake.pdf]]"], "~~~"),
]

_FAKE_TOKENS = [
    "`[[Fake Inline Code]]`",
    "`#notatag`",
    "`x = a#b`",
    "#1984",
    "#2024",
    "foo#bar",
    "page#section",
    "C# and F# code",
    "https://example.com/docs/page#section",
    "[site](https://example.com/#intro)",
    "[mail](mailto:someone@example.com)",
    "[cdn](//cdn.example.com/lib.md)",
    "[t](Not A Link.md)",
    "\\[\\[Fake Escaped\\]\\]",
    "[[]]",
    "$a+[[Fake Dollar Math]]+b$",
]

_PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01"
_PDF_BYTES = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


# --- plan ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _NotePlan:
    folder: str
    """Vault-relative folder, ``""`` for the root."""
    stem: str
    path: str
    nfd_on_disk: bool = False
    orphan: bool = False
    dup: bool = False
    lang: str = "en"
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _LinkRec:
    kind: str
    linkpath: str
    target: str | None


@dataclass(slots=True)
class _Item:
    """Something placed in the body: a link (``link`` set) or an inline tag (``tag`` set)."""

    text: str
    link: _LinkRec | None = None
    tag: str | None = None
    container: str = "inline"
    """``inline`` (paragraph or list), ``table``, ``callout`` or ``comment``."""


@dataclass(slots=True)
class _NoteTruth:
    title: str
    first_h1: str | None
    id: str | None
    type: str | None
    status: str | None
    tags: list[str]
    aliases: list[str]
    links: list[_LinkRec]


class _TagList:
    """Tags as reported: unique case-insensitively, first-seen spelling (SEMANTICS 4)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._keys: set[str] = set()

    def add(self, name: str) -> None:
        if name.lower() not in self._keys:
            self._keys.add(name.lower())
            self.names.append(name)


def _yaml_scalar(value: str) -> str:
    """A YAML scalar that reads back as exactly ``value`` (plain when safe, else quoted)."""
    if (
        _PLAIN_YAML.fullmatch(value)
        and value.lower() not in _YAML_RESERVED
        and not value.endswith(" ")
    ):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class VaultGenerator:
    """Plans a vault for ``notes`` and ``seed``, then renders it note by note."""

    def __init__(self, notes: int, seed: int) -> None:
        if notes < 1:
            raise ValueError("notes must be at least 1")
        self.n = notes
        self.seed = seed
        self.rng = random.Random(seed)
        self.used_names: set[str] = {name.lower() for name in _FAKE_NAMES}
        """Lower-cased note stems, attachment names and attachment stems: all must be unique."""
        self.folders: list[str] = [""]
        self.notes: list[_NotePlan] = []
        self.attachments: list[str] = []
        self.linkable: list[_NotePlan] = []
        self.hubs: list[_NotePlan] = []
        self.stem_count: dict[str, list[_NotePlan]] = {}
        self._en_sentences: list[str] = []
        self._zh_sentences: list[str] = []
        self._tag_pool: list[str] = []

    # names ---------------------------------------------------------------------------------

    def _claim(self, name: str) -> bool:
        key = name.lower()
        if key in self.used_names:
            return False
        self.used_names.add(key)
        return True

    def _en_title(self) -> str:
        rng = self.rng
        words = rng.sample(_EN_WORDS, rng.choice((1, 2, 2, 3, 3, 4)))
        style = rng.random()
        if style < 0.45:
            return " ".join(w.capitalize() for w in words)
        if style < 0.8:
            return " ".join(words).capitalize()
        if style < 0.9:
            return f"{rng.choice(_EN_ADJ).capitalize()} {' '.join(words)}"
        return f"{words[0].capitalize()} {rng.randint(1, 99)}"

    def _zh_title(self) -> str:
        rng = self.rng
        title = "".join(rng.sample(_ZH_WORDS, rng.choice((1, 2, 2, 3))))
        if rng.random() < 0.1:
            title += f" 第{rng.randint(1, 30)}章"
        return title

    def _mixed_title(self) -> str:
        rng = self.rng
        return rng.choice(_ZH_WORDS) + rng.choice(_ASCII_TERMS) + rng.choice(_ZH_WORDS)[:1]

    def _unique_stem(self, lang: str) -> str:
        rng = self.rng
        for attempt in range(12):
            roll = rng.random()
            if lang == "zh":
                stem = self._zh_title()
            elif lang == "mixed":
                stem = self._mixed_title()
            elif roll < 0.02:
                stem = f"{rng.choice(_ACCENTED)} {rng.choice(_EN_WORDS)}"
            elif roll < 0.04:
                stem = f"{rng.choice(_EN_WORDS).capitalize()} v{rng.randint(0, 9)}.{rng.randint(0, 20)}"
            else:
                stem = self._en_title()
            if attempt >= 6:
                stem = f"{stem} {rng.randint(2, 99999)}"
            if self._claim(stem):
                return stem
        counter = len(self.notes)
        while not self._claim(f"Note {counter}"):
            counter += 1
        return f"Note {counter}"

    # plan ----------------------------------------------------------------------------------

    def _plan_folders(self) -> None:
        rng = self.rng
        wanted = max(6, self.n // 60)
        taken = {""}
        self.folders = ["", "Daily Notes", "attachments"]
        taken.update(f.lower() for f in self.folders)
        while len(self.folders) < wanted + 3:
            parent = rng.choice(self.folders)
            if parent in ("attachments", "Daily Notes") or parent.count("/") >= 2:
                parent = ""
            roll = rng.random()
            if roll < 0.6:
                name = rng.choice(_FOLDER_WORDS)
            elif roll < 0.85:
                name = rng.choice(_FOLDER_PHRASES)
            elif roll < 0.93:
                name = str(rng.randint(2015, 2025))
            else:
                name = f"{rng.choice(_FOLDER_WORDS)} {rng.randint(2, 40)}"
            path = f"{parent}/{name}" if parent else name
            if path.lower() in taken:
                continue
            taken.add(path.lower())
            self.folders.append(path)

    def _note_folder(self) -> str:
        rng = self.rng
        if rng.random() < 0.15:
            return ""
        folder = rng.choice(self.folders)
        return "" if folder == "attachments" else folder

    def _add_note(self, folder: str, stem: str, lang: str) -> _NotePlan:
        path = f"{folder}/{stem}.md" if folder else f"{stem}.md"
        plan = _NotePlan(folder=folder, stem=stem, path=path, lang=lang)
        plan.nfd_on_disk = unicodedata.normalize("NFD", stem) != stem and self.rng.random() < 0.5
        self.notes.append(plan)
        self.stem_count.setdefault(stem.lower(), []).append(plan)
        return plan

    def _plan_notes(self) -> None:
        rng = self.rng
        n = self.n
        deep_folders = [f for f in self.folders if f and f != "attachments"]
        # Shared stems first, so that ordinary stems avoid them.
        groups = max(1, n // 100) if n >= 20 else 0
        for g in range(groups):
            base = _DUP_STEMS[g % len(_DUP_STEMS)]
            stem = base if g < len(_DUP_STEMS) else f"{base} {g // len(_DUP_STEMS) + 1}"
            if not self._claim(stem):
                continue
            size = min(rng.choice((2, 2, 3)), len(deep_folders))
            for folder in rng.sample(deep_folders, size):
                spelled = stem.lower() if rng.random() < 0.2 else stem
                self._add_note(folder, spelled, "en").dup = True
        # Daily notes: about 5% of the vault, named by date, like Obsidian's core plugin.
        day0 = 738000  # 2021-07-20 as a proleptic ordinal
        daily = min(n // 20, 4000)
        for ordinal in sorted(rng.sample(range(day0, day0 + 4000), daily)):
            stem = _date_str(ordinal)
            if self._claim(stem):
                self._add_note("Daily Notes", stem, "en")
        while len(self.notes) < n:
            roll = rng.random()
            lang = "en" if roll < 0.65 else ("zh" if roll < 0.9 else "mixed")
            self._add_note(self._note_folder(), self._unique_stem(lang), lang)
        del self.notes[n:]
        self.stem_count = {}
        for plan in self.notes:
            self.stem_count.setdefault(plan.stem.lower(), []).append(plan)
        # Orphans (about 10%) never link and are never linked to.
        for plan in self.notes:
            if not plan.dup and rng.random() < 0.1:
                plan.orphan = True
        self.linkable = [p for p in self.notes if not p.orphan]
        hub_count = max(1, len(self.linkable) // 100) if self.linkable else 0
        self.hubs = rng.sample(self.linkable, hub_count) if hub_count else []
        # Aliases are planned up front so links can point at them on purpose (they never resolve).
        for plan in self.notes:
            if rng.random() < 0.15:
                plan.aliases = self._make_aliases(plan)

    def _make_aliases(self, plan: _NotePlan) -> list[str]:
        rng = self.rng
        out: list[str] = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            roll = rng.random()
            if roll < 0.03:
                alias = "AI, ML"  # SEMANTICS 5: one alias, no comma split
            elif roll < 0.3:
                alias = rng.choice(_ALIAS_EXTRAS)
            elif plan.lang == "zh":
                alias = "".join(rng.sample(_ZH_WORDS, 2))
            else:
                alias = " ".join(rng.sample(_EN_WORDS, 2)).title()
            if alias not in out:
                out.append(alias)
        return out

    def _plan_attachments(self) -> None:
        rng = self.rng
        count = max(5, self.n // 12)
        while len(self.attachments) < count:
            roll = rng.random()
            if roll < 0.35:
                day = _date_str(rng.randint(737400, 739500)).replace("-", "")
                clock = f"{rng.randint(0, 23):02d}{rng.randint(0, 59):02d}{rng.randint(0, 59):02d}"
                stem = f"Pasted image {day}{clock}"
                ext = "png"
            elif roll < 0.6:
                stem = f"diagram-{rng.choice(_EN_WORDS)}-{rng.randint(1, 999)}"
                ext = "png"
            elif roll < 0.8:
                stem = f"{rng.choice(_EN_WORDS).capitalize()} {rng.choice(_EN_WORDS)} scan"
                ext = "pdf"
            elif roll < 0.9:
                stem = f"截图 {rng.randint(1, 99999)}"
                ext = "png"
            else:
                stem = f"{rng.choice(_EN_WORDS)}{rng.randint(1, 9999)}"
                ext = rng.choice(("png", "pdf"))
            name = f"{stem}.{ext}"
            # The stem is claimed too: ``[[stem]]`` must stay broken (SEMANTICS 7.2).
            if stem.lower() in self.used_names or name.lower() in self.used_names:
                continue
            self._claim(stem)
            self._claim(name)
            folder = "attachments" if rng.random() < 0.6 else self._note_folder()
            self.attachments.append(f"{folder}/{name}" if folder else name)

    # prose ---------------------------------------------------------------------------------

    def _build_pools(self) -> None:
        rng = self.rng
        for _ in range(1500):
            words: list[str] = []
            for _ in range(rng.randint(2, 5)):
                words += [rng.choice(_EN_WORDS), rng.choice(_EN_VERBS), rng.choice(_EN_ADJ)]
            if rng.random() < 0.3:
                words.insert(rng.randint(1, len(words) - 1), "and then,")
            sentence = " ".join(words[: rng.randint(5, len(words))]).capitalize()
            self._en_sentences.append(sentence + rng.choice((".", ".", ".", "?", ";")))
        for _ in range(800):
            parts = [
                rng.choice(_ZH_WORDS) + rng.choice(_ZH_PARTICLES) for _ in range(rng.randint(2, 6))
            ]
            if rng.random() < 0.3:
                parts.insert(1, "，")
            if rng.random() < 0.2:
                parts.insert(0, rng.choice(_ASCII_TERMS))
            self._zh_sentences.append("".join(parts) + "。")
        pool: list[str] = list(_TAG_WORDS) + list(_ZH_TAGS)
        for _ in range(60):
            pool.append(
                f"{rng.choice(('project', 'area', 'topic', 'status', 'lang'))}/{rng.choice(_TAG_WORDS)}"
            )
        for _ in range(15):
            pool.append(
                f"{rng.choice(_TAG_WORDS)}/{rng.choice(_TAG_WORDS)}/{rng.choice(_TAG_WORDS)}"
            )
        pool += [
            "学习/数学",
            "工作/周报",
            "y2024",
            "y1984",
            "12-3",
            "to-do",
            "snake_case",
            "CamelCase",
        ]
        pool += ["ReadingList", "Q3-goals", "🎉"]
        self._tag_pool = pool

    def _sentence(self, lang: str) -> str:
        rng = self.rng
        if lang == "zh" or (lang == "mixed" and rng.random() < 0.6):
            return rng.choice(self._zh_sentences)
        return rng.choice(self._en_sentences)

    def _words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.sample(_EN_WORDS, self.rng.randint(lo, hi)))

    # links ---------------------------------------------------------------------------------

    def _pick_target(self, source: _NotePlan) -> _NotePlan | None:
        rng = self.rng
        if not self.linkable or (len(self.linkable) == 1 and self.linkable[0] is source):
            return None
        while True:
            pool = self.hubs if rng.random() < 0.25 else self.linkable
            target = rng.choice(pool)
            if target is not source:
                return target

    def _case_variant(self, name: str) -> str:
        roll = self.rng.random()
        if roll < 0.4:
            variant = name.lower()
        elif roll < 0.7:
            variant = name.upper()
        else:
            variant = name.swapcase()
        # SEMANTICS 7 compares with str.lower() after NFC; keep only variants that fold equal.
        return variant if _nfc(variant).lower() == _nfc(name).lower() else name

    def _unique_suffixes(self, target: _NotePlan) -> list[str]:
        """Partial paths (``B/Dup``) that exactly one same-stem note ends with (SEMANTICS 7.7)."""
        segments = target.path[:-3].split("/")
        same_stem = self.stem_count[target.stem.lower()]
        out: list[str] = []
        for start in range(1, len(segments) - 1):
            suffix = "/".join(segments[start:])
            key = suffix.lower() + ".md"
            if sum(1 for p in same_stem if p.path.lower().endswith(key)) == 1:
                out.append(suffix)
        return out

    def _note_name(self, target: _NotePlan) -> str:
        """How a link spells the target (without ``.md``); it resolves to exactly ``target``."""
        rng = self.rng
        full = target.path[:-3]
        roll = rng.random()
        if target.dup:
            suffixes = self._unique_suffixes(target)
            name = rng.choice(suffixes) if suffixes and roll < 0.4 else full
        elif target.folder and roll < 0.08:
            name = full
        elif target.folder and roll < 0.1:
            name = "/" + full
        elif target.folder and roll < 0.12:
            suffixes = self._unique_suffixes(target)
            name = rng.choice(suffixes) if suffixes else target.stem
        else:
            name = target.stem
        if rng.random() < 0.15:
            name = self._case_variant(name)
        return name

    def _note_link(self, source: _NotePlan, target: _NotePlan) -> _Item:
        rng = self.rng
        name = self._note_name(target)
        roll = rng.random()
        if roll < 0.03 and not name.lower().endswith(".md"):
            name += ".md"
        shown = self._words(1, 3)
        heading = self._words(1, 3).title()
        text, kind, linkpath, container = self._note_link_form(name, shown, heading)
        return _Item(text=text, link=_LinkRec(kind, linkpath, target.path), container=container)

    def _note_link_form(self, name: str, shown: str, heading: str) -> tuple[str, str, str, str]:
        """One spelling of a link to ``name``: (text, kind, linkpath, container)."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            return f"[[{name}]]", "wikilink", name, "inline"
        if roll < 0.5:
            return f"[[{name}|{shown}]]", "wikilink", name, "inline"
        if roll < 0.57:
            return f"[[{name}#{heading}]]", "wikilink", name, "inline"
        if roll < 0.6:
            return f"[[{name}#^{rng.randrange(16**6):06x}]]", "wikilink", name, "inline"
        if roll < 0.62:
            return f"[[{name}#{heading}#{self._words(1, 2)}|{shown}]]", "wikilink", name, "inline"
        if roll < 0.64:
            return f"[[ {name} ]]", "wikilink", name, "inline"
        if roll < 0.66 and " " in name:
            return f"[[{name.replace(' ', NBSP, 1)}]]", "wikilink", name, "inline"
        if roll < 0.7:
            return f"![[{name}]]", "embed", name, "inline"
        if roll < 0.72:
            return f"![[{name}#{heading}]]", "embed", name, "inline"
        if roll < 0.84:
            md = name if name.lower().endswith(".md") else name + ".md"
            return self._markdown_note_link(name, md, shown), "markdown", md, "inline"
        if roll < 0.87:
            return f"[[{name}\\|{shown}]]", "wikilink", name, "table"
        if roll < 0.93:
            return f"[[{name}]]", "wikilink", name, "callout"
        if roll < 0.95:
            return f"[[{name}]]", "wikilink", name, "comment"
        return f"[[{name}|{shown}]]", "wikilink", name, "inline"

    def _markdown_note_link(self, name: str, md: str, shown: str) -> str:
        """``[shown](url-quoted.md)``, or the ``<...>`` form for a quarter of the relative ones."""
        if name.startswith("/") or self.rng.random() < 0.75:
            return f"[{shown}]({quote(md, safe='/')})"
        return f"[{shown}](<{md}>)"

    def _attachment_link(self) -> _Item:
        rng = self.rng
        path = rng.choice(self.attachments)
        name = path.rsplit("/", 1)[-1]
        if rng.random() < 0.1:
            name = path
        if rng.random() < 0.1:
            name = self._case_variant(name)
        roll = rng.random()
        if roll < 0.45:
            text, kind = f"![[{name}]]", "embed"
        elif roll < 0.6:
            text, kind = f"![[{name}|{rng.choice((100, 300, 640))}]]", "embed"
        elif roll < 0.75:
            text, kind = f"[[{name}]]", "wikilink"
        elif roll < 0.9:
            text, kind = f"![{self._words(1, 2)}]({quote(name, safe='/')})", "markdown-embed"
        else:
            text, kind = f"[{self._words(1, 2)}]({quote(name, safe='/')})", "markdown"
        return _Item(text=text, link=_LinkRec(kind, name, path))

    def _answers_to(self, name: str) -> bool:
        """Could a file answer to this bare name, as is or with ``.md`` (SEMANTICS 7.2)?"""
        key = name.lower()
        return key in self.used_names or (key.endswith(".md") and key[:-3] in self.used_names)

    def _missing_name(self) -> str:
        """A bare name that no file answers to, even with ``.md`` or ``.png`` appended."""
        rng = self.rng
        for _ in range(50):
            if rng.random() < 0.7:
                name = f"{self._words(2, 3).capitalize()} someday"
            else:
                name = "未写" + "".join(rng.sample(_ZH_WORDS, 2))
            if not any(self._answers_to(name + ext) for ext in ("", ".md", ".png")):
                return name
        return "Never written anywhere"

    def _broken_link(self, source: _NotePlan) -> _Item:
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            # SEMANTICS 7.8: aliases never resolve links.
            aliased = [p for p in self.hubs if p.aliases]
            if aliased:
                alias = rng.choice(rng.choice(aliased).aliases)
                if "." not in alias and "," not in alias and not self._answers_to(alias):
                    return _Item(text=f"[[{alias}]]", link=_LinkRec("wikilink", alias, None))
        elif roll < 0.16:
            # SEMANTICS 7.6: a leading ``/`` is a full path; a note in a folder is not at the root.
            deep = [p for p in self.hubs if p.folder and not p.dup]
            if deep:
                stem = rng.choice(deep).stem
                return _Item(text=f"[[/{stem}]]", link=_LinkRec("wikilink", "/" + stem, None))
        elif roll < 0.26 and self.notes:
            # SEMANTICS 7.7: a wrong folder never resolves, even for a unique stem; no folder
            # is called ``zz-nowhere``.
            name = f"zz-nowhere/{rng.choice(self.notes).stem}"
            return _Item(text=f"[[{name}]]", link=_LinkRec("wikilink", name, None))
        elif roll < 0.32 and self.attachments:
            # ``[[pic]]`` does not find ``pic.png`` (SEMANTICS 7.2); attachment stems are claimed.
            name = rng.choice(self.attachments).rsplit("/", 1)[-1].rsplit(".", 1)[0]
            return _Item(text=f"[[{name}]]", link=_LinkRec("wikilink", name, None))
        name = self._missing_name()
        if roll < 0.4:
            return _Item(text=f"![[{name}.png]]", link=_LinkRec("embed", name + ".png", None))
        if roll < 0.5:
            md = name + ".md"
            text = f"[{self._words(1, 2)}]({quote(md, safe='/')})"
            return _Item(text=text, link=_LinkRec("markdown", md, None))
        if roll < 0.55:
            return _Item(text=f"[[{name}.md]]", link=_LinkRec("wikilink", name + ".md", None))
        return _Item(text=f"[[{name}]]", link=_LinkRec("wikilink", name, None))

    def _self_link(self, source: _NotePlan) -> _Item:
        rng = self.rng
        if rng.random() < 0.7:
            text = f"[[#{self._words(1, 3).title()}]]"
        else:
            text = f"[[#^{rng.randrange(16**6):06x}]]"
        # SEMANTICS 7.1: an empty linkpath is the source note itself.
        return _Item(text=text, link=_LinkRec("wikilink", "", source.path))

    def _body_link(self, source: _NotePlan) -> _Item:
        roll = self.rng.random()
        if roll < 0.82:
            target = self._pick_target(source)
            if target is not None:
                return self._note_link(source, target)
        if roll < 0.93 and self.attachments:
            return self._attachment_link()
        if roll < 0.97:
            return self._broken_link(source)
        return self._self_link(source)

    def _tag_item(self, name: str) -> _Item:
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            text = f"#{name}."
        elif roll < 0.15:
            text = f"#{name},"
        elif roll < 0.18:
            text = f"**#{name}**"
        else:
            text = f"#{name}"
        return _Item(text=text, tag=name, container="comment" if rng.random() < 0.02 else "inline")

    # frontmatter ---------------------------------------------------------------------------

    def _frontmatter(
        self, plan: _NotePlan, tags: _TagList, truth: _NoteTruth, links: list[_Item]
    ) -> list[str]:
        """YAML lines (without the ``---`` fences); fills ``tags`` and ``truth`` as it goes."""
        rng = self.rng
        lines = self._title_yaml(plan, truth)
        if plan.aliases:
            lines += self._aliases_yaml(plan.aliases)
            truth.aliases = list(plan.aliases)
        if rng.random() < 0.01:
            lines.append(f"alias: {rng.choice(_ALIAS_EXTRAS)} ignored")
        if rng.random() < 0.55:
            lines += self._tags_yaml(tags)
        if rng.random() < 0.01:
            lines.append(f"tag: {rng.choice(_TAG_WORDS)}-singular")  # ignored (SEMANTICS 4)
        lines += self._fields_yaml(truth)
        if rng.random() < 0.3:
            lines.append(f"created: {_date_str(rng.randint(737800, 739500))}")
        if rng.random() < 0.05:
            lines.append(f"publish: {rng.choice(('true', 'false'))}")
        if links:
            lines += self._frontmatter_links(links, truth)
        if rng.random() < 0.02:
            lines.append('remark: "see [[Fake Quoted]] later"')  # not a whole-value link
        if rng.random() < 0.01:
            lines.append("parent: [[Someday Maybe]]")  # unquoted: a nested YAML list, no link
        if not lines:
            lines.append(f"created: {_date_str(rng.randint(737800, 739500))}")
        return lines

    def _title_yaml(self, plan: _NotePlan, truth: _NoteTruth) -> list[str]:
        """The title line, if any: another title, the stem quoted, or empty (about 11%)."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.08:  # about 5% of all notes (64% have frontmatter)
            other = self._zh_title() if plan.lang == "zh" else self._en_title()
            if other.lower() == plan.stem.lower():
                return []
            truth.title = other
            return [f"{rng.choice(('title', 'title', 'Title'))}: {_yaml_scalar(other)}"]
        if roll < 0.11:
            truth.title = plan.stem
            return [f'title: "{plan.stem}"']
        if roll < 0.115:
            return ['title: ""']  # SEMANTICS 3: empty -> the stem
        return []

    def _fields_yaml(self, truth: _NoteTruth) -> list[str]:
        """The ``id``, ``type`` and ``status`` lines, each present by chance."""
        rng = self.rng
        lines: list[str] = []
        if rng.random() < 0.1:
            if rng.random() < 0.2:
                value = str(rng.randint(10000, 99999))
                lines.append(f"id: {value}")
            else:
                value = f"{rng.randint(20200101, 20251231)}-{rng.randrange(16**4):04x}"
                lines.append(f'id: "{value}"')
            truth.id = value
        if rng.random() < 0.2:
            value = rng.choice(("note", "meeting", "book", "person", "project", "会议"))
            lines.append(f"type: {value}")
            truth.type = value
        if rng.random() < 0.2:
            value = rng.choice(("draft", "done", "active", "in progress", "进行中"))
            lines.append(f"{rng.choice(('status', 'Status'))}: {value}")
            truth.status = value
        return lines

    def _aliases_yaml(self, aliases: list[str]) -> list[str]:
        rng = self.rng
        key = rng.choice(("aliases", "aliases", "aliases", "Aliases", "ALIASES"))
        roll = rng.random()
        if len(aliases) == 1 and roll < 0.4:
            return [f"{key}: {_yaml_scalar(aliases[0])}"]
        if roll < 0.7:
            return [f"{key}: [{', '.join(_yaml_scalar(a) for a in aliases)}]"]
        return [f"{key}:"] + [f"  - {_yaml_scalar(a)}" for a in aliases]

    def _tags_yaml(self, tags: _TagList) -> list[str]:
        rng = self.rng
        key = rng.choice(("tags", "tags", "tags", "tags", "Tags", "TAGS"))
        roll = rng.random()
        if roll < 0.03:
            tags.add("yes")
            return [f"{key}: [yes]"]  # SEMANTICS 2: YAML 1.2 keeps it a string
        if roll < 0.05:
            # One string with a space: no tag at all, only a warning (SEMANTICS 4).
            return [f"{key}: {rng.choice(_TAG_WORDS)}, {rng.choice(_TAG_WORDS)}"]
        if roll < 0.06:
            return [f"{key}:"]
        names = rng.sample(self._tag_pool, rng.choice((1, 1, 2, 2, 3, 4)))
        if roll < 0.2:
            tags.add(names[0])
            return [f"{key}: {_yaml_scalar(names[0])}"]
        if roll < 0.27:
            tags.add(names[0])
            return [f'{key}: "#{names[0]}"']
        items: list[str] = []
        for name in names:
            tags.add(name)
            items.append(f'"#{name}"' if rng.random() < 0.1 else _yaml_scalar(name))
        if roll < 0.32:
            # Dropped items (SEMANTICS 4): a space inside, or not a string.
            items.insert(rng.randint(0, len(items)), rng.choice(('"two words"', "2023", '""')))
        if roll < 0.65:
            return [f"{key}: [{', '.join(items)}]"]
        indent = "  " if roll < 0.9 else ""
        return [f"{key}:"] + [f"{indent}- {item}" for item in items]

    def _frontmatter_links(self, links: list[_Item], truth: _NoteTruth) -> list[str]:
        rng = self.rng
        values = []
        for item in links:
            assert item.link is not None
            item.link.kind = "frontmatter"
            truth.links.append(item.link)
            values.append(f'"{item.text}"')
        roll = rng.random()
        if len(values) == 1 and roll < 0.6:
            return [f"{rng.choice(('related', 'up', 'source'))}: {values[0]}"]
        if roll < 0.8:
            return ["related:"] + [f"  - {v}" for v in values]
        return ["links:", "  parent: " + values[0]] + (
            ["  others:"] + [f"    - {v}" for v in values[1:]] if len(values) > 1 else []
        )

    def _frontmatter_link_item(self, source: _NotePlan) -> _Item | None:
        target = self._pick_target(source)
        if target is None:
            return None
        name = self._note_name(target)
        text = f"[[{name}|{self._words(1, 2)}]]" if self.rng.random() < 0.3 else f"[[{name}]]"
        return _Item(text=text, link=_LinkRec("frontmatter", name, target.path))

    def _invalid_frontmatter(self) -> list[str]:
        return self.rng.choice(
            (
                ['title: "Unclosed quote', "status: draft"],
                ["tags: [alpha, beta", "status: draft"],
                ["status: draft: later"],
                ["tags:", "\t- alpha"],
                ["- just", "- a list"],
                ["just a sentence"],
            )
        )

    # body ----------------------------------------------------------------------------------

    def _paragraph(self, lang: str, items: list[_Item], fakes: bool) -> str:
        rng = self.rng
        tokens = [self._sentence(lang) for _ in range(rng.randint(1, 5))]
        if fakes and rng.random() < 0.5:
            tokens.insert(rng.randint(0, len(tokens)), rng.choice(_FAKE_TOKENS))
        # Items go in at non-decreasing positions so their order stays the document order.
        positions = sorted(rng.randint(0, len(tokens)) for _ in items)
        for offset, (pos, item) in enumerate(zip(positions, items)):
            text = item.text
            if item.container == "comment":
                text = f"%% {self._words(1, 2)} {text} %%"
            elif item.link is not None and rng.random() < 0.3:
                text = rng.choice(("see", "cf.", "via", "参见")) + " " + text
            tokens.insert(pos + offset, text)
        line = " ".join(tokens)
        roll = rng.random()
        if roll < 0.15:
            return "- " + line
        if roll < 0.2:
            return f"- [{rng.choice((' ', 'x'))}] {self._words(1, 2)} {line}"
        if roll < 0.25:
            return f"{rng.randint(1, 9)}. {line}"
        return line

    def _filler(self, lang: str, fakes: bool, truth: _NoteTruth, first: bool) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.12:
            heading = self._words(1, 4).title() if lang == "en" else self._sentence(lang)[:-1]
            level = "#" if rng.random() < 0.1 else rng.choice(("##", "###"))
            if level == "#" and truth.first_h1 is None:
                truth.first_h1 = heading
            return f"{level} {heading}"
        if fakes and roll < 0.2:
            opener, lines, closer = rng.choice(_FENCES)
            return "\n".join([opener, *lines, closer])
        if fakes and roll < 0.23:
            return "$$\n\\sum_{i=1}^{n} x_i \\quad [[Fake Math Link]] \\; #fakemath\n$$"
        if fakes and roll < 0.24:
            return "$$[[Fake Math Inline]] #fakemath2$$"
        if fakes and roll < 0.25:
            return f"- {self._words(2, 4)}\n  ```\n  [[Fake List Code]] #fakelist\n  ```"
        if fakes and roll < 0.26:
            return "> [!example] Code\n> ```\n> [[Fake Callout Code]] #fakecallout\n> ```"
        if roll < 0.28 and not first:
            return "---"  # never first: a body starting with ``---`` could read as frontmatter
        return self._paragraph(lang, [], fakes)

    def _block_for(self, lang: str, group: list[_Item], fakes: bool) -> str:
        container = group[0].container
        if container == "table":
            rows = ["| Item | Link |", "| --- | --- |"]
            rows += [f"| {self._words(1, 2)} | {item.text} |" for item in group]
            return "\n".join(rows)
        if container == "callout":
            kind = self.rng.choice(("note", "tip", "info", "quote"))
            lines = [f"> [!{kind}] {self._words(1, 3).title()}"]
            lines += [f"> {self._sentence(lang)} {item.text}" for item in group]
            return "\n".join(lines)
        return self._paragraph(lang, group, fakes)

    def _body(self, plan: _NotePlan, items: list[_Item], truth: _NoteTruth, tags: _TagList) -> str:
        rng = self.rng
        lang = plan.lang
        fakes = rng.random() < 0.35
        roll = rng.random()
        filler_count = (
            rng.randint(1, 3)
            if roll < 0.35
            else (rng.randint(3, 8) if roll < 0.85 else rng.randint(8, 25))
        )
        blocks: list[str] = []
        if rng.random() < 0.4:
            h1 = plan.stem if rng.random() < 0.6 else self._en_title()
            truth.first_h1 = h1
            blocks.append(f"# {h1}")
        slots = sorted(rng.randint(0, filler_count) for _ in items)
        cursor = 0
        for slot in range(filler_count + 1):
            group: list[_Item] = []
            while cursor < len(items) and slots[cursor] == slot:
                group.append(items[cursor])
                cursor += 1
            # Consecutive items sharing a container go in one block; order is kept throughout.
            start = 0
            while start < len(group):
                end = start + 1
                while (
                    end < len(group)
                    and group[end].container == group[start].container
                    and end - start < 4
                ):
                    end += 1
                chunk = group[start:end]
                if chunk[0].container == "comment":
                    chunk_block = self._paragraph(lang, chunk, fakes)
                else:
                    chunk_block = self._block_for(lang, chunk, fakes)
                blocks.append(chunk_block)
                start = end
            if slot < filler_count:
                blocks.append(self._filler(lang, fakes, truth, first=not blocks))
        for item in items:
            if item.link is not None:
                truth.links.append(item.link)
            elif item.tag is not None:
                tags.add(item.tag)
        return "\n\n".join(blocks) + "\n"

    # one note ------------------------------------------------------------------------------

    def _render_note(self, plan: _NotePlan, fm_kind: str) -> tuple[str, _NoteTruth]:
        rng = self.rng
        truth = _NoteTruth(plan.stem, None, None, None, None, [], [], [])
        tags = _TagList()
        link_count = 0
        if not plan.orphan:
            link_count = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 8, 12))
        fm_links: list[_Item] = []
        body_items: list[_Item] = []
        if fm_kind == "valid" and link_count and rng.random() < 0.15:
            for _ in range(min(link_count, rng.choice((1, 1, 2)))):
                item = self._frontmatter_link_item(plan)
                if item is not None:
                    fm_links.append(item)
                    link_count -= 1
        body_items += [self._body_link(plan) for _ in range(link_count)]
        if plan.orphan and rng.random() < 0.2:
            body_items.append(self._self_link(plan))  # self-links do not stop being an orphan
        head = ""
        if fm_kind == "valid":
            head = "---\n" + "\n".join(self._frontmatter(plan, tags, truth, fm_links)) + "\n---\n"
        elif fm_kind == "invalid":
            head = "---\n" + "\n".join(self._invalid_frontmatter()) + "\n---\n"
        elif fm_kind == "late":
            # Not at byte 0, so body text (SEMANTICS 2): a thematic break and a setext heading.
            head = f'\n---\ntitle: "{self._en_title()}"\n---\n\n'
        inline_tags: list[_Item] = []
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3, 4))):
            name = rng.choice(self._tag_pool)
            if tags.names and rng.random() < 0.15:
                name = self._case_variant(rng.choice(tags.names))  # same tag, other spelling
            inline_tags.append(self._tag_item(name))
        # Tags and links interleave in the body; merge them in a seeded order.
        merged: list[_Item] = []
        a, b = body_items, inline_tags
        i = j = 0
        while i < len(a) or j < len(b):
            if j >= len(b) or (i < len(a) and rng.random() < 0.6):
                merged.append(a[i])
                i += 1
            else:
                merged.append(b[j])
                j += 1
        body = self._body(plan, merged, truth, tags)
        truth.tags = tags.names
        return head + body, truth

    # driver --------------------------------------------------------------------------------

    def plan(self) -> None:
        self._plan_folders()
        self._plan_notes()
        self._plan_attachments()
        self._build_pools()

    def write(self, out: Path) -> dict[str, Any]:
        """Write the vault under ``out`` (which must exist and be empty) and return the truth."""
        rng = self.rng
        self._make_folders(out)
        writer = _FileWriter()
        n = len(self.notes)
        invalid = set(rng.sample(range(n), min(n, max(3, n // 300))))
        notes_truth: dict[str, dict[str, Any]] = {}
        incoming: set[str] = set()
        invalid_paths: list[str] = []
        for index, plan in enumerate(self.notes):
            fm_kind = _frontmatter_kind(rng.random(), index in invalid)
            if fm_kind == "invalid":
                invalid_paths.append(plan.path)
            text, truth = self._render_note(plan, fm_kind)
            if rng.random() < 0.01:
                text = text.replace("\n", "\r\n")
            disk_name = unicodedata.normalize("NFD", plan.stem) if plan.nfd_on_disk else plan.stem
            disk_path = f"{plan.folder}/{disk_name}.md" if plan.folder else f"{disk_name}.md"
            writer.write(os.path.join(out, disk_path), text.encode("utf-8"))
            for link in truth.links:
                if link.target is not None and link.target != plan.path:
                    incoming.add(link.target)
            notes_truth[plan.path] = _truth_entry(truth)
        for path in self.attachments:
            data = _PNG_BYTES if path.endswith(".png") else _PDF_BYTES
            writer.write(os.path.join(out, path), data + path.encode("utf-8"))
        writer.close()
        ignored = self._write_ignored(out)
        orphans, broken = _orphans_and_broken(notes_truth, incoming)
        return {
            "generator": GENERATOR,
            "version": GENERATOR_VERSION,
            "seed": self.seed,
            "notes_requested": self.n,
            "notes": notes_truth,
            "attachments": sorted(self.attachments),
            "ignored": ignored,
            "orphans": orphans,
            "broken": broken,
            "invalid_yaml": sorted(invalid_paths),
        }

    def _make_folders(self, out: Path) -> None:
        for folder in self.folders:
            if folder:
                (out / folder).mkdir(parents=True, exist_ok=True)
        for folder in {p.folder for p in self.notes}:
            if folder:
                (out / folder).mkdir(parents=True, exist_ok=True)

    def _write_ignored(self, out: Path) -> list[str]:
        """Dot-prefixed paths that are not vault files (SEMANTICS 1)."""
        (out / ".obsidian").mkdir()
        (out / ".obsidian" / "app.json").write_bytes(b'{\n  "alwaysUpdateLinks": true\n}\n')
        (out / ".trash").mkdir()
        target = self.linkable[0].stem if self.linkable else "Nothing"
        (out / ".trash" / "Deleted draft.md").write_bytes(
            f"---\ntags: [trashed]\n---\nOld text linking [[{target}]] #trashed\n".encode()
        )
        marker = {
            "generator": GENERATOR,
            "version": GENERATOR_VERSION,
            "seed": self.seed,
            "notes": self.n,
        }
        (out / MARKER_NAME).write_bytes((json.dumps(marker, sort_keys=True) + "\n").encode())
        return [".obsidian/app.json", ".trash/Deleted draft.md", MARKER_NAME]


def _frontmatter_kind(roll: float, invalid: bool) -> str:
    """Which frontmatter a note gets; ``roll`` is drawn for every note, invalid or not."""
    if invalid:
        return "invalid"
    if roll < 0.35:
        return "none"
    if roll < 0.36:
        return "late"
    return "valid"


def _truth_entry(truth: _NoteTruth) -> dict[str, Any]:
    return {
        "title": truth.title,
        "first_h1": truth.first_h1,
        "id": truth.id,
        "type": truth.type,
        "status": truth.status,
        "tags": truth.tags,
        "aliases": truth.aliases,
        "links": [
            {"kind": link.kind, "linkpath": link.linkpath, "target": link.target}
            for link in truth.links
        ],
    }


def _orphans_and_broken(
    notes_truth: dict[str, dict[str, Any]], incoming: set[str]
) -> tuple[list[str], list[dict[str, str]]]:
    """Sorted orphans (SEMANTICS 8) and the broken links, by source (self-links do not count)."""
    orphans = []
    broken = []
    for path, entry in notes_truth.items():
        outgoing = [link for link in entry["links"] if link["linkpath"] != ""]
        if not outgoing and path not in incoming:
            orphans.append(path)
        for link in outgoing:
            if link["target"] is None:
                linkpath = link["linkpath"]
                key = linkpath[:-3] if linkpath.endswith(".md") else linkpath
                broken.append({"source": path, "linkpath": linkpath, "key": key})
    return sorted(orphans), sorted(broken, key=lambda b: b["source"])


class _FileWriter:
    """Writes files on a few threads while the generator goes on; no fsync (a benchmark input)."""

    _BATCH = 256
    _MAX_PENDING = 16

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="genvault-write")
        self._batch: list[tuple[str, bytes]] = []
        self._pending: list[Future[None]] = []

    def write(self, path: str, data: bytes) -> None:
        self._batch.append((path, data))
        if len(self._batch) >= self._BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._batch:
            self._pending.append(self._pool.submit(_write_files, self._batch))
            self._batch = []
        # Bounded backlog: the generator must not hold the whole vault in memory.
        while len(self._pending) > self._MAX_PENDING:
            self._pending.pop(0).result()

    def close(self) -> None:
        """Wait for every write; re-raise the first failure."""
        self._flush()
        try:
            for future in self._pending:
                future.result()
        finally:
            self._pool.shutdown(wait=True)


def _write_files(batch: list[tuple[str, bytes]]) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
    for path, data in batch:
        fd = os.open(path, flags, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def _date_str(ordinal: int) -> str:
    return datetime.date.fromordinal(ordinal).isoformat()


# --- public API --------------------------------------------------------------------------------


class GenVaultError(Exception):
    """A refusal the CLI reports in one line (exit code 2)."""


def default_truth_path(out: Path) -> Path:
    """``DIR/../NAME.truth.json``: beside the vault, so it never becomes an attachment."""
    out = Path(os.path.abspath(out))
    return out.parent / f"{out.name}.truth.json"


def _prepare_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise GenVaultError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise GenVaultError(f"{out} is not empty (use --force to replace a generated vault)")
        if not (out / MARKER_NAME).is_file():
            raise GenVaultError(f"{out} is not empty and was not made by genvault; not deleting it")
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    out.mkdir(parents=True, exist_ok=True)


def generate(
    out: Path,
    notes: int,
    seed: int,
    *,
    truth_path: Path | None = None,
    force: bool = False,
    doctor: bool = False,
) -> dict[str, Any]:
    """Write a vault of ``notes`` notes under ``out`` and its truth JSON; return the truth.

    ``doctor`` also plants the link doctor's cases (``plant_doctor``); off by default, so the
    benchmark vaults stay byte-identical."""
    out = Path(out)
    truth_file = Path(truth_path) if truth_path is not None else default_truth_path(out)
    if Path(os.path.abspath(truth_file)).is_relative_to(os.path.abspath(out)):
        raise GenVaultError(f"the truth file {truth_file} must be outside the vault {out}")
    generator = VaultGenerator(notes, seed)
    _prepare_out(out, force)
    generator.plan()
    truth = generator.write(out)
    if doctor:
        truth["doctor"] = plant_doctor(out)
    truth_file.parent.mkdir(parents=True, exist_ok=True)
    with open(truth_file, "w", encoding="utf-8", newline="\n") as fh:
        _dump_truth(truth, fh)
    return truth


# The planted cases: names no generated note can have (the vocabulary has no "Zx").
_DOCTOR_FILES = {
    "Doctor/Zx Guide.md": "# Zx Guide\n\n## Installation\n\n### On Linux\n\n## Usage\n\n"
    "The short version. ^summary-1\n",
    "Doctor/Zx Links.md": "[[Zx Guide#Install]] [[Zx Guide#Usage#On Linux]]\n"
    "![[Zx Guide#^sumary-1]] [x](Zx%20Guide.md#No%20Such%20Part)\n"
    "[[#Missing self]] ![[zx-diagram.png#frag]] [[Zx Guide#Installation#On Linux]]\n",
    "Doctor/Zx Dead end.md": "Nothing links out of here. [[#Missing here]]\n",
    "Doctor/zx-diagram.png": "png",
    "Doctor/zx-unused.png": "png",
    "Doctor/Zephyr Quillon.md": "---\naliases: [ZQ project]\n---\nThe note [[Zx Links]].\n",
    "Doctor/Zx Mentions.md": "We met Zephyr Quillon today; `Zephyr Quillon` is code.\n"
    "[[Zephyr Quillon]] and [[Zx Links|Zephyr Quillon]] are links. The zq PROJECT.\n"
    "$Zephyr Quillon$ and <b>Zephyr Quillon</b>, but zephyr  quillon again.\n",
    "Doctor/Zx Old name.md": "Renamed later. [[Zx Guide]]\n",
    "Doctor/Zx Renamer.md": "See [[Zx Old name]] and [[Zx Old name|the old one]].\n",
}


def plant_doctor(out: Path) -> dict[str, Any]:
    """Write the link doctor's cases under ``out/Doctor`` and return what health, mentions and
    a rename must report for them (written by hand, not computed)."""
    for rel, text in _DOCTOR_FILES.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    guide, links, dead = "Doctor/Zx Guide.md", "Doctor/Zx Links.md", "Doctor/Zx Dead end.md"

    def anchor(
        source: str, line: int, column: int, text: str, target: str, subpath: str, fix: Any
    ) -> dict[str, Any]:
        kind = "block" if subpath.startswith("#^") else "heading"
        suggestion, reason, confidence = fix or (None, None, None)
        return {
            "source": source,
            "line": line,
            "column": column,
            "text": text,
            "target": target,
            "subpath": subpath,
            "kind": kind,
            "suggestion": suggestion,
            "reason": reason,
            "confidence": confidence,  # SEMANTICS 8.10, as health shows it (issue 33)
        }

    return {
        "brokenAnchors": [
            anchor(dead, 1, 28, "[[#Missing here]]", dead, "#Missing here", None),
            anchor(
                links,
                1,
                1,
                "[[Zx Guide#Install]]",
                guide,
                "#Install",
                ("#Installation", "prefix", 0.79),
            ),
            # On Linux lies in Installation's section, not in Usage's (SEMANTICS 10.5).
            anchor(
                links,
                1,
                22,
                "[[Zx Guide#Usage#On Linux]]",
                guide,
                "#Usage#On Linux",
                ("#On Linux", "prefix", 1.0),
            ),
            anchor(
                links,
                2,
                1,
                "![[Zx Guide#^sumary-1]]",
                guide,
                "#^sumary-1",
                ("#^summary-1", "typo", 0.94),
            ),
            anchor(
                links, 2, 25, "[x](Zx%20Guide.md#No%20Such%20Part)", guide, "#No Such Part", None
            ),
            anchor(links, 3, 1, "[[#Missing self]]", links, "#Missing self", None),
        ],
        "deadEnds": [dead, "Doctor/Zx Guide.md"],
        "unusedAttachments": ["Doctor/zx-unused.png"],
        "mentions": {
            "Doctor/Zephyr Quillon.md": [
                ["Doctor/Zx Mentions.md", 1, 8, "Zephyr Quillon"],
                ["Doctor/Zx Mentions.md", 2, 67, "zq PROJECT"],
                ["Doctor/Zx Mentions.md", 3, 49, "zephyr  quillon"],
            ]
        },
        "renames": [
            {
                "from": "Doctor/Zx Old name.md",
                "to": "Doctor/Archive/Zx Brand new.md",
                "brokenLinks": [
                    ["Doctor/Zx Renamer.md", "[[Zx Old name]]", "[[Zx Brand new]]"],
                    [
                        "Doctor/Zx Renamer.md",
                        "[[Zx Old name|the old one]]",
                        "[[Zx Brand new|the old one]]",
                    ],
                ],
            }
        ],
    }


def _dump_truth(truth: dict[str, Any], fh: TextIO) -> None:
    """JSON with one note (or list item) per line: greppable, and written by the C encoder."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    def write_lines(lines: Iterable[str], opener: str, closer: str) -> None:
        fh.write(opener)
        for number, line in enumerate(lines):
            fh.write(f"{',' if number else ''}\n  {line}")
        fh.write(f"\n {closer}")

    fh.write("{")
    for number, key in enumerate(sorted(truth)):
        value = truth[key]
        fh.write(f"{',' if number else ''}\n {dumps(key)}: ")
        if isinstance(value, dict) and value:
            write_lines((f"{dumps(k)}: {dumps(value[k])}" for k in sorted(value)), "{", "}")
        elif isinstance(value, list) and value:
            write_lines((dumps(item) for item in value), "[", "]")
        else:
            fh.write(dumps(value))
    fh.write("\n}\n")


def _tree_size(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            files += 1
            size += os.path.getsize(os.path.join(dirpath, name))
    return files, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="genvault.py",
        description=(
            "Generate a deterministic synthetic Obsidian vault plus a truth JSON (titles, tags, "
            "aliases, resolved links, orphans, broken links, invalid frontmatter) computed from "
            "the generator's own bookkeeping, for benchmarks and correctness tests."
        ),
        epilog=(
            "The truth file defaults to DIR/../NAME.truth.json, i.e. beside the vault (for "
            "--out bench/out/v10k it is bench/out/v10k.truth.json), so it never becomes an "
            "attachment of the vault. Same --notes and --seed give byte-identical output."
        ),
    )
    parser.add_argument("--notes", type=int, required=True, metavar="N", help="number of notes")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="vault directory")
    parser.add_argument(
        "--truth",
        type=Path,
        metavar="FILE",
        help="truth JSON path (default DIR/../NAME.truth.json)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace the contents of a non-empty DIR, only if genvault made it",
    )
    parser.add_argument(
        "--doctor",
        action="store_true",
        help="also plant the link doctor's cases under Doctor/ (truth key `doctor`)",
    )
    args = parser.parse_args(argv)
    if args.notes < 1:
        parser.error("--notes must be at least 1")
    truth_file = args.truth if args.truth is not None else default_truth_path(args.out)
    started = time.perf_counter()
    try:
        truth = generate(
            args.out,
            args.notes,
            args.seed,
            truth_path=truth_file,
            force=args.force,
            doctor=args.doctor,
        )
    except GenVaultError as exc:
        print(f"genvault: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    files, size = _tree_size(args.out)
    links = sum(len(n["links"]) for n in truth["notes"].values())
    print(
        f"{len(truth['notes'])} notes, {len(truth['attachments'])} attachments, {links} links, "
        f"{len(truth['orphans'])} orphans, {len(truth['broken'])} broken, "
        f"{len(truth['invalid_yaml'])} invalid frontmatter; {files} files, {size} bytes "
        f"in {elapsed:.2f}s -> {args.out} (truth: {truth_file})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
