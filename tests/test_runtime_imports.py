"""The runtime path imports only numpy, msgpack, xxhash and the stdlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.indexes import DOCS, build_index

HEAVY = ("typer", "rich", "markdown_it", "openai", "platformdirs")

SCRIPT = """
import sys
import scidx
idx = scidx.load(sys.argv[1])
for mode in ("keyword", "vector", "hybrid"):
    assert idx.search("install kubectl", mode=mode, k=3), mode
idx.search_vector(idx.vectors[0], k=2)
idx.close()
heavy = sorted({heavy!r} & set(sys.modules))
assert not heavy, heavy
print("ok")
"""


def test_runtime_imports_stay_light(tmp_path: Path) -> None:
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(heavy=set(HEAVY)), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


KEYWORD_SCRIPT = """
import sys
import scidx
idx = scidx.load(sys.argv[1])
assert idx.search("install kubectl", mode="keyword", k=3)
idx.rank("install kubectl", mode="keyword", k=3)
# Start-up cost (benchmarks/bench_startup.py): a keyword search needs no embedder, no JSON, no
# importlib.resources, no thread pool (concurrent.futures pulls in logging), no HTML escaping
# and no URL quoting; they are imported when a query vector, a metadata read, a packaged
# index, a large vector product, HTML or a URL needs them. Nor snippet code (the offsets reader
# and highlighting), until a snippet is read.
unneeded = sorted(
    {"scidx.embed", "scidx.embed.hashing", "scidx.embed.registry", "json",
     "importlib.resources", "fnmatch", "concurrent.futures", "logging", "html",
     "urllib.parse", "scidx.index.highlight", "scidx.index.offsets", "scidx.index.urls",
     "threading"}
    & set(sys.modules)
)
assert not unneeded, unneeded
hit = idx.search("install kubectl", mode="keyword", k=3)[0]
assert hit.highlights and "scidx.index.offsets" in sys.modules
from scidx.embed.hashing import PROVIDER_ID
from scidx.index import query
assert query._HASHING == PROVIDER_ID
print("ok")
"""


def test_keyword_search_imports_no_embedder(tmp_path: Path) -> None:
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    result = subprocess.run(
        [sys.executable, "-c", KEYWORD_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


LANGUAGES_SCRIPT = """
import sys
before = set(sys.modules)
from scidx import languages
for lang in languages.STEMMED_LANGUAGES:
    assert languages.stemmer(lang)("xyz") and languages.stop_words(lang), lang
new = set(sys.modules) - before
# The vendored Snowball stemmers need the stdlib alone (no numpy, no snowballstemmer).
outside = sorted(
    m for m in new
    if m.split(".")[0] != "scidx" and m.split(".")[0] not in sys.stdlib_module_names
)
assert not outside, outside
heavy = sorted({heavy!r} & set(sys.modules))
assert not heavy, heavy
assert "scidx.snowball._generated.german_stemmer" in sys.modules
print("ok")
"""


def test_languages_import_only_the_stdlib() -> None:
    result = subprocess.run(
        [sys.executable, "-c", LANGUAGES_SCRIPT.format(heavy=set(HEAVY))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
