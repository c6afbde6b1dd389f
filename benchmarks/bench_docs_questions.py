"""The ranking yardstick: every question of ``../shared/docs-questions`` against its corpus.

Usage (from the project root)::

    nice .venv/bin/python benchmarks/bench_docs_questions.py [--shared ../shared]
        [--providers hashing,local] [--model ../shared/models/all-MiniLM-L6-v2-int8]
        [--corpora NAME,...] [--skip-bm25s] [--json OUT.json] [--compare BEFORE.json]

Each corpus folder of ``../shared/corpora`` that has a question file is packed as a user would
pack it: a ``staticcorpus.json`` at the folder's root with ``include: ["**/*.md"]`` (and
``"**/*.mdx"`` where the folder has MDX files) and nothing else, so the generator, page URLs
and anchors are whatever the packer detects there.
Then every question of the corpus's ``.jsonl`` is asked with ``Index.search(question, k=10)``
(its defaults: sections grouped) in each mode of each provider:

* ``keyword`` and ``hybrid`` with the ``hashing`` provider (the default a user gets);
* ``hybrid`` and ``vector`` with the ``local`` provider (``--model``, the shared MiniLM), when
  ``local`` is among ``--providers``; other providers (``static``, plugins) add their
  ``hybrid`` row the same way;
* ``bm25s``: bm25s + PyStemmer (English; German for ``-de`` corpora; no stemmer for Chinese
  and Japanese) over the same chunks (each chunk's heading path and clean text), k1 1.5, b 0.75.

What a row counts, per corpus and in total (``n`` questions):

* ``gold@3`` / ``gold@10``: a gold section is among the first 3 / 10 hits;
* ``any@3``: a gold or an ``alt`` section is among the first 3;
* ``MRR@10``: mean reciprocal rank of the first gold hit (0 when none is in the top 10);
* ``page@3``: one of the first 3 hits is on a gold section's page (same source file).

A hit is a gold section when its ``source`` is the gold's file and its own heading (the last
entry of ``heading_path``, compared case-folded with whitespace collapsed) is the gold heading;
a gold heading of ``""`` (a page's lead text) matches the page's chunk with an empty anchor.
scidx chunks on H1-H3 headings, so a gold H4-H6 heading (or a heading inside a blockquote) is
matched by the chunk whose body holds that heading line: the chunk a reader is shown.
Two sections of one file with the same heading text both count (the files hold few of them).

``--json`` writes every question's ranks so that ``--compare`` can list, per row, the questions a
change gained and lost. The embedding cache (``--cache-dir``, default ``/tmp/scidx-bench-cache``)
is kept between runs: re-running with the ``local`` model embeds only changed chunks.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NONSENSE = ("xyzzyplugh", "qwxzv jkplm", "zzkvq pdfxw mrrbt")


@dataclass(frozen=True)
class Gold:
    source: str
    heading: str


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    gold: tuple[Gold, ...]
    alt: tuple[Gold, ...]


@dataclass
class Row:
    """One (corpus, mode) cell: the rank of each question's first gold / any / page hit."""

    ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    nonsense_hits: int = 0

    def add(self, qid: str, gold: int | None, anyr: int | None, page: int | None) -> None:
        self.ranks[qid] = {"gold": gold, "any": anyr, "page": page}

    def figures(self, qids: Iterable[str] | None = None) -> dict[str, float]:
        ids = list(self.ranks) if qids is None else [q for q in qids if q in self.ranks]
        rs = [self.ranks[q] for q in ids]

        def within(key: str, k: int) -> int:
            return sum(1 for r in rs if r[key] is not None and r[key] <= k)  # type: ignore[operator]

        mrr = sum(1.0 / r["gold"] for r in rs if r["gold"] is not None and r["gold"] <= 10)
        return {
            "n": len(rs),
            "gold@3": within("gold", 3),
            "any@3": within("any", 3),
            "gold@10": within("gold", 10),
            "mrr@10": mrr / len(rs) if rs else 0.0,
            "page@3": within("page", 3),
        }


def norm_heading(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def read_questions(path: Path) -> list[Question]:
    out: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)

        def golds(items: Sequence[dict[str, Any]]) -> tuple[Gold, ...]:
            return tuple(Gold(g["source"], norm_heading(g["heading"])) for g in items)

        out.append(
            Question(obj["id"], obj["question"], golds(obj["gold"]), golds(obj.get("alt", [])))
        )
    return out


_HEADING_LINE = re.compile(r"^(?:\s*>)*\s{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_ATTRS = re.compile(r"\s*\{[^{}]*\}\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])?")
_TAG = re.compile(r"<[^>]*>")


def plain_heading(line: str) -> str | None:
    """The plain text of an ATX heading line (also inside a blockquote), else ``None``."""
    m = _HEADING_LINE.match(line)
    if m is None:
        return None
    text = _ATTRS.sub("", m.group(1))
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub("", text).replace("`", "").replace("**", "").replace("__", "")
    return norm_heading(html.unescape(text))


def inner_headings(hit: Any) -> set[str]:
    """Headings a chunk holds inside its body: H4-H6 and blockquote headings it folds in."""
    found: set[str] = set()
    fence = False
    for line in (hit.text or "").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if not fence and "#" in line:
            h = plain_heading(line)
            if h:
                found.add(h)
    return found


def is_section(hit: Any, gold: Gold) -> bool:
    if hit.source != gold.source:
        return False
    if gold.heading == "":
        return hit.anchor == ""
    path = list(hit.heading_path or ())
    if path and norm_heading(path[-1]) == gold.heading:
        return True
    # scidx chunks on H1-H3: a gold H4 (or a heading in a blockquote) is part of the chunk of
    # its enclosing section, and that chunk is the answer a reader gets.
    return gold.heading in inner_headings(hit)


def first_rank(hits: Sequence[Any], pred: Any) -> int | None:
    for i, hit in enumerate(hits, 1):
        if pred(hit):
            return i
    return None


def judge(hits: Sequence[Any], q: Question) -> tuple[int | None, int | None, int | None]:
    gold = first_rank(hits, lambda h: any(is_section(h, g) for g in q.gold))
    anyr = first_rank(hits, lambda h: any(is_section(h, g) for g in q.gold + q.alt))
    pages = {g.source for g in q.gold}
    page = first_rank(hits, lambda h: h.source in pages)
    return gold, anyr, page


@dataclass(frozen=True)
class _BmHit:
    source: str
    anchor: str
    heading_path: tuple[str, ...]
    text: str


def bm25s_row(index: Any, questions: Sequence[Question], corpus: str) -> Row:
    """bm25s + PyStemmer over the index's own chunks, ranked like ``Index.search`` groups them."""
    import bm25s
    import Stemmer

    chunks = [index.chunk(i) for i in range(len(index))]
    texts = [" ".join(c.heading_path) + "\n" + (c.plain or "") for c in chunks]
    lang = {"de": "german"}.get(corpus.rsplit("-", 1)[-1], "english")
    cjk = corpus.endswith(("-zh", "-ja"))
    stemmer = None if cjk else Stemmer.Stemmer(lang)
    stop = None if cjk else ("de" if lang == "german" else "en")
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index(
        bm25s.tokenize(texts, stopwords=stop, stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    row = Row()
    for q in questions:
        tokens = bm25s.tokenize([q.text], stopwords=stop, stemmer=stemmer, show_progress=False)
        hits: list[_BmHit] = []
        if tokens.vocab:
            docs, scores = retriever.retrieve(
                tokens, k=min(40, len(chunks)), show_progress=False, n_threads=1
            )
            seen: set[tuple[str, str]] = set()
            for d, s in zip(docs[0].tolist(), scores[0].tolist(), strict=True):
                c = chunks[int(d)]
                key = (c.source, c.anchor)
                if s <= 0 or key in seen:  # one hit per section, as Index.search groups
                    continue
                seen.add(key)
                hits.append(_BmHit(c.source, c.anchor, tuple(c.heading_path), c.text))
                if len(hits) == 10:
                    break
        row.add(q.qid, *judge(hits, q))
    return row


def pack(corpus_dir: Path, out: Path, provider: str, model: str | None, cache: Path) -> Any:
    from scidx.pack.config import config_from_dict
    from scidx.pack.packer import pack_docs

    # A user lists what their docs hold (a glob matching no file is a config error).
    include = ["**/*.md"] + (["**/*.mdx"] if any(corpus_dir.rglob("*.mdx")) else [])
    data: dict[str, Any] = {
        "include": include,
        "output": str(out),
        "embeddingProvider": provider,
        "cacheDir": str(cache),
    }
    if model is not None:
        data["model"] = model
    return pack_docs(config_from_dict(data, root=corpus_dir))


def run(args: argparse.Namespace) -> dict[str, dict[str, Row]]:
    from scidx.index.index import load

    shared = Path(args.shared)
    qdir = shared / "docs-questions"
    names = sorted(p.stem for p in qdir.glob("*.jsonl") if p.stem != "robustness")
    if args.corpora:
        wanted = args.corpora.split(",")
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            raise SystemExit(f"no question file for {unknown}; known: {names}")
        names = [n for n in names if n in wanted]
    providers = args.providers.split(",")
    model = str(Path(args.model).resolve()) if "local" in providers else None
    results: dict[str, dict[str, Row]] = {}
    out_dir = Path(args.out_dir) if args.out_dir else Path(tempfile.mkdtemp(prefix="dq-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        questions = read_questions(qdir / f"{name}.jsonl")
        rows: dict[str, Row] = {}
        for provider in providers:
            out = out_dir / f"{name}-{provider}.scidx"
            t0 = time.perf_counter()
            result = pack(shared / "corpora" / name, out, provider, model, Path(args.cache_dir))
            packed = time.perf_counter() - t0
            opts: dict[str, Any] = {"model_dir": model} if provider == "local" else {}
            index = load(out, **opts)
            modes = ["keyword", "hybrid"] if provider == "hashing" else ["hybrid", "vector"]
            if provider not in ("hashing", "local"):
                modes = ["hybrid"]
            for mode in modes:
                label = (
                    mode if provider == "hashing" and mode == "keyword" else f"{mode}/{provider}"
                )
                row = Row()
                for q in questions:
                    row.add(q.qid, *judge(index.search(q.text, k=10, mode=mode), q))
                row.nonsense_hits = sum(len(index.search(s, k=10, mode=mode)) for s in NONSENSE)
                rows[label] = row
            if provider == providers[0] and not args.skip_bm25s:
                rows["bm25s"] = bm25s_row(index, questions, name)
            print(
                f"  packed {name} ({provider}): {result.chunks} chunks in {packed:.1f} s",
                file=sys.stderr,
            )
            index.close()
        results[name] = rows
        print_corpus(name, rows)
    return results


COLUMNS = ("gold@3", "any@3", "gold@10", "mrr@10", "page@3")


def fmt(figures: dict[str, float]) -> str:
    cells = []
    for c in COLUMNS:
        v = figures[c]
        cells.append(f"{v:6.3f}" if c == "mrr@10" else f"{int(v):6d}")
    return " ".join(cells)


def print_corpus(name: str, rows: dict[str, Row]) -> None:
    print(f"\n{name}")
    print(f"  {'mode':18} {'n':>4} " + " ".join(f"{c:>6}" for c in COLUMNS) + "  nonsense")
    for label, row in rows.items():
        f = row.figures()
        print(f"  {label:18} {int(f['n']):4d} {fmt(f)}  {row.nonsense_hits}")


def print_totals(results: dict[str, dict[str, Row]]) -> None:
    labels: list[str] = []
    for rows in results.values():
        labels += [lab for lab in rows if lab not in labels]
    groups = {
        "all": list(results),
        "English": [n for n in results if not n.endswith(("-zh", "-ja", "-de"))],
        "English, no kubernetes": [
            n for n in results if not n.endswith(("-zh", "-ja", "-de")) and "kubernetes" not in n
        ],
    }
    for gname, members in groups.items():
        if not members:
            continue
        print(f"\ntotal, {gname} ({len(members)} corpora)")
        print(f"  {'mode':18} {'n':>4} " + " ".join(f"{c:>6}" for c in COLUMNS))
        for label in labels:
            merged = Row()
            for n in members:
                if label in results[n]:
                    merged.ranks.update(results[n][label].ranks)
            if merged.ranks:
                f = merged.figures()
                print(f"  {label:18} {int(f['n']):4d} {fmt(f)}")


def to_json(results: dict[str, dict[str, Row]]) -> dict[str, Any]:
    return {
        name: {
            lab: {"ranks": row.ranks, "nonsense": row.nonsense_hits} for lab, row in rows.items()
        }
        for name, rows in results.items()
    }


def compare(before: dict[str, Any], results: dict[str, dict[str, Row]]) -> None:
    print("\nchanges against --compare (gold@3): gained / lost questions per row")
    for name, rows in results.items():
        for label, row in rows.items():
            old = before.get(name, {}).get(label)
            if old is None:
                continue
            gained, lost = [], []
            for qid, r in row.ranks.items():
                o = old["ranks"].get(qid, {}).get("gold")
                now_in = r["gold"] is not None and r["gold"] <= 3
                was_in = o is not None and o <= 3
                if now_in and not was_in:
                    gained.append(qid)
                elif was_in and not now_in:
                    lost.append(qid)
            if gained or lost:
                print(f"  {name:32} {label:18} +{len(gained)} {gained}  -{len(lost)} {lost}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--providers", default="hashing", help="comma list: hashing,local,...")
    parser.add_argument(
        "--model", default=str(ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-int8")
    )
    parser.add_argument("--corpora", default="", help="comma list of corpus names (default all)")
    parser.add_argument("--skip-bm25s", action="store_true")
    parser.add_argument("--cache-dir", default="/tmp/scidx-bench-cache")
    parser.add_argument("--out-dir", default="", help="where the indexes go (default: a temp dir)")
    parser.add_argument("--json", default="", help="write every question's ranks here")
    parser.add_argument("--compare", default="", help="a --json file of an earlier run")
    args = parser.parse_args()
    results = run(args)
    print_totals(results)
    if args.compare:
        compare(json.loads(Path(args.compare).read_text(encoding="utf-8")), results)
    if args.json:
        Path(args.json).write_text(json.dumps(to_json(results), indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
