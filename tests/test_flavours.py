"""Each generator flavour on its own: containers are prose, titles join, code stays code."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scidx.index.highlight import CODE_END, CODE_START
from scidx.pack.chunk import chunk_markdown
from scidx.pack.cleantext import plain_text
from scidx.pack.flavours import FLAVOURS, GENERATORS, rewrite
from scidx.pack.flavours.detect import detect_generator


def code(body: str) -> str:
    return CODE_START + body + CODE_END


def test_mkdocs_admonition_body_is_prose_and_its_fence_is_code() -> None:
    doc = '!!! tip "Use the cache"\n\n    Set **cacheDir**.\n\n    ```sh\n    ls\n    ```\n'
    assert CODE_START + "Set **cacheDir**" in plain_text(doc)  # CommonMark alone: code
    assert plain_text(doc, generator="mkdocs") == f"Use the cache\n\nSet cacheDir.\n\n{code('ls')}"


def test_mkdocs_collapsible_tabs_blocks_and_inline_syntax() -> None:
    doc = (
        '???+ note\n    Hidden *text*.\n\n=== "Linux"\n\n    apt :material-check: x\n\n'
        "/// warning | Careful\n    type: x\n\nBody ++ctrl+c++.{ .big }\n///\n\n"
        '*[HTML]: Hyper Text\n--8<-- "snip.md"\n'
    )
    assert plain_text(doc, generator="mkdocs") == (
        "Hidden text.\n\nLinux\n\napt  x\n\nCareful\n\nBody ctrl+c.\n\nHTML: Hyper Text"
    )


def test_mkdocstrings_directive_and_cross_references() -> None:
    doc = (
        "# Agent\n\n::: agents.agent\n    options:\n        members: true\n\n"
        "See [`Agent`][agents.Agent] and [agents.Runner][] or [site][s].\n\n[s]: https://x.org\n"
    )
    assert plain_text(doc, generator="mkdocs") == (
        "Agent\n\nagents.agent\n\nSee Agent and agents.Runner or site."
    )


def test_mkdocs_annotation_markers_leave_code() -> None:
    doc = "```yaml\nblog_dir: . # (1)!\n```\n\n1. The folder.\n"
    assert plain_text(doc, generator="mkdocs") == f"{code('blog_dir: .')}\n\nThe folder."


def test_docusaurus_admonitions_esm_and_jsx() -> None:
    doc = (
        "import Tabs from '@theme/Tabs';\n\n:::warning[Heads up]\nMind the gap.\n:::\n\n"
        '<Tabs groupId="os" defaultValue={x}>\n<TabItem value="mac" label="macOS">\n\n'
        "    Indented prose, not code.\n\n```sh\nbrew install x // highlight-next-line\n```\n\n"
        "</TabItem>\n</Tabs>\n\n{/* hidden */}\n"
    )
    assert plain_text(doc, generator="docusaurus", mdx=True) == (
        f"Heads up\nMind the gap.\n\nmacOS\n\nIndented prose, not code.\n\n"
        f"{code('brew install x // highlight-next-line')}"
    )


def test_vitepress_containers_and_markers() -> None:
    doc = (
        "::: details Click me\nHidden.\n:::\n\n[[toc]]\n\n<<< @/snippets/a.js\n\n"
        "> [!TIP]\n> Try {{ 1 + 1 }}.\n\n```js\nx() // [!code focus]\n```\n"
    )
    assert plain_text(doc, generator="vitepress") == (
        f"Click me\nHidden.\n\nTry 1 + 1.\n\n{code('x()')}"
    )


def test_starlight_asides_and_components() -> None:
    doc = (
        "import { Card } from '@astrojs/starlight/components';\n\n:::tip[Did you know?]\nYes.\n"
        ':::\n\n<Card title="Stars" icon="star">\nShine.\n</Card>\n'
    )
    assert (
        plain_text(doc, generator="starlight", mdx=True) == "Did you know?\nYes.\n\nStars\nShine."
    )


def test_myst_directives_targets_roles_and_code() -> None:
    doc = (
        "(install)=\n# Install\n\n```{admonition} Before you start\n:class: tip\n\n"
        "Read {ref}`the intro <intro>` first.\n```\n\n:::{note}\nA note.\n:::\n\n"
        "% a comment\n\n```{code-block} python\n:linenos:\nprint(1)\n```\n\n"
        "```{toctree}\nintro\n```\n"
    )
    assert plain_text(doc, generator="myst") == (
        f"Install\n\nBefore you start\n\nRead the intro first.\n\nA note.\n\n{code('print(1)')}"
    )


def test_github_alerts_and_details() -> None:
    doc = "> [!WARNING]\n> Back up first.\n\n<details>\n<summary>More</summary>\n\nText.\n"
    assert plain_text(doc, generator="github") == "Back up first.\n\nMore\n\nText."


def test_a_construct_not_understood_is_left_as_text() -> None:
    for generator in GENERATORS:
        doc = '!!!\n:::\n::: ?? odd\n<Unclosed attr="x"\n~~~\n'
        assert "odd" in plain_text(doc + "tail", generator=generator)
        assert "Unclosed" in plain_text("<Unclosed a=\n\ntail\n", generator=generator, mdx=True)


def test_custom_heading_ids_survive_the_rewrite() -> None:
    for generator in ("mkdocs", "vitepress", "docusaurus", "myst"):
        chunks = chunk_markdown("## Deploy {#generic}\n\nx\n", "a.md", generator=generator)
        assert [c.anchor for c in chunks] == ["generic"], generator


def test_mkdocs_heading_attribute_lists_set_the_anchor_and_leave_the_text() -> None:
    doc = (
        '## 4.43.1 November 19, 2023 { id="4.43.1" }\n\na\n\n'
        "## Changes to *.html files { data-search-exclude }\n\nb\n\n"
        "## Breadcrumbs { #crumbs .wide }\n\nc\n\n"
        "## Both {: .x id='late' }\n\nd\n"
    )
    chunks = chunk_markdown(doc, "a.md", generator="mkdocs", anchor_style="mkdocs")
    assert [(c.heading_path[-1], c.anchor) for c in chunks] == [
        ("4.43.1 November 19, 2023", "4.43.1"),
        ("Changes to *.html files", "changes-to-html-files"),
        ("Breadcrumbs", "crumbs"),
        ("Both", "late"),
    ]
    # Elsewhere only {#id} is an id: other braces are the heading's own text (GitHub shows it).
    (other,) = chunk_markdown("## Using { name }\n\nx\n", "a.md", generator="github")
    assert other.heading_path[-1] == "Using { name }"


def test_detection_beside_below_and_above(tmp_path: Path) -> None:
    assert detect_generator(tmp_path) == "github"
    (tmp_path / "docs" / ".vitepress").mkdir(parents=True)
    assert detect_generator(tmp_path) == "vitepress"
    inner = tmp_path / "docs" / "guide"
    inner.mkdir()
    (tmp_path / "book.toml").write_text("[book]\n")
    assert detect_generator(inner) == "vitepress"  # above: the nearest folder decides
    assert detect_generator(tmp_path) == "mdbook"  # beside wins over below


_PIECES = [
    '!!! note "T"\n',
    "??? tip\n",
    '=== "Tab"\n',
    "    body\n",
    "    ```\n",
    "```\n",
    "```{note}\n",
    "```{code-block} py\n",
    ":::\n",
    ":::tip[X]\n",
    "::: warning T\n",
    ":::{seealso}\n",
    ":name: v\n",
    "(label)=\n",
    "% c\n",
    "+++\n",
    "{ref}`a <b>`",
    "<Tabs>\n",
    '<TabItem label="L">\n',
    "</TabItem>\n",
    "<X a={{b: 1}}\n",
    "/>\n",
    "{/* c\n",
    "*/}\n",
    "import x from 'y'\n",
    "export const a = 1\n",
    "> [!NOTE]\n",
    "[[toc]]\n",
    "<<< @/a\n",
    "{{ x }}",
    "[a][b.c]",
    "[^1]",
    "[^1]: n\n",
    '--8<-- "a"\n',
    "*[A]: b\n",
    "++k++",
    ":smile:",
    "{ .c }",
    "/// note | T\n",
    "///\n",
    "::: a.b\n",
    "    options:\n",
    ":   def\n",
    "# H {#i}\n",
    "## S\n",
    "\n",
    "text ",
    "\t",
    ">",
    "`",
    "~~~\n",
    "<details>\n",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=40),
    generator=st.sampled_from(GENERATORS),
    mdx=st.booleans(),
)
def test_random_mixes_of_constructs_never_raise(
    pieces: list[str], generator: str, mdx: bool
) -> None:
    text = "".join(pieces).replace("\r", "")
    out = rewrite(text, FLAVOURS[generator], mdx=mdx)
    assert out.count("\n") == text.count("\n")  # line for line: spans stay true
    source = "a.mdx" if mdx else "a.md"
    for chunk in chunk_markdown(text, source, max_chunk_chars=40, generator=generator):
        assert chunk.plain.strip()


def test_mdx_inline_code_keeps_jsx_tags_with_attributes() -> None:
    # Issue 40: ``Render a `<Provider store={store}>` around `<App>` `` lost its code spans.
    doc = (
        "# T\n\nRender a `<Provider store={store}>` around `<App>` and "
        "<ins style={{a: 1}}>x</ins>.\n"
    )
    for generator, source in (("docusaurus", "p.md"), ("commonmark", "p.mdx")):
        [chunk] = chunk_markdown(doc, source, generator=generator)
        plain = chunk.plain.replace(CODE_START, "").replace(CODE_END, "")
        assert plain == "Render a <Provider store={store}> around <App> and x.", generator
