"""The search page in headless Chromium (Debian's browser, driven by Playwright).

Type a query, see results grouped per page with highlights, walk them with the keyboard, follow
a link. A screenshot is saved to ``test-artifacts/web-search.png`` (``$SCIDX_ARTIFACTS`` moves
it). Playwright never downloads a browser here: it drives the Debian package that ``.ci/run``
installs. Without that browser the tests skip, unless ``SCIDX_REQUIRE_BROWSER=1`` (set by CI).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="scidx.web needs the serve extra")
sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (test extra)")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import HTMLResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

from scidx.pack.packer import pack_docs  # noqa: E402
from scidx.web import WebSettings, create_app  # noqa: E402
from support.browser import FLAGS, artifact, chromium  # noqa: E402
from support.web_server import UvicornThread  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A docs site with the search app mounted at /find/ and its pages at /docs/..."""
    folder = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "fixtures" / "docs", folder / "docs")
    config = folder / "staticcorpus.json"
    config.write_text(
        json.dumps(
            {
                "include": ["docs/**/*.md"],
                "output": "site.scidx",
                "urlTemplate": "/site/{page}#{anchor}",
            }
        ),
        encoding="utf-8",
    )
    pack_docs(config, use_cache=False)

    async def doc_page(request: Request) -> HTMLResponse:
        path = request.path_params["path"]
        return HTMLResponse(f"<!doctype html><title>{path}</title><h1 id='doc'>page {path}</h1>")

    search = create_app(
        {"docs": folder / "site.scidx"}, WebSettings(token_env=None), title="Search the docs"
    )
    outer = Starlette(routes=[Mount("/find", app=search), Route("/site/{path:path}", doc_page)])
    with UvicornThread(outer) as running:
        yield running.url
    search.state.indexes.close()


@pytest.fixture(scope="module")
def browser_page(
    site: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, dict[str, list[str]]]]:
    executable = chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh --user-data-dir
    seen: dict[str, list[str]] = {"requests": [], "errors": [], "dialogs": []}
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=FLAGS,
            viewport={"width": 1000, "height": 900},
        )
        page = context.new_page()
        page.on("request", lambda r: seen["requests"].append(r.url))
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
        page.on(
            "console",
            lambda m: seen["errors"].append(m.text) if m.type == "error" else None,
        )
        page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        try:
            yield page, seen
        finally:
            context.close()


def wait_for_status(page: Any, text: str) -> None:
    """Wait until the status line contains ``text`` (a function: the page's CSP forbids eval)."""
    page.wait_for_function(
        "(text) => document.getElementById('status').textContent.includes(text)", arg=text
    )


def test_type_see_results_walk_and_follow(
    site: str, browser_page: tuple[Any, dict[str, list[str]]]
) -> None:
    page, seen = browser_page
    page.goto(site + "/find/")
    assert page.title() == "Search the docs"
    box = page.locator("#q")
    assert box.evaluate("el => el === document.activeElement")  # autofocus
    assert page.get_by_label("Search", exact=True).count() == 1  # the box has a label

    searches_before = sum("/find/search?" in url for url in seen["requests"])
    box.press_sequentially("ship nginx logs", delay=20)  # faster than the 150 ms debounce
    page.wait_for_selector("section.page")
    wait_for_status(page, "for “ship nginx logs”")
    searches = sum("/find/search?" in url for url in seen["requests"]) - searches_before
    assert 1 <= searches <= 3  # debounced: not one request per keystroke

    status = page.locator("#status").inner_text()
    assert "results on" in status
    titles = page.locator("section.page h2").all_inner_texts()
    assert titles and len(titles) == len(set(titles))  # one box per page
    assert "Recipes" in titles
    marks = [m.lower() for m in page.locator("mark").all_inner_texts()]
    assert "nginx" in marks and "logs" in marks
    first_link = page.locator("a.hit").first
    href = first_link.get_attribute("href")
    assert href and href.startswith("/site/")
    # Each page box names the page's address, not the repository file behind it, and its
    # results' breadcrumbs leave out the title the box already shows.
    wheres = page.locator("section.page p.source").all_inner_texts()
    assert wheres and all("/site/" in w and not w.endswith(".md") for w in wheres), wheres
    recipes = page.locator("section.page", has=page.locator("h2", has_text="Recipes"))
    crumbs = recipes.locator("a.hit").all_inner_texts()
    assert crumbs and not any(c.startswith("Recipes ›") for c in crumbs), crumbs

    page.screenshot(path=str(artifact("web-search.png")), full_page=True)

    # Keyboard: ↓ from the box to the first result, ↓ ↑ between results, Esc back to the box.
    box.press("ArrowDown")
    focused = "document.activeElement"
    assert page.evaluate(f"{focused}.classList.contains('hit')")
    first_text = page.evaluate(f"{focused}.textContent")
    page.keyboard.press("ArrowDown")
    assert (
        page.evaluate(f"{focused}.textContent") != first_text or page.locator(".hit").count() == 1
    )
    page.keyboard.press("ArrowUp")
    assert page.evaluate(f"{focused}.textContent") == first_text
    page.keyboard.press("Escape")
    assert page.evaluate(f"{focused}.id") == "q"
    page.keyboard.press("ArrowDown")

    # Enter follows the focused result's link to the docs page.
    target = page.evaluate(f"{focused}.getAttribute('href')")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == site + target
    assert page.locator("#doc").inner_text().startswith("page ")

    # Back: the query is in the address bar, so the results come back.
    page.go_back()
    page.wait_for_selector("section.page")
    assert page.locator("#q").input_value() == "ship nginx logs"

    assert all(url.startswith(site) for url in seen["requests"]), seen["requests"]
    assert seen["errors"] == []


def test_no_results_errors_and_markup_in_queries(
    site: str, browser_page: tuple[Any, dict[str, list[str]]]
) -> None:
    page, seen = browser_page
    page.goto(site + "/find/")
    box = page.locator("#q")
    box.fill("zzqqxx")
    wait_for_status(page, "“zzqqxx”")
    # Markup in a query is text, never HTML: no element, no script.
    box.fill("<img src=x onerror=alert(1)> logs")
    wait_for_status(page, "<img")
    assert page.locator("#results img").count() == 0 and seen["dialogs"] == []
    # A server-side error shows its message.
    box.fill("x" * 2100)
    wait_for_status(page, "limit is")
    assert "Search failed" in page.locator("#status").inner_text()
    # Esc in a filled box clears it and the results.
    box.fill("logs")
    page.wait_for_selector("section.page")
    box.press("Escape")
    assert box.input_value() == "" and page.locator("section.page").count() == 0
    assert seen["dialogs"] == []


def test_search_as_you_type_keeps_results_and_shows_corrections(
    site: str, browser_page: tuple[Any, dict[str, list[str]]]
) -> None:
    """Typed key by key, slower than the debounce: every prefix searches (prefix=1), a word
    being completed keeps the results on screen, and a typo says what was searched instead."""
    page, seen = browser_page
    errors_before = len(seen["errors"])  # the module's page: earlier tests' errors are theirs
    page.goto(site + "/find/")
    box = page.locator("#q")
    statuses: list[str] = []
    for key in "configura":
        box.press_sequentially(key)
        page.wait_for_timeout(250)  # past the 150 ms debounce: this prefix is searched
        statuses.append(page.locator("#status").inner_text())
    page.wait_for_selector("section.page")
    wait_for_status(page, "results on")
    assert any("prefix=1" in url for url in seen["requests"] if "/find/search?" in url)
    # From the first prefix that found something, the list never went back to "No results".
    first = next(i for i, s in enumerate(statuses) if "results on" in s)
    assert not any("No results" in s for s in statuses[first:]), statuses
    headings = [h.lower() for h in page.locator("a.hit").all_inner_texts()]
    assert any("config" in h for h in headings), headings

    box.fill("")
    box.press_sequentially("confgiuration ", delay=20)  # a typo, then a space: a whole word
    wait_for_status(page, "showing results for “configuration”")
    assert page.locator("section.page").count() > 0

    box.fill("")
    box.press_sequentially("xyzzyplugh ", delay=20)  # nonsense stays empty
    wait_for_status(page, "No results")
    assert not seen["errors"][errors_before:], seen["errors"]
