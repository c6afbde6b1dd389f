"""`ask` with the real openai SDK against a local chat-completions server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scidx.index.index import Index, load_bytes
from scidx.index.retrieval import IndexRetriever
from scidx.pack.packer import pack_records
from scidx.rag.chat import (
    ChatError,
    ChatMissingKeyError,
    ChatProviderError,
    ask,
    complete,
)
from scidx.rag.pipeline import Pipeline, PromptOptions
from support.chat_server import ChatServer, Reply

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


@pytest.fixture
def index() -> Iterator[Index]:
    records = [
        {
            "id": "config.md:agent-options:0",
            "source": "config.md",
            "anchor": "agent-options",
            "title": "Configuration",
            "headingPath": ["Configuration", "Agent options"],
            "text": "batch_size: lines per batch (default 5000). flush_interval: seconds.",
        },
        {
            "id": "install.md:linux:0",
            "source": "install.md",
            "anchor": "linux",
            "title": "Install",
            "headingPath": ["Install", "Linux"],
            "text": "Download the archive and put the binary on your PATH.",
        },
    ]
    result = pack_records(records, None, use_cache=False)
    assert result.data is not None
    idx = load_bytes(result.data, source="docs.scidx")
    yield idx
    idx.close()


def test_ask_sends_the_cited_prompt_and_returns_the_answer(
    server: ChatServer, key: str, index: Index
) -> None:
    pipe = Pipeline(IndexRetriever(index))
    answer = ask(pipe, "default batch size", k=1, mode="keyword", base_url=server.base_url)
    assert answer.text == "Set `batch_size` in the [agent] table [1]."
    assert answer.model == "gpt-4o-mini"
    assert answer.usage == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert answer.sources() == ["[1] config.md#agent-options"]
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {key}"
    body = request.body
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.0
    system, user = body["messages"]
    assert (
        system["role"] == "system" and "Answer only from the numbered context" in system["content"]
    )
    assert user["content"] == answer.prepared.prompt.user
    assert "[1] Configuration > Agent options (config.md#agent-options)" in user["content"]
    assert user["content"].endswith("Question: default batch size")


def test_model_and_grounding_are_passed_through(server: ChatServer, key: str, index: Index) -> None:
    pipe = Pipeline(IndexRetriever(index))
    ask(
        pipe,
        "linux",
        mode="keyword",
        model="local-model",
        options=PromptOptions(grounding="permissive"),
        base_url=server.base_url,
    )
    body = server.requests[0].body
    assert body["model"] == "local-model"
    assert "general knowledge" in body["messages"][0]["content"]


def test_base_url_comes_from_the_environment(
    server: ChatServer, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    text, _, _ = complete([{"role": "user", "content": "hi"}])
    assert text.startswith("Set `batch_size`")
    assert len(server.requests) == 1


def test_missing_key_fails_before_any_request(server: ChatServer, index: Index) -> None:
    pipe = Pipeline(IndexRetriever(index))
    with pytest.raises(ChatMissingKeyError) as info:
        ask(pipe, "batch", base_url=server.base_url)
    assert "OPENAI_API_KEY is not set" in str(info.value)
    assert "toolup-rag query --show-prompt" in str(info.value)
    assert info.value.exit_code == 2
    assert server.requests == []


def test_429_is_a_clear_provider_error(server: ChatServer, key: str) -> None:
    server.script(Reply(status=429, message="Rate limit reached"))
    with pytest.raises(ChatProviderError) as info:
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url, max_retries=0)
    assert str(info.value) == (
        f"the chat provider at {server.base_url} is rate limiting or out of quota (HTTP 429): "
        "Rate limit reached; wait and retry, or check the account's limits and billing"
    )
    assert info.value.exit_code == 2


def test_429_then_success_is_retried_by_the_sdk(server: ChatServer, key: str) -> None:
    server.script(Reply(status=429, retry_after="0"))
    text, _, _ = complete([{"role": "user", "content": "hi"}], base_url=server.base_url)
    assert text
    assert len(server.requests) == 2


def test_persistent_5xx_fails_after_retries(server: ChatServer, key: str) -> None:
    server.script(*[Reply(status=503, message="overloaded")] * 3)
    with pytest.raises(ChatProviderError) as info:
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url, max_retries=2)
    assert str(info.value) == (
        f"the chat provider at {server.base_url} failed with HTTP 503: overloaded; "
        "this is a server-side error, retry later"
    )
    assert len(server.requests) == 3


def test_401_names_the_key_variable(server: ChatServer, key: str) -> None:
    server.script(Reply(status=401, message="Incorrect API key provided"))
    with pytest.raises(ChatProviderError, match="rejected the API key .*check OPENAI_API_KEY"):
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url)


def test_the_key_never_leaks_into_messages(server: ChatServer, key: str) -> None:
    server.script(Reply(status=400, message="bad key {key} and sk-otherkey123456789"))
    with pytest.raises(ChatError) as info:
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url)
    text = str(info.value)
    assert key not in text and "sk-otherkey123456789" not in text
    assert "***" in text
    # the error chain is cut, so a traceback cannot show the SDK's exception either
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_unreachable_server(key: str) -> None:
    with ChatServer() as s:
        url = s.base_url
    with pytest.raises(ChatProviderError, match=f"cannot reach the chat provider at {url}"):
        complete([{"role": "user", "content": "hi"}], base_url=url, max_retries=0)


def test_invalid_answers(server: ChatServer, key: str) -> None:
    server.script(Reply(malformed=True))
    with pytest.raises(ChatProviderError, match="not valid JSON"):
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url)
    server.script(Reply(no_choices=True))
    with pytest.raises(ChatProviderError, match="returned no answer text"):
        complete([{"role": "user", "content": "hi"}], base_url=server.base_url)


def test_user_info_in_the_base_url_is_not_shown(server: ChatServer, key: str) -> None:
    server.script(Reply(status=500))
    url = server.base_url.replace("http://", "http://user:secret@")
    with pytest.raises(ChatProviderError) as info:
        complete([{"role": "user", "content": "hi"}], base_url=url, max_retries=0)
    assert "secret" not in str(info.value)
