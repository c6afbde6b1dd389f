"""The OpenAI provider, driven through the real ``openai`` SDK against a local fake server.

No SDK object is mocked: :mod:`support.openai_server` speaks the embeddings API over HTTP on
127.0.0.1 and every test points ``base_url`` at it. Fault tests script the server's answers and
keep the retry backoff tiny through constructor arguments, so the whole file runs in a few
seconds.
"""

from __future__ import annotations

import _thread
import logging
import threading
import time
import traceback
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from scidx.embed.openai import (
    OpenAIEmbedder,
    estimate_tokens,
    from_config,
    query_embedder_from_stamp,
)
from scidx.errors import ConfigError, MissingAPIKeyError, ProviderError
from scidx.pack.cache import CachedEmbedder, EmbeddingCache
from support.openai_server import Behaviour, FakeOpenAIServer, fake_vector

# Distinctive, so a leak anywhere is unambiguous.
FAKE_KEY = "sk-scidxLEAKCANARY-7Hq2ZpW9xK4mN8vB"
DIMS = 16


@pytest.fixture(autouse=True)
def _close_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Close every embedder that opened a client: the caller owns an embedder's connection
    pool, and one left to the collector warns (an error here) in whichever test comes next."""
    opened: list[OpenAIEmbedder] = []
    real = OpenAIEmbedder._get_client  # noqa: SLF001

    def tracked(self: OpenAIEmbedder, pending: int | None = None) -> Any:
        opened.append(self)
        return real(self, pending)

    monkeypatch.setattr(OpenAIEmbedder, "_get_client", tracked)
    yield
    for emb in opened:
        emb.close()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return FAKE_KEY


def make(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIEmbedder:
    """An embedder pointed at ``server`` with tiny backoff, so retries cost milliseconds."""
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "batch_size": 8,
        "concurrency": 4,
        "timeout": 5.0,
        "max_retries": 3,
        "backoff_base": 0.01,
        "backoff_max": 0.02,
    }
    options.update(kwargs)
    model = options.pop("model", "text-embedding-3-small")
    dims = options.pop("dimensions", DIMS)
    return OpenAIEmbedder(model, dims, **options)


def expected(texts: list[str], dims: int = DIMS) -> np.ndarray:
    """The oracle: the server's vectors, L2-normalised in float64, rounded to float32."""
    raw = np.stack([fake_vector(t, dims) for t in texts])
    return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)


TEXTS = [f"chunk {i}: path parameters, query parameters and bodies ({i * 7})" for i in range(50)]


def worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("scidx-openai")]


def wait_no_workers(limit: float = 3.0) -> list[threading.Thread]:
    deadline = time.monotonic() + limit
    while worker_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    return worker_threads()


# -- happy path ------------------------------------------------------------------------------


def test_concurrent_batches_match_the_oracle(server: FakeOpenAIServer, key: str) -> None:
    server.latency = 0.03
    emb = make(server)
    vectors = emb.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.flags.c_contiguous
    np.testing.assert_allclose(vectors, expected(TEXTS), rtol=0, atol=1e-6)
    requests = server.requests
    assert len(requests) == 7  # ceil(50 / 8)
    assert sorted(len(r.inputs) for r in requests) == [2, 8, 8, 8, 8, 8, 8]
    assert {(r.model, r.dimensions, r.encoding_format) for r in requests} == {
        ("text-embedding-3-small", DIMS, "float")
    }
    assert all(r.authorization == f"Bearer {FAKE_KEY}" for r in requests)
    assert 1 < server.max_in_flight <= 4
    assert emb.stamp() == {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "dimensions": DIMS,
        "normalization": "l2",
    }
    assert not wait_no_workers()


def test_output_is_independent_of_arrival_order(server: FakeOpenAIServer, key: str) -> None:
    in_order = make(server, concurrency=1).embed(TEXTS)
    server.shuffle = True  # every response lists its items in a shuffled order
    server.latency = 0.01
    shuffled = make(server, concurrency=8, batch_size=5).embed(TEXTS)
    assert in_order.tobytes() == shuffled.tobytes()


def test_embed_iter_yields_every_position_once(server: FakeOpenAIServer, key: str) -> None:
    seen: list[int] = []
    for positions, vectors in make(server, batch_size=7).embed_iter(TEXTS):
        assert vectors.shape == (len(positions), DIMS)
        np.testing.assert_allclose(vectors, expected([TEXTS[p] for p in positions]), atol=1e-6)
        seen.extend(positions)
    assert sorted(seen) == list(range(len(TEXTS)))


def test_batches_respect_the_token_budget(server: FakeOpenAIServer, key: str) -> None:
    texts = ["x" * 300] * 3 + ["y" * 300] * 3  # 100 estimated tokens each
    make(server, batch_size=100, max_tokens_per_request=250).embed(texts)
    assert [len(r.inputs) for r in server.requests] == [2, 2, 2]


def test_empty_input_makes_no_request(server: FakeOpenAIServer) -> None:
    assert make(server).embed([]).shape == (0, DIMS)
    assert server.request_count == 0


def test_empty_text_is_sent_as_a_space(server: FakeOpenAIServer, key: str) -> None:
    make(server).embed(["", "a"])
    assert server.requests[0].inputs == [" ", "a"]


# -- faults that are retried -----------------------------------------------------------------


def test_429_honours_retry_after(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=429, retry_after="0.2"))
    emb = make(server, backoff_base=0.0, backoff_max=0.0)
    start = time.monotonic()
    vectors = emb.embed(TEXTS[:3])
    assert time.monotonic() - start >= 0.2
    assert server.request_count == 2
    np.testing.assert_allclose(vectors, expected(TEXTS[:3]), atol=1e-6)


def test_retry_after_forms_and_cap(server: FakeOpenAIServer) -> None:
    emb = make(server, max_retry_after=5.0)
    assert emb._retry_after({"retry-after": "1.5"}) == 1.5
    assert emb._retry_after({"retry-after-ms": "250"}) == 0.25
    assert emb._retry_after({"retry-after": "3600"}) == 5.0  # capped
    assert emb._retry_after({"retry-after": "soon"}) is None
    assert emb._retry_after({}) is None
    in_3s = emb._retry_after({"retry-after": formatdate(time.time() + 3, usegmt=True)})
    assert in_3s is not None and 1.0 <= in_3s <= 3.0
    past = emb._retry_after({"retry-after": formatdate(time.time() - 60, usegmt=True)})
    assert past == 0.0


def test_huge_retry_after_is_capped(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=429, retry_after="3600"))
    start = time.monotonic()
    make(server, max_retry_after=0.05).embed(TEXTS[:2])
    assert time.monotonic() - start < 2.0
    assert server.request_count == 2


def test_500_then_success(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=500), Behaviour(status=503))
    vectors = make(server).embed(TEXTS[:3])
    assert server.request_count == 3
    np.testing.assert_allclose(vectors, expected(TEXTS[:3]), atol=1e-6)


def test_timeout_then_success(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(sleep=2.0))
    start = time.monotonic()
    vectors = make(server, timeout=0.25).embed(TEXTS[:3])
    assert time.monotonic() - start < 1.5
    assert server.request_count == 2
    np.testing.assert_allclose(vectors, expected(TEXTS[:3]), atol=1e-6)


def test_connection_refused_is_retried_then_reported(key: str) -> None:
    with FakeOpenAIServer() as srv:
        base_url = srv.base_url
    # The port is closed now: every attempt is a connection error.
    emb = OpenAIEmbedder(
        "text-embedding-3-small", DIMS, base_url=base_url, max_retries=2, backoff_base=0.01
    )
    with pytest.raises(ProviderError, match="connection error .* after 3 attempts"):
        emb.embed(["a"])


def test_persistent_500_fails_after_retries(server: FakeOpenAIServer, key: str) -> None:
    server.script(*[Behaviour(status=500, message="upstream exploded")] * 4)
    emb = make(server, max_retries=3)
    with pytest.raises(ProviderError) as info:
        emb.embed(TEXTS[:3])
    assert server.request_count == 4
    assert str(info.value) == (
        f"OpenAI embeddings failed: HTTP 500 Internal Server Error from {server.base_url} for "
        "batch 1 of 1 (inputs 0-2, model text-embedding-3-small) after 4 attempts: upstream "
        "exploded. 0 of 3 inputs were embedded. To resume, rerun the same command: finished "
        "batches are cached and only the missing 3 chunks will be sent."
    )
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_failure_stops_new_requests_and_keeps_finished_batches(
    server: FakeOpenAIServer, key: str
) -> None:
    # concurrency=1 makes the order deterministic: batches 1 and 2 succeed, 3 fails for good.
    server.script(Behaviour(), Behaviour(), Behaviour(status=500), Behaviour(status=500))
    emb = make(server, batch_size=10, concurrency=1, max_retries=1)
    got: list[int] = []
    with pytest.raises(ProviderError, match="only the missing 30 chunks will be sent"):
        for positions, _ in emb.embed_iter(TEXTS):
            got.extend(positions)
    assert got == list(range(20))
    assert server.request_count == 4  # batches 4 and 5 were never sent
    assert not wait_no_workers()


# -- faults that are not retried -------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "detail"),
    [
        (Behaviour(malformed=True), "the body is not valid JSON (Expecting value at byte 48)"),
        (Behaviour(drop_item=True), "2 embeddings for 3 inputs"),
        (Behaviour(duplicate_index=True), "index 0 appears twice"),
        (
            Behaviour(extra_dims=1),
            'embedding 0 has 17 dimensions, expected 16 (check "dimensions" and "model" in '
            "staticcorpus.json)",
        ),
        (Behaviour(nan=True), "embedding 0 contains NaN or infinite values"),
    ],
    ids=["malformed-json", "wrong-count", "duplicate-index", "wrong-dimensions", "nan"],
)
def test_invalid_responses_fail_without_retry(
    server: FakeOpenAIServer, key: str, behaviour: Behaviour, detail: str
) -> None:
    server.script(behaviour)
    with pytest.raises(ProviderError) as info:
        make(server).embed(TEXTS[:3])
    assert server.request_count == 1
    assert str(info.value) == (
        f"OpenAI embeddings failed: invalid response from {server.base_url} for batch 1 of 1 "
        f"(inputs 0-2, model text-embedding-3-small) after 1 attempt: {detail}. 0 of 3 inputs "
        "were embedded. To resume, rerun the same command: finished batches are cached and only "
        "the missing 3 chunks will be sent."
    )


def test_401_is_not_retried_and_names_the_fix(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=401, message="Incorrect API key provided: {key}."))
    with pytest.raises(ProviderError) as info:
        make(server).embed(TEXTS[:3])
    assert server.request_count == 1
    message = str(info.value)
    assert "HTTP 401 Unauthorized" in message
    assert "Incorrect API key provided: ***." in message
    assert "Check that OPENAI_API_KEY holds a valid key for this server." in message


def test_404_names_model_and_base_url(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=404, message="The model `nope` does not exist"))
    with pytest.raises(ProviderError) as info:
        make(server).embed(["a"])
    assert str(info.value).startswith(
        f"OpenAI embeddings failed: HTTP 404 Not Found from {server.base_url} for batch 1 of 1 "
        "(inputs 0-0, model text-embedding-3-small) after 1 attempt: The model `nope` does not "
        'exist. Check "model" and "baseUrl" in staticcorpus.json (an OpenAI-compatible baseUrl '
        "usually ends in /v1) and what the key may access. 0 of 1 inputs were embedded."
    )


def test_400_is_not_retried(server: FakeOpenAIServer, key: str) -> None:
    server.script(Behaviour(status=400, message="'input' is invalid"))
    with pytest.raises(ProviderError, match="HTTP 400 Bad Request .* 'input' is invalid"):
        make(server).embed(TEXTS[:3])
    assert server.request_count == 1


def test_unknown_model_dimensions_are_validated_not_sent(
    server: FakeOpenAIServer, key: str
) -> None:
    emb = make(server, model="nomic-embed-text", dimensions=DIMS)
    # The server's native length is 1536 and nothing asks it to shorten: a mismatch.
    with pytest.raises(ProviderError, match="has 1536 dimensions, expected 16"):
        emb.embed(["a"])
    assert server.requests[0].dimensions is None


# -- the key ---------------------------------------------------------------------------------


def test_missing_key_fails_before_any_request(server: FakeOpenAIServer) -> None:
    emb = make(server)
    with pytest.raises(MissingAPIKeyError) as info:
        emb.embed(TEXTS)
    assert server.request_count == 0
    assert str(info.value) == (
        '"embeddingProvider": "openai" needs an API key: 50 chunks need embeddings that are not '
        "cached, and OPENAI_API_KEY is not set. Fix: export OPENAI_API_KEY=... (read from the "
        'environment only, never written anywhere), or use "embeddingProvider": "hashing" in '
        "staticcorpus.json for an offline index. A server that needs no key (Ollama, LM Studio) "
        "still needs a placeholder value."
    )
    with pytest.raises(MissingAPIKeyError):
        emb.check_ready()


def test_key_is_read_when_needed_not_at_construction(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = make(server)  # constructed without a key: fine
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    emb.check_ready()
    emb.embed(["a"])
    assert server.requests[0].authorization == f"Bearer {FAKE_KEY}"


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def test_key_never_leaks(
    server: FakeOpenAIServer, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and httpx's included
    warnings: list[str] = []
    explicit = make(server, api_key=FAKE_KEY, on_warning=warnings.append, max_input_tokens=5)
    texts: list[object] = [repr(explicit), repr(vars(explicit)), str(explicit.stamp())]
    echo = "Incorrect API key provided: {key}. Also sk-proj-abcdEFGH1234****wxyz."
    server.script(
        Behaviour(status=401, message=echo),
        *[Behaviour(status=500, message=echo)] * 4,
        Behaviour(status=400, message=echo),
        Behaviour(malformed=True),
    )
    failures: list[BaseException] = []
    for emb in (explicit, make(server)):
        for _ in range(3):
            try:
                emb.embed(["a text long enough to be truncated at five tokens"])
            except ProviderError as exc:
                failures.append(exc)
    assert len(failures) == 4  # 401, 500 x4, 400, malformed; then two successes
    for failure in failures:
        for exc in _chain(failure):
            texts += [str(exc), repr(exc), exc.args]
        texts.append("".join(traceback.format_exception(failure)))
    texts += [r.getMessage() for r in caplog.records]
    texts += [repr(r.args) for r in caplog.records]
    blob = "\n".join(map(str, texts))
    assert "Incorrect API key provided: ***. Also sk-***." in blob
    assert FAKE_KEY not in blob
    assert "abcdEFGH1234" not in blob
    assert warnings and all(FAKE_KEY not in w for w in warnings)
    assert caplog.records, "the SDK and the provider should have logged something"


def test_scrub_removes_key_shaped_strings(server: FakeOpenAIServer, key: str) -> None:
    emb = make(server)
    assert emb._scrub(f"key {FAKE_KEY} and sk-proj-AAAA****BBBB") == "key *** and sk-***"


# -- truncation, estimates -------------------------------------------------------------------


def test_long_inputs_are_truncated_with_a_warning(
    server: FakeOpenAIServer, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    warnings: list[str] = []
    emb = make(server, max_input_tokens=10, on_warning=warnings.append)
    long_text = "Título " + "é" * 40  # 88 bytes, ~30 tokens by the estimate
    with caplog.at_level(logging.WARNING, logger="scidx.embed.openai"):
        vectors = emb.embed(["short", long_text])
    sent = server.requests[0].inputs[1]
    assert len(sent.encode()) <= 30 and long_text.startswith(sent)
    np.testing.assert_allclose(vectors, expected(["short", sent]), atol=1e-6)
    assert warnings == [
        f"input 1 ('Título {'é' * 40}') is about 30 tokens, over the 10-token limit of "
        f"text-embedding-3-small; only its first {len(sent)} characters are sent for embedding "
        "(the stored text stays whole)"
    ]
    assert [r.getMessage() for r in caplog.records] == warnings


def test_token_limit_400_is_resent_strictly_truncated(server: FakeOpenAIServer, key: str) -> None:
    # 27 bytes estimates at 9 tokens, under the limit of 10, but the server says it is too long.
    server.script(Behaviour(status=400, message="maximum context length is 10 tokens"))
    warnings: list[str] = []
    vectors = make(server, max_input_tokens=10, on_warning=warnings.append).embed(["a" * 27, "ok"])
    assert server.request_count == 2
    assert server.requests[1].inputs == ["a" * 10, "ok"]
    np.testing.assert_allclose(vectors, expected(["a" * 10, "ok"]), atol=1e-6)
    assert len(warnings) == 1 and "resending with every input cut to 10 bytes" in warnings[0]


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 1
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("é" * 3) == 2  # 6 UTF-8 bytes


def test_estimate_sends_nothing_and_needs_no_key(server: FakeOpenAIServer) -> None:
    texts = ["a" * 300] * 10  # 100 tokens each
    assert make(server, batch_size=4).estimate(texts) == {
        "chunks": 10,
        "requests": 3,
        "tokens": 1000,
        "cost_usd": 0.00002,
    }
    large = OpenAIEmbedder("text-embedding-3-large").estimate(["a" * 3_000_000])
    assert large["tokens"] == 8191  # truncated to the model's limit
    assert large["cost_usd"] == round(8191 / 1e6 * 0.13, 6)
    assert OpenAIEmbedder("local-model", 8).estimate(["abc"])["cost_usd"] is None
    assert make(server).estimate([]) == {"chunks": 0, "requests": 0, "tokens": 0, "cost_usd": 0.0}
    assert server.request_count == 0


# -- cancellation ----------------------------------------------------------------------------


def test_keyboard_interrupt_in_the_consumer_cancels_the_rest(
    server: FakeOpenAIServer, key: str
) -> None:
    server.latency = 0.02
    emb = make(server, batch_size=2, concurrency=2)
    with pytest.raises(KeyboardInterrupt):
        for _positions, _vectors in emb.embed_iter(TEXTS):
            raise KeyboardInterrupt
    assert not wait_no_workers()
    sent = server.request_count
    time.sleep(0.1)
    assert server.request_count == sent < 25  # nothing more was sent after the interrupt


def test_ctrl_c_mid_run_propagates_and_leaves_no_threads(key: str) -> None:
    def interrupt(number: int) -> None:
        if number == 3:
            _thread.interrupt_main()  # what Ctrl-C does to the main thread

    # A latency long next to a loaded machine's scheduling delays: the bounds below then
    # tell an early stop from a full run (with 0.1 s they failed now and then in full-suite
    # runs on a loaded machine).
    with FakeOpenAIServer(latency=0.25, on_request=interrupt) as srv:
        emb = make(srv, batch_size=2, concurrency=2)
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            emb.embed(TEXTS)  # 25 batches, ~3.2 s if it ran to the end
        assert time.monotonic() - start < 2.0
        assert not wait_no_workers()
        assert srv.request_count < 8


# -- construction, config, queries -----------------------------------------------------------


def test_dimensions_rules() -> None:
    assert OpenAIEmbedder().dimensions == 1536
    assert OpenAIEmbedder("text-embedding-3-large").dimensions == 3072
    assert OpenAIEmbedder("text-embedding-ada-002").dimensions == 1536
    with pytest.raises(ConfigError, match="cannot shorten its vectors"):
        OpenAIEmbedder("text-embedding-ada-002", 256)
    with pytest.raises(ConfigError, match="returns at most 1536 dimensions"):
        OpenAIEmbedder("text-embedding-3-small", 2000)
    with pytest.raises(ConfigError, match='set "dimensions" in staticcorpus.json'):
        OpenAIEmbedder("nomic-embed-text")
    with pytest.raises(ConfigError, match='"concurrency" must be an integer >= 1'):
        OpenAIEmbedder(concurrency=0)
    with pytest.raises(ConfigError, match='"timeout" must be positive'):
        OpenAIEmbedder(timeout=0)


def test_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAIEmbedder().base_url == "http://127.0.0.1:9/v1"
    assert OpenAIEmbedder(base_url="http://127.0.0.1:8/v1").base_url == "http://127.0.0.1:8/v1"


def test_credentials_in_base_url_are_not_shown() -> None:
    emb = OpenAIEmbedder(base_url="http://user:secret@127.0.0.1:9/v1")
    assert "secret" not in repr(emb)


def test_from_config(server: FakeOpenAIServer, key: str) -> None:
    config = SimpleNamespace(
        embedding_provider="openai",
        model="text-embedding-3-large",
        model_id="text-embedding-3-large",
        dimensions=256,
        base_url=server.base_url,
        batch_size=3,
        concurrency=2,
        timeout=7.5,
    )
    emb = from_config(config)
    assert repr(OpenAIEmbedder.from_config(config)) == repr(emb)
    assert (emb.model_id, emb.dimensions, emb.batch_size, emb.concurrency, emb.timeout) == (
        "text-embedding-3-large",
        256,
        3,
        2,
        7.5,
    )
    emb.embed(["a", "b", "c", "d"])
    assert sorted(len(r.inputs) for r in server.requests) == [1, 3]
    defaults = from_config(SimpleNamespace(model=None, dimensions=None))
    assert (defaults.model_id, defaults.dimensions) == ("text-embedding-3-small", 1536)


def test_query_embedder_from_stamp_caches_queries(server: FakeOpenAIServer, key: str) -> None:
    stamp = {"provider": "openai", "model": "text-embedding-3-small", "dimensions": 32}
    emb = query_embedder_from_stamp(stamp, base_url=server.base_url)
    assert query_embedder_from_stamp(stamp, base_url=server.base_url) is emb
    first = emb.embed_query("how do I declare a path parameter?")
    again = emb.embed_query("how do I declare a path parameter?")
    assert first is again and first.shape == (32,)
    assert server.request_count == 1
    np.testing.assert_allclose(first, expected(["how do I declare a path parameter?"], 32)[0])
    with pytest.raises(ConfigError, match="is not an OpenAI stamp"):
        query_embedder_from_stamp({"provider": "hashing", "model": "hashing-v1", "dimensions": 8})


# -- through the disk cache ------------------------------------------------------------------


def test_cache_sends_only_misses(server: FakeOpenAIServer, key: str, tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache:
        cached = CachedEmbedder(make(server), cache)
        first = cached.embed(TEXTS[:20])
        assert server.input_count == 20
        server.reset()
        both = cached.embed(TEXTS[:30])  # 20 known, 10 new
        assert server.input_count == 10
        assert sorted(i for r in server.requests for i in r.inputs) == sorted(TEXTS[20:30])
        np.testing.assert_array_equal(both[:20], first)
        np.testing.assert_allclose(both, expected(TEXTS[:30]), atol=1e-6)


def test_failed_run_keeps_finished_batches_and_rerun_sends_the_rest(
    server: FakeOpenAIServer, key: str, tmp_path: Path
) -> None:
    # Batches of 10, one at a time: 1 and 2 succeed, 3 fails for good (500 twice).
    server.script(Behaviour(), Behaviour(), Behaviour(status=500), Behaviour(status=500))
    with EmbeddingCache(tmp_path) as cache:
        cached = CachedEmbedder(make(server, batch_size=10, concurrency=1, max_retries=1), cache)
        with pytest.raises(ProviderError, match="only the missing 30 chunks will be sent"):
            cached.embed(TEXTS)
        assert len(cache) == 20
    server.reset()
    with EmbeddingCache(tmp_path) as cache:
        rerun = CachedEmbedder(make(server, batch_size=10), cache)
        vectors = rerun.embed(TEXTS)
        assert server.input_count == 30
        assert (rerun.hits, rerun.misses) == (20, 30)
    np.testing.assert_allclose(vectors, expected(TEXTS), atol=1e-6)


def test_interrupted_run_leaves_the_cache_consistent(
    server: FakeOpenAIServer, key: str, tmp_path: Path
) -> None:
    server.latency = 0.02
    with EmbeddingCache(tmp_path) as cache:
        cached = CachedEmbedder(make(server, batch_size=5, concurrency=2), cache)
        seen = 0
        with pytest.raises(KeyboardInterrupt):
            for positions, _ in cached.embed_iter(TEXTS):
                seen += len(positions)
                if seen >= 10:
                    raise KeyboardInterrupt
        assert not wait_no_workers()
        stored = len(cache)
        assert 10 <= stored < len(TEXTS)
    server.reset()
    with EmbeddingCache(tmp_path) as cache:
        vectors = CachedEmbedder(make(server, batch_size=5), cache).embed(TEXTS)
    assert server.input_count == len(TEXTS) - stored
    np.testing.assert_allclose(vectors, expected(TEXTS), atol=1e-6)


def test_fully_cached_needs_no_key_and_no_request(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with EmbeddingCache(tmp_path) as cache:
        warm = CachedEmbedder(make(server), cache).embed(TEXTS)
    monkeypatch.delenv("OPENAI_API_KEY")
    server.reset()
    with EmbeddingCache(tmp_path) as cache:
        again = CachedEmbedder(make(server), cache).embed(TEXTS)
    assert server.request_count == 0
    assert again.tobytes() == warm.tobytes()


def test_close_and_reopen(server: FakeOpenAIServer, key: str) -> None:
    with make(server) as emb:
        emb.embed(["a"])
    emb.close()  # idempotent
    emb.embed(["b"])  # a new pool is opened on demand
    emb.close()
    assert server.request_count == 2


# -- end to end: pack with OpenAI, search with the same model ------------------------------


def test_pack_and_search_an_openai_index(
    server: FakeOpenAIServer, key: str, tmp_path: Path
) -> None:
    from scidx.index.index import load
    from scidx.pack.packer import pack_records

    records = [
        {"id": f"doc{i}", "title": f"Page {i}", "text": f"about widgets number {i}"}
        for i in range(12)
    ]
    out = tmp_path / "docs.scidx"
    pack_records(records, out, embedder=make(server), cache_dir=tmp_path / "cache")
    packed_inputs = server.input_count
    assert packed_inputs == 12

    index = load(out, embedder_options={"base_url": server.base_url})
    assert index.stamp == make(server).stamp()
    hits = index.search("about widgets number 3", mode="vector", k=3)
    assert len(hits) == 3
    assert server.input_count == packed_inputs + 1  # one query sent
    index.search("about widgets number 3", mode="vector", k=3)
    assert server.input_count == packed_inputs + 1  # the query vector was cached

    # A rebuild from the cache sends nothing and needs no key.
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPENAI_API_KEY")
        again = pack_records(records, None, embedder=make(server), cache_dir=tmp_path / "cache")
    assert again.data == out.read_bytes()
    assert server.input_count == packed_inputs + 1
