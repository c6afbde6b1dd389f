"""scidx.snowball, scidx.languages and scidx-stem.js: the Snowball stemmers and stop words.

PyStemmer (the Snowball project's C stemmers, in the test extra) is the oracle. The
vocabularies are the Snowball project's own test vocabularies (snowball-data ``LANG/voc.txt``,
BSD; tests/fixtures/snowball/README.md), each word as written and as the tokenizer feeds it
(NFKC, case-folded). The JavaScript twin runs the same words under node.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import subprocess
import time
from functools import cache
from pathlib import Path

import pytest

from scidx import languages, snowball, tokenize
from scidx.tokenize import normalize

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "snowball"
STEM_JS = ROOT / "src" / "scidx" / "web" / "static" / "scidx-stem.js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

ALGORITHMS = {
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
}
# Words in each snowball-data voc.txt (the fixtures): a shorter list means a broken fixture.
VOC_SIZES = {"de": 35_033, "fr": 21_655, "es": 28_378, "pt": 32_016, "it": 35_495, "nl": 45_670}
# The Snowball site's stop lists, word for word (German's daß is stored folded, as dass).
STOP_SIZES = {"de": 231, "fr": 154, "es": 308, "pt": 203, "it": 279, "nl": 101}


@cache
def _voc(lang: str) -> tuple[str, ...]:
    text = gzip.decompress((FIXTURES / f"{lang}.txt.gz").read_bytes()).decode("utf-8")
    return tuple(text.split())


@cache
def _words(lang: str) -> tuple[str, ...]:
    """The vocabulary as written and as the tokenizer will feed it, sorted, distinct."""
    voc = _voc(lang)
    return tuple(sorted(set(voc) | {normalize(w) for w in voc}))


def _pystemmer(lang: str, words: list[str] | tuple[str, ...]) -> list[str]:
    import Stemmer

    out: list[str] = Stemmer.Stemmer(ALGORITHMS[lang]).stemWords(list(words))
    return out


NODE_SCRIPT = """
import { readFileSync } from "node:fs";
const m = await import(process.argv[1]);
const jobs = JSON.parse(readFileSync(0, "utf8"));
const out = {};
for (const [lang, words] of Object.entries(jobs.stem)) out[lang] = words.map(m.stemmer(lang));
const stop = {};
for (const lang of m.SNOWBALL_LANGUAGES) stop[lang] = [...m.stopWords(lang)].sort();
const errors = jobs.unknown.map((lang) => {
  try { m.stemmer(lang); return null; } catch (e) { return e.message; }
});
let stopError = null;
try { m.stopWords("en"); } catch (e) { stopError = e.message; }
process.stdout.write(JSON.stringify({ languages: m.SNOWBALL_LANGUAGES, out, stop, errors,
  stopError, same: m.stemmer("de") === m.stemmer("de"), maxWordLength: m.MAX_WORD_LENGTH }));
"""


def _node(stem: dict[str, list[str]], unknown: list[str] | None = None) -> dict[str, object]:
    assert NODE is not None
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", NODE_SCRIPT, STEM_JS.as_uri()],
        input=json.dumps({"stem": stem, "unknown": unknown or []}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("lang", list(ALGORITHMS))
def test_python_agrees_with_pystemmer_on_the_snowball_vocabulary(lang: str) -> None:
    assert len(_voc(lang)) == VOC_SIZES[lang]
    words = _words(lang)
    stem = snowball.stemmer(lang)
    ours = [stem(w) for w in words]
    disagreements = [
        (w, a, b) for w, a, b in zip(words, ours, _pystemmer(lang, words), strict=True) if a != b
    ]
    assert disagreements == []


@needs_node
def test_javascript_agrees_with_pystemmer_on_the_snowball_vocabulary() -> None:
    jobs = {lang: list(_words(lang)) for lang in ALGORITHMS}
    result = _node(jobs)
    assert result["languages"] == list(ALGORITHMS)
    out = result["out"]
    assert isinstance(out, dict)
    for lang, words in jobs.items():
        theirs = _pystemmer(lang, words)
        disagreements = [
            (w, a, b) for w, a, b in zip(words, out[lang], theirs, strict=True) if a != b
        ]
        assert disagreements == [], lang


def test_german_stems_casefolded_words_as_written_ones() -> None:
    # The tokenizer folds before stemming (ß -> ss); German Snowball maps ß to ss itself, so
    # PyStemmer gives a word and its folded form the same stem: folding loses nothing.
    folded = [w for w in _voc("de") if normalize(w) != w]
    assert len(folded) == 549 and all("ß" in w for w in folded)
    assert _pystemmer("de", folded) == _pystemmer("de", [normalize(w) for w in folded])
    assert snowball.stemmer("de")("straße") == snowball.stemmer("de")("strasse") == "strass"
    # Every other vocabulary is already folded.
    for lang in ("fr", "es", "pt", "it", "nl"):
        assert all(normalize(w) == w for w in _voc(lang)), lang


# Lines of snowball-data's LANG/voc.txt and LANG/output.txt (the published outputs).
@pytest.mark.parametrize(
    ("lang", "word", "expected"),
    [
        ("de", "häuser", "haus"),
        ("de", "aufeinanderfolgenden", "aufeinanderfolg"),
        ("fr", "continuellement", "continuel"),
        ("es", "chicharrones", "chicharron"),
        ("pt", "quilométricas", "quilométr"),
        ("it", "abbandonata", "abbandon"),
        ("nl", "lichamelijke", "lichamelijk"),
        ("nl", "huizen", "huis"),
    ],
)
def test_published_examples(lang: str, word: str, expected: str) -> None:
    assert languages.stemmer(lang)(word) == expected


def test_the_languages_api() -> None:
    assert languages.STEMMED_LANGUAGES == ("en", "de", "fr", "es", "pt", "it", "nl")
    assert snowball.SNOWBALL_LANGUAGES == ("de", "fr", "es", "pt", "it", "nl")
    assert languages.stemmer("en") is tokenize.stem
    assert languages.stop_words("en") is tokenize.STOP_WORDS
    for lang in snowball.SNOWBALL_LANGUAGES:
        assert languages.stemmer(lang) is languages.stemmer(lang) is snowball.stemmer(lang)
        assert languages.stop_words(lang) is snowball.stop_words(lang)
    for bad in ("", "EN", "de-DE", "zh", "german"):
        with pytest.raises(ValueError) as info:
            languages.stemmer(bad)
        assert str(info.value) == (
            f"no stemmer for language {bad!r}; scidx stems en, de, fr, es, pt, it, nl"
        )
        with pytest.raises(ValueError, match="scidx stems en, de"):
            languages.stop_words(bad)
    with pytest.raises(ValueError) as info:
        snowball.stemmer("en")
    assert str(info.value) == (
        "no Snowball stemmer for language 'en' here; these are de, fr, es, pt, it, nl "
        "(English is scidx.tokenize.stem)"
    )
    with pytest.raises(ValueError, match="English is scidx.tokenize.stem"):
        snowball.stop_words("en")


def test_stop_words() -> None:
    for lang, size in STOP_SIZES.items():
        words = languages.stop_words(lang)
        assert isinstance(words, frozenset) and len(words) == size, lang
        # Stored as the tokenizer yields words, so a membership test needs no folding.
        assert all(normalize(w) == w and re.fullmatch(r"\w+", w) for w in words), lang
    assert {"und", "dass", "über"} <= languages.stop_words("de")
    assert "daß" not in languages.stop_words("de")
    # The French list leaves out été ("summer"): a word only inside a | comment is no stop word.
    assert {"le", "étant", "êtes"} <= languages.stop_words("fr")
    assert "été" not in languages.stop_words("fr")
    assert {"el", "más"} <= languages.stop_words("es")


@needs_node
def test_javascript_api_and_stop_words_match_python() -> None:
    result = _node({}, unknown=["en", "zh", "", "__proto__", "toString"])
    assert result["stop"] == {
        lang: sorted(snowball.stop_words(lang)) for lang in snowball.SNOWBALL_LANGUAGES
    }
    message = (
        "no Snowball stemmer for language {} here; these are de, fr, es, pt, it, nl "
        "(English is scidx-bundle.js's stem)"
    )
    assert result["errors"] == [
        message.format(json.dumps(lang)) for lang in ("en", "zh", "", "__proto__", "toString")
    ]
    assert result["stopError"] == message.format('"en"')
    assert result["same"] is True
    assert result["maxWordLength"] == snowball.MAX_WORD_LENGTH


HOSTILE = [
    "a" * 10_000,
    "ung" * 3_000,
    "lichkeiten" * 1_000,
    "e\u0301te\u0301s",  # combining acute accents, not NFC
    "😀😀emoji😀",
    "\ud800lone\udfffsurrogates",
    "x",
    "",
    "ÄÖÜ",
    "'",
    "qu'il",
    "l'homme",
    "ijzer",
    "aujourd'hui",
    # Longest stemmed and shortest unstemmed (MAX_WORD_LENGTH 64).
    "abschaltungen" * 4 + "keit" + "ungen" + "ung",
    "abschaltungen" * 4 + "keit" + "ungen" + "ungs",
    "x" * 1_000_000 + "ungen",
    # Beyond U+FFFF: returned as they are (JavaScript would count two code units each).
    "a\U00010428ingen",
    "ka\U0001d41asen",
    "\U00020000heiten",
]
ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@pytest.mark.parametrize("lang", list(ALGORITHMS))
def test_hostile_words_are_bounded_and_match_pystemmer(lang: str) -> None:
    stem = snowball.stemmer(lang)
    started = time.perf_counter()
    ours = [stem(w) for w in HOSTILE]
    assert time.perf_counter() - started < 5
    unstemmed = [w for w in HOSTILE if ASTRAL.search(w) or len(w) > snowball.MAX_WORD_LENGTH]
    assert len(unstemmed) == 9
    assert [w for w, o in zip(HOSTILE, ours, strict=True) if w in unstemmed and o != w] == []
    # PyStemmer encodes to UTF-8, which refuses lone surrogates: compare the rest.
    comparable = [i for i, w in enumerate(HOSTILE) if "\ud800" not in w and w not in unstemmed]
    assert max(len(HOSTILE[i]) for i in comparable) == snowball.MAX_WORD_LENGTH == 64
    assert [ours[i] for i in comparable] == _pystemmer(lang, [HOSTILE[i] for i in comparable])


@needs_node
def test_hostile_words_are_the_same_in_javascript() -> None:
    result = _node(dict.fromkeys(ALGORITHMS, HOSTILE))
    out = result["out"]
    assert isinstance(out, dict)
    for lang in ALGORITHMS:
        assert out[lang] == [snowball.stemmer(lang)(w) for w in HOSTILE], lang


def test_german_corpus_words_agree(shared_dir: Path) -> None:
    # Every word of a real German docs site, as the tokenizer yields it.
    corpus = shared_dir / "corpora" / "fastapi-docs-de"
    found: set[str] = set()
    for path in sorted(corpus.rglob("*.md")):
        found.update(re.findall(r"[^\W\d_]+", normalize(path.read_text(encoding="utf-8"))))
    words = sorted(found)
    assert len(words) > 5_000
    stem = snowball.stemmer("de")
    theirs = _pystemmer("de", words)
    assert [(w, a, b) for w, b in zip(words, theirs, strict=True) if (a := stem(w)) != b] == []
    if NODE is not None:
        out = _node({"de": words})["out"]
        assert isinstance(out, dict) and out["de"] == theirs


def _made_up_words(lang: str, count: int) -> list[str]:
    """Words no dictionary has: spliced vocabulary words and random runs of its letters."""
    rng = random.Random(f"scidx-snowball-{lang}")
    voc = _voc(lang)
    # The vocabulary's letters, others that case or fold oddly, and Snowball's own markers.
    alphabet = sorted(set("".join(voc)) | set("ÿİıΩж'_1UYI"))
    words: set[str] = set()
    while len(words) < count:
        if rng.random() < 0.5:
            a, b = rng.choice(voc), rng.choice(voc)
            words.add(a[: rng.randint(0, len(a))] + b[rng.randint(0, len(b)) :])
        else:
            words.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))))
    return sorted(words)


@needs_node
def test_made_up_words_agree_in_python_javascript_and_pystemmer() -> None:
    # Beyond the vocabulary: the suffix rules meet stems they were not tuned on.
    jobs = {lang: _made_up_words(lang, 3_000) for lang in ALGORITHMS}
    out = _node(jobs)["out"]
    assert isinstance(out, dict)
    for lang, words in jobs.items():
        ours = [snowball.stemmer(lang)(w) for w in words]
        assert ours == _pystemmer(lang, words), lang
        assert out[lang] == ours, lang
