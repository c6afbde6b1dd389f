"""scidx.tokenize: the shared, versioned tokeniser and its Snowball English stemmer."""

from __future__ import annotations

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


def test_version() -> None:
    assert TOKENIZER_VERSION == "scidx-tok-1"


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


def test_agrees_with_pystemmer_when_installed() -> None:
    stemmer_mod = pytest.importorskip("Stemmer")
    reference = stemmer_mod.Stemmer("english")
    vocab = sorted(
        set(
            words(
                """Running runners ran easily fairly generalizations oscillators caresses ponies
                caress cats feed agreed plastered bled motoring sing conflated troubled sized
                hopping tanned falling hissing fizzed failing filing happy sky relational
                conditional rational valenci hesitanci digitizer conformabli radicalli
                differentli vileli analogousli vietnamization predication operator feudalism
                decisiveness hopefulness callousness formaliti sensitiviti sensibiliti
                triplicate formative formalize electriciti electrical hopeful goodness revival
                allowance inference airliner gyroscopic adjustable defensible irritant
                replacement adjustment dependent adoption homologou communism activate
                angulariti homologous effective bowdlerize probate rate cease controll roll
                configuration configured containers kubernetes deployments namespaces
                authentication authorization clusters replicas schedulers volumes"""
            )
        )
    )
    mine = [stem(w) for w in vocab]
    theirs = reference.stemWords(vocab)
    disagreements = [(w, a, b) for w, a, b in zip(vocab, mine, theirs, strict=True) if a != b]
    assert disagreements == []


def test_embedding_text() -> None:
    assert embedding_text("Guide", ["Guide", "Install"], "body") == "Guide\nInstall\n\nbody"
    assert embedding_text("Guide", ["Setup"], "body") == "Guide\nSetup\n\nbody"
    assert embedding_text("", ["A", "B"], "body") == "A\nB\n\nbody"
    assert embedding_text("", [], "body") == "body"
    assert embedding_text("T", ["", "X"], "b") == "T\nX\n\nb"
