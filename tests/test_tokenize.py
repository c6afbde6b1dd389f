"""scidx.tokenize: the shared, versioned tokeniser and its Snowball English stemmer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scidx.tokenize import (
    STOP_WORDS,
    TOKENIZER_VERSION,
    embedding_text,
    normalize,
    stem,
    tokenize,
    words,
)
from scidx.tokenize import _porter2 as _porter2  # the algorithm itself, without the memo


def test_version() -> None:
    assert TOKENIZER_VERSION == "scidx-tok-3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How do I configure CORS?", ["configur", "cor"]),
        ("kubectl apply --force", ["kubectl", "appli", "forc"]),
        ("max_chunk_chars", ["max", "chunk", "char", "max_chunk_chars"]),
        ("__init__", ["init"]),
        ("IL-6 and p53 in COVID-19", ["il", "6", "p53", "covid", "19"]),
        ("Python 3 is not 2", ["python", "3", "not", "2"]),
        ("It's a dog's life", ["dog", "life"]),
        ("ＦＵＬＬ-width Ｔｅｘｔ", ["full", "width", "text"]),
        ("Straße", ["strass"]),
        ("naïve café", ["naïve", "café"]),
        ("", []),
        ("the of and a", []),
        ("x y z", []),
    ],
)
def test_tokenize_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_tokenize_is_repeatable_and_keeps_order_and_repeats() -> None:
    text = "Cats chase cats; max_chunk_chars and max_chunk_chars."
    first = tokenize(text)
    assert first == tokenize(text)
    assert first == [
        "cat",
        "chase",
        "cat",
        "max",
        "chunk",
        "char",
        "max_chunk_chars",
        "max",
        "chunk",
        "char",
        "max_chunk_chars",
    ]


def test_normalize_and_words() -> None:
    assert normalize("ＣＯＲＳ Straße") == "cors strasse"
    assert words("Hello, world_wide-web!") == ["hello", "world_wide", "web"]


def test_stop_words_are_lower_case_and_keep_meaningful_words() -> None:
    assert all(w == w.casefold() for w in STOP_WORDS)
    assert {"the", "how", "do", "i", "with"} <= STOP_WORDS
    assert not {"not", "no", "new", "first", "all", "up", "down"} & STOP_WORDS


# Published Snowball English examples (snowballstem.org vocabulary / output).
SNOWBALL = {
    # The Snowball 3 cases scidx-tok-2 got wrong: "past" counts as a short syllable, and only
    # a/e/o + double as the whole word keeps the double.
    "paste": "paste",
    "pasted": "paste",
    "pastes": "paste",
    "pasting": "paste",
    "past": "past",
    "pastness": "past",
    "immed": "im",
    "uffed": "uf",
    "egged": "egg",
    "consign": "consign",
    "consigned": "consign",
    "consigning": "consign",
    "consignment": "consign",
    "consist": "consist",
    "consisted": "consist",
    "consistency": "consist",
    "consistent": "consist",
    "consistently": "consist",
    "consisting": "consist",
    "consists": "consist",
    "consolation": "consol",
    "consolations": "consol",
    "consolatory": "consolatori",
    "console": "consol",
    "consoled": "consol",
    "consoles": "consol",
    "consolidate": "consolid",
    "consolidated": "consolid",
    "consolidating": "consolid",
    "consoling": "consol",
    "knack": "knack",
    "knackeries": "knackeri",
    "knacks": "knack",
    "knag": "knag",
    "knave": "knave",
    "knaves": "knave",
    "knavish": "knavish",
    "kneaded": "knead",
    "kneading": "knead",
    "knee": "knee",
    "kneel": "kneel",
    "kneeled": "kneel",
    "kneeling": "kneel",
    "kneels": "kneel",
    "knees": "knee",
    "knell": "knell",
    "knelt": "knelt",
    "knew": "knew",
    "knick": "knick",
    "knif": "knif",
    "knife": "knife",
    "knight": "knight",
    "knightly": "knight",
    "knights": "knight",
    "knit": "knit",
    "knits": "knit",
    "knitted": "knit",
    "knitting": "knit",
    "knives": "knive",
    "knob": "knob",
    "knobs": "knob",
    "knock": "knock",
    "knocked": "knock",
    "knocker": "knocker",
    "knockers": "knocker",
    "knocking": "knock",
    "knocks": "knock",
    "knopp": "knopp",
    "knot": "knot",
    "knots": "knot",
    # Exceptions and special cases.
    "skies": "sky",
    "dying": "die",
    "news": "news",
    "generously": "generous",
    "generate": "generat",
    "communication": "communic",
    "international": "internat",
    "organization": "organiz",
    "universal": "universal",
    "inning": "inning",
    "proceeding": "proceed",
    "cries": "cri",
    "ties": "tie",
    "gaps": "gap",
    "gas": "gas",
    "hopping": "hop",
    "hoped": "hope",
    "added": "add",
    "agreed": "agre",
    "happy": "happi",
    "cry": "cri",
    "say": "say",
    "youth": "youth",
    "pathologists": "patholog",
    "running": "run",
    "abilities": "abil",
    "fluently": "fluentli",
}


@pytest.mark.parametrize(("word", "expected"), sorted(SNOWBALL.items()))
def test_snowball_english(word: str, expected: str) -> None:
    assert stem(word) == expected


def _shared_vocabulary(shared: Path) -> list[str]:
    """Every distinct ASCII letter run of the shared corpora and SciFact, lower-cased."""
    pattern = re.compile(rb"[A-Za-z]+")
    found: set[bytes] = set()
    for root in (shared / "corpora", shared / "beir" / "scifact"):
        for path in sorted(root.rglob("*")):
            if path.is_file():
                found.update(pattern.findall(path.read_bytes().lower()))
    return sorted(w.decode("ascii") for w in found)


def test_stemmer_agrees_with_pystemmer_on_every_shared_word(shared_dir: Path) -> None:
    # PyStemmer (the Snowball project's C stemmers, in the test extra) is the oracle. The
    # vocabulary is every word of every shared corpus, so rare suffix cases are covered.
    import Stemmer

    vocab = _shared_vocabulary(shared_dir)
    assert len(vocab) >= 50_000
    theirs = Stemmer.Stemmer("english").stemWords(vocab)
    disagreements = [
        (w, ours, ref) for w, ref in zip(vocab, theirs, strict=True) if (ours := _porter2(w)) != ref
    ]
    assert disagreements == []


def test_embedding_text() -> None:
    assert embedding_text("Guide", ["Guide", "Install"], "body") == "Guide\nInstall\n\nbody"
    assert embedding_text("Guide", ["Setup"], "body") == "Guide\nSetup\n\nbody"
    assert embedding_text("", ["A", "B"], "body") == "A\nB\n\nbody"
    assert embedding_text("", [], "body") == "body"
    assert embedding_text("T", ["", "X"], "b") == "T\nX\n\nb"


def test_term_spans_memo_keeps_no_giant_words() -> None:
    """A hostile chunk's megabyte "word" is tokenized, not remembered."""
    from scidx import tokenize as tok

    giant = "x" * 100_000
    assert tok.term_spans(f"read {giant} read") == [
        (0, 4, ("read",)),
        (5, 100_005, (giant,)),
        (100_006, 100_010, ("read",)),
    ]
    assert giant not in tok._SPAN_CACHE and "read" in tok._SPAN_CACHE
    assert tok.run_terms(giant) == (giant,)
