"""Prompt building: boundary-aware cuts, numbered context blocks, budgets, grounding, templates."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scidx.errors import ConfigError
from scidx.index.retrieval import Match
from scidx.rag.pipeline import (
    DEFAULT_TEMPLATE,
    GROUNDING,
    NO_CONTEXT,
    PromptOptions,
    build_context,
    build_prompt,
    cut_text,
)


def match(i: int, text: str, **kw: object) -> Match:
    fields: dict[str, object] = {
        "id": f"page.md:sec{i}:0",
        "score": 1.0 / i,
        "source": "page.md",
        "anchor": f"sec{i}",
        "heading_path": ("Page", f"Section {i}"),
        "title": "Page",
        "text": text,
    }
    fields.update(kw)
    return Match(**fields)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# cut_text


def test_short_text_is_kept_whole() -> None:
    assert cut_text("  Short text.  ", 100) == "Short text."


def test_cut_prefers_a_block_boundary() -> None:
    text = "First paragraph is here.\n\nSecond paragraph. It goes on and on and on."
    assert cut_text(text, 40) == "First paragraph is here.\n…"


def test_cut_falls_back_to_a_sentence_end() -> None:
    text = "One sentence here. Another sentence follows. And a third one that is long."
    assert cut_text(text, 50) == "One sentence here. Another sentence follows.\n…"


def test_cut_falls_back_to_a_word_boundary() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    out = cut_text(text, 20)
    assert out == "alpha beta gamma\n…"
    assert len(out) <= 20


def test_a_single_overlong_word_is_dropped_not_split() -> None:
    assert cut_text("x" * 50, 20) == ""


def test_an_open_code_fence_is_closed() -> None:
    text = "Run this:\n\n```sh\n" + "\n".join(f"echo line {i}" for i in range(40)) + "\n```\n"
    out = cut_text(text, 120)
    assert len(out) <= 120
    assert out.count("```") == 2
    assert out.endswith("```\n…")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab .!?\n`~"), min_size=0, max_size=300),
    st.integers(min_value=1, max_value=200),
)
def test_cut_never_splits_a_word_and_respects_the_limit(text: str, limit: int) -> None:
    out = cut_text(text, limit)
    assert len(out) <= limit
    stripped = text.strip()
    if out in (stripped, ""):
        return  # kept whole, or no whole word fits
    assert out.endswith("…")
    body = out[: -len("…")].rstrip("\n")
    fence = re.search(r"\n(`{3,}|~{3,})$", body)
    if fence and not stripped.startswith(body):
        body = body[: fence.start()]
    assert stripped.startswith(body)
    if body:
        # the character after the cut in the source is whitespace: no word was split
        assert stripped[len(body)].isspace()


# ---------------------------------------------------------------------------------------------
# Context blocks


def test_blocks_are_numbered_with_heading_path_and_anchor() -> None:
    blocks = build_context([match(1, "Body one."), match(2, "Body two.")])
    assert [b.number for b in blocks] == [1, 2]
    assert blocks[0].text == "[1] Page > Section 1 (page.md#sec1)\nBody one."
    assert blocks[1].text.startswith("[2] Page > Section 2 (page.md#sec2)\n")


def test_blocks_use_the_url_when_the_index_has_one() -> None:
    m = match(1, "Body.", url="https://docs.example.com/page#sec1")
    assert build_context([m])[0].text.startswith(
        "[1] Page > Section 1 (https://docs.example.com/page#sec1)"
    )


def test_bodies_are_cut_to_the_snippet_limit() -> None:
    text = " ".join(f"Sentence number {i}." for i in range(100))
    block = build_context([match(1, text)], snippet_chars=200)[0]
    assert len(block.body) <= 200
    assert block.body.endswith("…")


def test_the_total_context_respects_its_budget() -> None:
    text = " ".join(f"Sentence number {i}." for i in range(60))
    matches = [match(i, text) for i in range(1, 8)]
    for budget in (300, 700, 1500, 5000):
        blocks = build_context(matches, snippet_chars=600, context_chars=budget)
        total = len("\n\n".join(b.text for b in blocks))
        assert total <= budget
        assert blocks, budget


def test_a_later_short_block_may_fill_the_rest_of_the_budget() -> None:
    long = " ".join(f"Sentence number {i}." for i in range(60))
    matches = [match(1, long), match(2, long), match(3, "Tiny.")]
    blocks = build_context(matches, snippet_chars=400, context_chars=520, min_block_chars=200)
    assert [b.match.anchor for b in blocks] == ["sec1", "sec3"]


def test_the_same_chunk_is_shown_once() -> None:
    blocks = build_context([match(1, "Body."), match(1, "Body.")])
    assert len(blocks) == 1


# ---------------------------------------------------------------------------------------------
# Prompts


def test_default_prompt_layout() -> None:
    prompt = build_prompt("How do I do it?", [match(1, "Do it like this.")])
    assert prompt.system == GROUNDING["strict"]
    assert prompt.user == (
        "Context from the documentation:\n\n"
        "[1] Page > Section 1 (page.md#sec1)\nDo it like this.\n\n"
        "Question: How do I do it?"
    )
    assert prompt.messages() == [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]
    assert prompt.sources() == ["[1] page.md#sec1"]


def test_no_matches_say_so_in_the_context() -> None:
    prompt = build_prompt("Anything?", [])
    assert NO_CONTEXT in prompt.user
    assert prompt.blocks == ()


@pytest.mark.parametrize("mode", ["strict", "preferred", "permissive"])
def test_grounding_modes(mode: str) -> None:
    prompt = build_prompt("Q?", [match(1, "B.")], PromptOptions(grounding=mode))
    assert prompt.system == GROUNDING[mode]
    assert prompt.grounding == mode


def test_grounding_texts_differ_in_what_they_allow() -> None:
    assert "do not guess" in GROUNDING["strict"]
    assert "general knowledge" in GROUNDING["preferred"]
    assert "say clearly" in GROUNDING["preferred"]
    assert "may also answer from general knowledge" in GROUNDING["permissive"]


def test_custom_template_and_braces_are_kept_literally() -> None:
    template = 'Q: {question}\n---\n{context}\n---\nAnswer in JSON like {"a": 1}.'
    prompt = build_prompt(
        "What does {context} mean?",
        [match(1, "Use {host} and {question} placeholders.")],
        PromptOptions(template=template),
    )
    assert prompt.user.startswith("Q: What does {context} mean?\n---\n[1] Page > Section 1")
    assert "Use {host} and {question} placeholders." in prompt.user
    assert prompt.user.endswith('Answer in JSON like {"a": 1}.')


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (PromptOptions(template="{question} only"), "no {context} placeholder"),
        (PromptOptions(template="nothing"), "no {context} and no {question} placeholder"),
        (PromptOptions(grounding="loose"), "unknown grounding mode 'loose'"),
        (PromptOptions(snippet_chars=0), "snippet_chars must be a positive integer"),
        (PromptOptions(context_chars=-1), "context_chars must be a positive integer"),
    ],
)
def test_invalid_options(options: PromptOptions, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_prompt("Q?", [], options)


def test_default_template_has_both_placeholders() -> None:
    assert "{context}" in DEFAULT_TEMPLATE and "{question}" in DEFAULT_TEMPLATE
