"""The language of each page: config, front matter, the generator's i18n settings, the text.

Packer module (issue 42). A page's language decides which stemmer and stop words tokenise its
chunks (:func:`scidx.tokenize.tokenize_as`); the index records every page's language and a
default (the language queries are tokenised in, the page's ``lang`` attribute).

A page's language is, in this order: its front matter ``lang`` (or ``language``/``locale``);
the locale folder it lives in (Docusaurus ``i18n/<locale>/``, a VitePress ``locales`` key's
folder, Hugo ``content/<lang>/``); the config's ``language``; the generator's site language
(Docusaurus ``i18n.defaultLocale``, VitePress ``locales.root.lang`` or ``lang``, MkDocs
``theme.language``, Hugo ``defaultContentLanguage``) when the text does not clearly say
otherwise; else what the text says (:func:`detect_language`), and ``"en"`` for Latin text
that no stop-word count tells apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from scidx.pack.records import Record
from scidx.tokenize import CJK_CLASS, STOP_WORDS

__all__ = [
    "SiteLanguages",
    "assign_languages",
    "detect_language",
    "language_tag",
    "site_languages",
]

# BCP 47 in the shape docs generators use ("en", "zh-Hans", "pt-BR"), lower-cased. The same
# rule is the reader's (scidx.index.corpus): a tag that breaks it is refused, not rendered.
_TAG = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,3}")
_MAX_TAG = 35


def language_tag(value: object) -> str | None:
    """``value`` as a lower-case language tag (``"zh_CN"`` → ``"zh-cn"``), or None if not one."""
    if not isinstance(value, str):
        return None
    tag = value.strip().replace("_", "-").lower()
    if len(tag) > _MAX_TAG or not _TAG.fullmatch(tag):
        return None
    return tag


@dataclass(frozen=True)
class SiteLanguages:
    """What the config and the generator say: a default and locale folders."""

    configured: str | None = None  # staticcorpus.json "language"
    generator: str | None = None  # the generator's site language
    folders: tuple[tuple[str, str], ...] = ()  # (source path prefix, language), longest first


_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003347f]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_CJK = re.compile(f"[{CJK_CLASS}]")
_WORD = re.compile(r"[^\W\d_]+")
_SAMPLE = 20_000  # characters of a page read for detection: enough, and bounded

# Function words frequent in one language's prose and absent from English prose (words that
# are also English, "die", "was", "will", "in", "a", are left out).
_DISTINCT = {
    "de": "und der die das ist nicht ein eine mit für auf dem den von sie werden wird sich auch "
    "oder wenn kann können dass zu zum zur bei aus sind nur noch wie",
    "fr": "le la les des est et une un du dans pour pas que qui sur avec sont vous nous ce cette "
    "ou au aux peut être",
    "es": "el la los las del es y una un que en para con por se su al lo como más pero puede",
    "pt": "o os as da do dos das é e uma um que em para com por se não ao como mais pode você",
    "it": "il la le gli della del di è e una un che per con non si sono come più può anche",
    "nl": "de het een van en is dat niet op te met voor zijn worden wordt kan ook als bij",
}
_DISTINCT_SETS = {
    lang: frozenset(w for w in words.split() if w not in STOP_WORDS)
    for lang, words in _DISTINCT.items()
}


def detect_language(text: str) -> str | None:
    """The language ``text`` is written in, when its script or function words say so.

    Han, kana and Hangul: ``ja`` when kana make a tenth of them, ``ko`` when Hangul dominates,
    else ``zh``. Latin text: ``de``, ``fr``, ``es``, ``pt``, ``it`` or ``nl`` when that
    language's function words are at least 6% of the words and three times the English ones
    (so code and English prose never qualify). None otherwise.
    """
    sample = text[:_SAMPLE]
    words = _WORD.findall(sample)
    letters = sum(map(len, words))
    cjk = len(_CJK.findall(sample)) if _CJK.search(sample) else 0
    if letters and cjk * 10 >= letters:  # code and English words are common in CJK docs
        han, kana, hangul = (len(r.findall(sample)) for r in (_HAN, _KANA, _HANGUL))
        if hangul > han + kana:
            return "ko"
        if kana * 10 >= han + kana and kana:
            return "ja"
        return "zh"
    if len(words) < 20:
        return None
    # One count per distinct word, then a few dozen lookups per language (a page is read once
    # per pack: the packer runs this for every page of a 1,400-page site).
    counts = Counter(w.lower() for w in words)
    english = sum(n for w, n in counts.items() if w in STOP_WORDS)
    found = {lang: sum(counts[w] for w in ws) for lang, ws in _DISTINCT_SETS.items()}
    best = max(sorted(found), key=lambda lang: found[lang])
    share = found[best] / len(words)
    if share >= 0.06 and found[best] >= 3 * english:
        return best
    return None


def site_languages(configured: str | None, generator: str, root: Path) -> SiteLanguages:
    """The configured language and what the generator's config files say (bounded reads)."""
    site, folders = _generator_languages(generator, root)
    return SiteLanguages(configured, site, tuple(sorted(folders, key=lambda f: -len(f[0]))))


def _read(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def _first(root: Path, names: Sequence[str]) -> tuple[Path, str]:
    for base in (root, *sorted(p for p in _children(root))):
        for name in names:
            text = _read(base / name)
            if text:
                return base, text
    return root, ""


def _children(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return []


def _rel(base: Path, root: Path) -> str:
    try:
        rel = base.relative_to(root).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def _generator_languages(generator: str, root: Path) -> tuple[str | None, list[tuple[str, str]]]:
    folders: list[tuple[str, str]] = []
    if generator == "docusaurus":
        names = [f"docusaurus.config.{e}" for e in ("js", "ts", "mjs", "cjs", "mts")]
        base, text = _first(root, names)
        found = re.search(r"defaultLocale\s*:\s*['\"]([^'\"]+)['\"]", text)
        i18n = base / "i18n"
        for child in sorted(_children(i18n)) if i18n.is_dir() else []:
            tag = language_tag(child.name)
            if tag:
                folders.append((_rel(base, root) + f"i18n/{child.name}/", tag))
        return language_tag(found.group(1)) if found else None, folders
    if generator == "vitepress":
        names = [f".vitepress/config.{e}" for e in ("js", "ts", "mjs", "mts", "cjs")]
        base, text = _first(root, names)
        default = None
        block = re.search(r"locales\s*:\s*\{(.*?)\n\s*\}", text, re.S)
        if block:
            for key, lang in re.findall(
                r"['\"]?([\w-]+)['\"]?\s*:\s*\{[^{}]*?\blang\s*:\s*['\"]([^'\"]+)['\"]",
                block.group(1),
            ):
                tag = language_tag(lang)
                if tag and key == "root":
                    default = tag
                elif tag:
                    folders.append((_rel(base, root) + f"{key}/", tag))
        if default is None:
            found = re.search(r"^\s*lang\s*:\s*['\"]([^'\"]+)['\"]", text, re.M)
            default = language_tag(found.group(1)) if found else None
        return default, folders
    if generator == "mkdocs":
        _, text = _first(root, ["mkdocs.yml", "mkdocs.yaml"])
        return _mkdocs_theme_language(text), folders
    if generator == "hugo":
        names = [f"hugo.{e}" for e in ("toml", "yaml", "yml")] + [
            f"config/_default/hugo.{e}" for e in ("toml", "yaml", "yml")
        ]
        _, text = _first(root, names)
        found = re.search(r"defaultContentLanguage\s*[:=]\s*['\"]?([\w-]+)", text)
        return language_tag(found.group(1)) if found else None, folders
    return None, folders


def _mkdocs_theme_language(text: str) -> str | None:
    """``theme.language`` of an ``mkdocs.yml``, line by line (a regex over the block backtracks)."""
    in_theme = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            in_theme = line.rstrip() == "theme:"
            continue
        if in_theme:
            found = re.match(r"\s+language:\s*['\"]?([\w-]+)", line)
            if found:
                return language_tag(found.group(1))
    return None


_FRONT_KEYS = ("lang", "language", "locale")


def _front_matter_language(metadata: Mapping[str, str]) -> str | None:
    for key in _FRONT_KEYS:
        tag = language_tag(metadata.get(key))
        if tag:
            return tag
    return None


def assign_languages(records: Sequence[Record], site: SiteLanguages) -> tuple[list[Record], str]:
    """The records with each one's page language set, and the index's default language.

    The default is the configured language, else the generator's, else the language of most
    of the text whose language the text decides.
    """
    by_source: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_source.setdefault(r.source, []).append(i)
    chosen: dict[str, str | None] = {}
    weight: Counter[str] = Counter()
    for source, rows in by_source.items():
        first = records[rows[0]]
        lang = _front_matter_language(first.metadata) or _folder_language(source, site)
        if lang is None:
            lang = site.configured
        if lang is None:
            sample = "\n".join(records[i].index_text for i in rows)[:_SAMPLE]
            lang = detect_language(sample)
        chosen[source] = lang
        if lang is not None:
            weight[lang] += sum(len(records[i].text) for i in rows)
    # A page the text does not decide (short, or mostly code) has the site's language: the
    # configured one, the generator's, else the language of most of the decided text.
    majority = min(weight, key=lambda lang: (-weight[lang], lang)) if weight else None
    default = site.configured or site.generator or majority or "en"
    for source, lang in chosen.items():
        if lang is None:
            chosen[source] = default
    out = [replace(r, language=chosen[r.source] or default) for r in records]
    return out, default


def _folder_language(source: str, site: SiteLanguages) -> str | None:
    for prefix, lang in site.folders:
        if source.startswith(prefix):
            return lang
    return None
