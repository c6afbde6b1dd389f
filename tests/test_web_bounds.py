"""Each request's work is bounded (issue 24 #3): filter terms, candidates walked, per-page work."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette", reason="scidx.web needs the serve extra")
pytest.importorskip("uvicorn", reason="scidx.web needs the serve extra")

from scidx.index.index import Index, load  # noqa: E402
from scidx.pack.packer import pack_records  # noqa: E402
from scidx.web import WebSettings, create_app, openai_api  # noqa: E402
from support.web_server import UvicornThread, assert_error  # noqa: E402

PAGES, PER_PAGE = 40, 50


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 chunks on 40 pages, every one matching the query word ``alpha``."""
    path = tmp_path_factory.mktemp("bounds") / "wide.scidx"
    records = [
        {
            "id": f"p{p}.md:s{c}:0",
            "source": f"p{p}.md",
            "anchor": f"s{c}",
            "title": f"Page {p}",
            "text": f"alpha section {c} of page {p}",
            "metadata": {"team": f"t{p % 4}", "level": p % 3},
        }
        for p in range(PAGES)
        for c in range(PER_PAGE)
    ]
    pack_records(records, path, dimensions=32, use_cache=False)
    return path


def _counting(calls: list[str]) -> Any:
    def front_matter(idx: Index, source: str) -> dict[str, Any]:
        calls.append(source)
        return dict(idx.source_metadata().get(source, {}))

    return front_matter


def test_a_filter_matching_nothing_examines_a_bounded_number_of_chunks(
    wide: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    attributes = openai_api._attributes

    def counted(hit: Any, front: Any) -> dict[str, Any]:
        made.append(1)
        return attributes(hit, front)

    monkeypatch.setattr(openai_api, "_attributes", counted)
    nothing = {"type": "eq", "key": "anchor", "value": "no-such-anchor"}
    with load(wide) as idx:
        out = openai_api.run_search(
            idx,
            "alpha",
            k=5,
            mode="keyword",
            threshold=None,
            filters=nothing,
            front_matter=_counting([]),
            candidates=300,
        )
    assert out == []
    # At most the 300 candidates, each once (the whole ranking was 2,000 hits before).
    assert 0 < len(made) <= 300 + PAGES


def test_page_attributes_are_compared_once_per_page(wide: Path) -> None:
    calls: list[str] = []
    # Front matter that no page has: decided per page, no chunk of the page is looked at again.
    nothing = {
        "type": "or",
        "filters": [{"type": "in", "key": "team", "value": ["x1", "x2"]}] * 3,
    }
    with load(wide) as idx:
        out = openai_api.run_search(
            idx,
            "alpha",
            k=5,
            mode="keyword",
            threshold=None,
            filters=nothing,
            front_matter=_counting(calls),
            candidates=PAGES * PER_PAGE,
        )
        assert out == []
        assert len(calls) == PAGES == len(set(calls))
        # A mixed tree still gives the same results as evaluating every chunk in full.
        mixed = {
            "type": "and",
            "filters": [
                {"type": "eq", "key": "team", "value": "t1"},
                {"type": "in", "key": "anchor", "value": ["s3", "s7"]},
                {"type": "or", "filters": [{"type": "gte", "key": "level", "value": 1}]},
            ],
        }
        got = openai_api.run_search(
            idx,
            "alpha",
            k=50,
            mode="keyword",
            threshold=None,
            filters=mixed,
            front_matter=_counting([]),
            candidates=PAGES * PER_PAGE,
        )
    want = [f"p{p}.md:s{c}:0" for p in range(PAGES) for c in (3, 7) if p % 4 == 1 and p % 3 >= 1]
    assert sorted(r["attributes"]["chunk_id"] for r in got) == sorted(want)


@pytest.fixture(scope="module")
def http(wide: Path) -> Iterator[httpx.Client]:
    app = create_app([wide], WebSettings(token_env=None, max_body_bytes=256 * 1024))
    with UvicornThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def test_filter_values_count_toward_the_filter_budget(http: httpx.Client) -> None:
    # The body: 63 `in` nodes of 20 values under one `or` (64 nodes, 1,260 values).
    values = [f"v{i}" for i in range(20)]
    node = {
        "type": "or",
        "filters": [{"type": "in", "key": f"k{i}", "value": values} for i in range(63)],
    }
    response = http.post("/v1/vector_stores/wide/search", json={"query": "alpha", "filters": node})
    assert_error(response, 400, "at most 256 filter terms")
    small = {"type": "in", "key": "team", "value": ["t1", "t2"]}
    response = http.post(
        "/v1/vector_stores/wide/search",
        json={"query": "alpha", "filters": small, "max_num_results": 3},
    )
    assert response.status_code == 200, response.text
    assert [r["attributes"]["team"] for r in response.json()["data"]] != []


def test_host_check_entries() -> None:
    from scidx.web.hosts import HostCheck, host_name

    check = HostCheck(None, ["127.0.0.1", "localhost", ".example.org", "Docs.Internal"])  # type: ignore[arg-type]
    assert host_name("[::1]:8000") == "::1" and host_name("A.B.:80") == "a.b"
    for ok in ("127.0.0.1:8000", "localhost", "LocalHost.", "example.org", "a.b.example.org"):
        assert check.allows(ok), ok
    for bad in ("evil.example", "127.0.0.2", "[::1]", "localhost.evil", "badexample.org", ""):
        assert not check.allows(bad), bad
    wildcard = HostCheck(None, ["0.0.0.0", "localhost"])  # type: ignore[arg-type]
    assert wildcard.allows("192.168.1.5:8000") and wildcard.allows("[fe80::1]")
    assert not wildcard.allows("evil.example")
    assert HostCheck(None, ["*"]).allows("anything.example")  # type: ignore[arg-type]


def test_host_must_be_a_host_with_a_numeric_port() -> None:
    """Issue 39 S5: the part after a single ``:`` is a port, digits only; else it is malformed."""
    from scidx.web.hosts import HostCheck, parse_host

    assert parse_host("[::1]:8000") == "::1" and parse_host("Docs.Example.:443") == "docs.example"
    assert parse_host("127.0.0.1") == "127.0.0.1" and parse_host("localhost:") == "localhost"
    malformed = (
        "127.0.0.1:80@evil.example",
        "localhost:evil.example",
        "localhost:80:80",
        "localhost:8 0",
        "user@localhost",
        "localhost/evil",
        "[::1]evil",
        "[::1]:80x",
        "[not-ip]:80",
        "[::1",
        "local host",
    )
    check = HostCheck(None, ["127.0.0.1", "localhost", "::1"])  # type: ignore[arg-type]
    anything = HostCheck(None, ["*"])  # type: ignore[arg-type]
    for bad in malformed:
        assert parse_host(bad) is None, bad
        assert not check.allows(bad) and not anything.allows(bad), bad
    for ok in ("[::1]:8000", "[::1]", "127.0.0.1:80", "localhost:"):
        assert check.allows(ok), ok


def test_server_answers_400_invalid_host_to_a_malformed_host(wide: Path) -> None:
    """Issue 39 S5 end to end: a live server refuses the forged ``Host`` values, answers IPv6."""
    allowed = ("127.0.0.1", "localhost", "::1")
    app = create_app([wide], WebSettings(token_env=None, allowed_hosts=allowed))
    with UvicornThread(app) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        for host in ("127.0.0.1:80@evil.example", "localhost:evil.example", "[::1]:x"):
            response = c.get("/healthz", headers={"Host": host})
            assert response.status_code == 400, (host, response.text)
            error = response.json()["error"]
            assert error["code"] == "invalid_host" and "numeric port" in error["message"], error
        for host in ("[::1]:8000", f"127.0.0.1:{server.port}", "localhost"):
            assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
