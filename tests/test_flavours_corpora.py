"""Every shared SYNTAX.md corpus, chunked with its detected generator: no syntax left in prose.

For each construct of ``../shared/corpora/SYNTAX.md`` the test finds its occurrences in the
source (outside fenced code and inline code, as SYNTAX.md counts them) and checks that the
construct's marker text is not in the clean text of the chunk covering that line. It also checks
that no container body is marked as code, that no chunk has empty clean text, and a few URLs
per corpus (see test_flavours.py for the unit tests of each profile).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from scidx.index.highlight import CODE_END, CODE_START
from scidx.pack.chunk import Chunk, chunk_markdown
from scidx.pack.flavours.detect import detect_generator
from scidx.pack.frontmatter import normalize_source, parse_front_matter

_M = re.MULTILINE
_CODE = re.compile(re.escape(CODE_START) + ".*?" + re.escape(CODE_END), re.DOTALL)
_FENCE = re.compile(r"^(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})(.*)$")
_CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")

# construct -> (regex over a source line, marker: the text that must not survive, from the
# match; None: the whole match). "code" constructs are looked for inside fenced code only.
Construct = tuple[str, re.Pattern[str], str | None, bool]


def _c(name: str, rx: str, marker: str | None = None, code: bool = False) -> Construct:
    return (name, re.compile(rx), marker, code)


MKDOCS = [
    _c("admonition", r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+"),
    _c("content tab", r'^[ \t]*===[!+]?[ \t]+"', None),
    _c("block ///", r"^[ \t]*///[ \t]*[\w-]+"),
    _c("annotation marker", r"\(\d+\)!", None, True),
    _c("snippet", r"^[ \t]*-{1,2}8<-{1,2}[ \t]"),
    _c("attribute list", r"\{[ \t]*\.[\w-]+(?:[ \t]+[.#][\w-]+)*[ \t]*\}"),
    _c("icon", r":(?:material|octicons|fontawesome|simple)-[\w-]+:"),
    _c("keys", r"\+\+[\w]+(?:\+[\w]+)*\+\+"),
    _c("abbreviation", r"^\*\[[^\]]+\]:"),
    _c("footnote definition", r"^\[\^[^\]\s]+\]:"),
    _c("md macro", r"<!--[ \t]*md:"),
    _c("mkdocstrings", r"^:::[ \t]+[\w.]+"),
    _c("cross-reference", r"\]\[[A-Za-z_][\w]*(?:\.[\w]+)+\]"),
    _c("bare autoref", r"\[`?[A-Za-z_][\w]*(?:\.[\w]+)+`?\]\[\]"),
]
COLON = [
    _c("colon container", r"^[ \t]*:{3,}[ \t]*\{?[A-Za-z][\w-]*\}?"),
    _c("colon close", r"^[ \t]*:{3,}[ \t]*$"),
]
MDX = [
    _c("ESM line", r"^(?:import|export)[ \t]+\S.*$"),
    _c(
        "component",
        r"</?(?:Tabs|TabItem|CodeBlock|Steps|Card|CardGrid|LinkCard|LinkButton|FileTree|"
        r"Aside|Badge|Icon|Preview|ThemedImage|SnackPlayer)\b",
    ),
    _c("MDX comment", r"\{/\*"),
    _c("JSX expression attribute", r"\b[\w-]+=\{"),
]
ALERTS = [_c("alert", r"^[ \t]*>[ \t]*\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]")]
CORPORA: dict[str, tuple[str, list[Construct]]] = {
    "mkdocs-material-docs": ("mkdocs", MKDOCS),
    "openai-agents-python-docs-en": ("mkdocs", MKDOCS),
    "react-native-website-docs": (
        "docusaurus",
        [*COLON, *MDX, _c("highlight comment", r"highlight-(?:next-line|start|end)", None, True)],
    ),
    "vitepress-docs-en": (
        "vitepress",
        [
            *COLON,
            *ALERTS,
            _c("toc", r"^\[\[toc\]\]"),
            _c("snippet import", r"^<<<[ \t]+@"),
            _c("code notation", r"\[!code\b", None, True),
        ],
    ),
    "starlight-docs-en": ("starlight", [*COLON, *MDX]),
    "myst-parser-docs": (
        "myst",
        [
            *COLON,
            *ALERTS,
            _c("backtick directive", r"^[ \t]*`{3,}\{[\w:-]+\}"),
            _c("target", r"^\([^()\s]+\)=[ \t]*$"),
            _c("role", r"\{[\w:+-]+\}`[^`]+`"),
            _c("comment", r"^%[ \t].*$"),
            _c("block break", r"^\+\+\+[ \t]*$"),
            _c("project link", r"<(?:project|inv):"),
        ],
    ),
    "gemini-cli-docs": (
        "github",
        [*ALERTS, _c("details", r"</?details\b"), _c("summary", r"</?summary>"), *MDX],
    ),
}


_HEADING_ATTRS = re.compile(r"\s\{:?[^{}]*\}\s*$")


def _occurrences(text: str, constructs: list[Construct]) -> Iterator[tuple[str, int, str]]:
    """(construct, 1-based line, marker) for each occurrence, fences tracked as SYNTAX.md."""
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        match = _FENCE.match(line)
        in_code = fence is not None
        if fence is not None:
            stripped = line.strip().lstrip(">").strip()
            if match and stripped == fence[0] * len(stripped) and len(stripped) >= len(fence):
                fence = None
                continue
        elif match is not None and not match.group(2).lstrip().startswith("{"):
            fence = match.group(1)
            continue
        spans = [m.span() for m in _CODE_SPAN.finditer(line)] if not in_code else []
        for name, rx, marker, code in constructs:
            if code != in_code:
                continue
            for found in rx.finditer(line):
                if any(a <= found.start() < b for a, b in spans):
                    continue  # inside inline code: a mention, shown as text
                yield name, number, (marker or found.group(0)).strip()


def _chunks(root: Path, generator: str) -> Iterator[tuple[str, str, list[Chunk]]]:
    anchors = "mkdocs" if generator == "mkdocs" else "github"
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".md", ".mdx") or not path.is_file():
            continue
        source = path.relative_to(root).as_posix()
        text = normalize_source(path.read_text(encoding="utf-8"))
        chunks = chunk_markdown(text, source, generator=generator, anchor_style=anchors)
        yield source, text, chunks


def _covering(chunks: list[Chunk], line: int) -> Chunk | None:
    for chunk in chunks:
        if chunk.line_start <= line <= chunk.line_end:
            return chunk
    return None


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_no_generator_syntax_left_in_clean_text(shared_dir: Path, corpus: str) -> None:
    root = shared_dir / "corpora" / corpus
    generator, constructs = CORPORA[corpus]
    assert detect_generator(root) == generator
    left: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    for source, text, chunks in _chunks(root, generator):
        assert all(c.plain.strip() for c in chunks), f"{source}: a chunk with no clean text"
        fm_end, _ = parse_front_matter(text)
        first_body_line = text.count("\n", 0, fm_end) + 1
        for name, line, marker in _occurrences(text, constructs):
            if line < first_body_line:
                continue
            if name == "ESM line" and generator != "docusaurus" and source.endswith(".md"):
                continue  # only MDX reads a line starting "import" as code
            seen[name] = seen.get(name, 0) + 1
            chunk = _covering(chunks, line)
            if chunk is None:
                continue  # the line is in no chunk (a blanked build instruction, say)
            code = name in {c[0] for c in constructs if c[3]}
            clean = chunk.plain if code else _CODE.sub(" ", chunk.plain)
            # A page about the syntax mentions it in inline code: that text is shown, once each.
            mentions = sum(m.group(0).count(marker) for m in _CODE_SPAN.finditer(chunk.text))
            if clean.count(marker) > mentions:
                left.setdefault(name, []).append(f"{source}:{line}: {marker!r}")
        if generator == "mkdocs":
            # Headings show what the page shows: no attribute list ({ id="x" }, { .cls }).
            for chunk in chunks:
                for heading in chunk.heading_path:
                    if _HEADING_ATTRS.search(heading):
                        left.setdefault("heading attribute list", []).append(
                            f"{source}:{chunk.line_start}: {heading!r}"
                        )
    assert seen, f"{corpus}: no construct found; is SYNTAX.md's corpus there?"
    assert not left, {name: (len(v), v[:3]) for name, v in left.items()}
