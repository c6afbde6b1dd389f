"""What keeps the code and its documentation from drifting: checked over the source tree itself.

* Every dotted ``scidx.*`` path written in the README, ``docs/`` or a docstring imports.
* No module-level import cycle, counting ``TYPE_CHECKING`` and function-level imports too
  (import-linter's contracts skip the former, and a lazy import still couples two modules).
* No function is longer than 100 lines (code and docstring), except the published stemmer's
  steps, which follow the Snowball text step by step, and the vendored code Snowball generates.
* CI (``.ci/run``) runs the README's test command and the static checks.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

# A dotted path that is not preceded by a word, a dot, a slash or a dash (so not a file name
# such as docs.scidx, nor a URL or a command name).
DOTTED = re.compile(r"(?<![\w./\\-])scidx(?:\.[A-Za-z_]\w*)+")
MAX_FUNCTION_LINES = 100
# The Snowball English stemmer's steps are written as published, however long (tokenize.py),
# and the other languages' stemmers are the Snowball compiler's output, vendored unedited.
LONG_FUNCTIONS_ALLOWED = re.compile(r"scidx\.tokenize\._step\w*|scidx\.snowball\._generated\..*")


def _documents() -> Iterator[tuple[str, str]]:
    """(where, text) for the README, every docs page and every docstring under src/scidx."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((SRC / "scidx").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module, or an attribute (at any depth) of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] != "scidx":
                return True  # the module exists but needs an extra that is not installed
            continue
        for attr in parts[cut:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif isinstance(obj, types.ModuleType):
                try:  # a submodule not imported by its package
                    obj = importlib.import_module(f"{obj.__name__}.{attr}")
                except ModuleNotFoundError:
                    return False
            else:
                return False
        return True
    return False


def test_every_dotted_scidx_path_in_the_docs_imports() -> None:
    from scidx.embed.registry import ENTRY_POINT_GROUP as EMBEDDERS
    from scidx.rag.rewrite import ENTRY_POINT_GROUP as REWRITERS
    from scidx.rerank.registry import ENTRY_POINT_GROUP as RERANKERS

    not_modules = {
        EMBEDDERS,
        RERANKERS,
        REWRITERS,
    }  # the plugins' entry-point groups: names, not modules
    broken: dict[str, list[str]] = {}
    for where, text in _documents():
        for match in DOTTED.finditer(text):
            dotted = match.group(0)
            if dotted not in not_modules and not _resolves(dotted):
                broken.setdefault(dotted, []).append(where)
    assert not broken, "dotted paths that do not import:\n" + "\n".join(
        f"  {dotted}: {', '.join(where)}" for dotted, where in sorted(broken.items())
    )


def test_the_dotted_path_check_catches_a_stale_path() -> None:
    assert _resolves("scidx.index.index.Index")
    assert _resolves("scidx.load")
    assert _resolves("scidx.index.retrieval.IndexRetriever.retrieve")
    assert not _resolves("scidx.pipeline.IndexRetriever")  # a module that moved
    assert not _resolves("scidx.index.format.NoSuchThing")
    assert [m.group(0) for m in DOTTED.finditer("see scidx.load; docs.scidx, x/scidx.git")] == [
        "scidx.load"
    ]


def _modules(src: Path) -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / "scidx").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the scidx modules it imports anywhere (top level, functions, TYPE_CHECKING)."""
    modules = _modules(src)
    graph: dict[str, set[str]] = {}
    for name, (path, package) in modules.items():
        here = name if package else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:
                        edges.add(sub)
                    elif base in modules:
                        edges.add(base)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_import_cycle() -> None:
    found = cycles(import_graph(SRC))
    assert not found, f"import cycles (TYPE_CHECKING and function-level imports count): {found}"


@pytest.mark.parametrize(
    "planted",
    [
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from scidx.index.index import Index\n",
        "def f():\n    from scidx.index import index\n",
        "def f():\n    from ..index.index import Index\n",
    ],
)
def test_a_planted_cycle_is_found(tmp_path: Path, planted: str) -> None:
    shutil.copytree(SRC / "scidx", tmp_path / "scidx", ignore=shutil.ignore_patterns("__pycache__"))
    # scidx.index.index imports scidx.index.params; the plant closes the loop.
    params = tmp_path / "scidx" / "index" / "params.py"
    params.write_text(params.read_text(encoding="utf-8") + "\n" + planted, encoding="utf-8")
    found = cycles(import_graph(tmp_path))
    assert any({"scidx.index.index", "scidx.index.params"} <= set(c) for c in found), found


def _long_functions(src: Path) -> list[str]:
    long: list[str] = []
    for name, (path, _) in _modules(src).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                qualified = f"{name}.{node.name}"
                if lines > MAX_FUNCTION_LINES and not LONG_FUNCTIONS_ALLOWED.fullmatch(qualified):
                    long.append(f"{qualified} ({path.relative_to(src)}:{node.lineno}): {lines}")
    return long


def test_no_function_is_longer_than_100_lines() -> None:
    long = _long_functions(SRC)
    assert not long, "functions over 100 lines (code and docstring):\n  " + "\n  ".join(long)


def test_the_length_check_counts_the_docstring(tmp_path: Path) -> None:
    body = "    x = 1\n" * 97
    (tmp_path / "scidx").mkdir()
    (tmp_path / "scidx" / "m.py").write_text(f'def ok():\n    """Doc."""\n{body}', "utf-8")
    assert _long_functions(tmp_path) == []  # 1 + 1 + 97 + ... = 99 lines
    (tmp_path / "scidx" / "m.py").write_text(f'def f():\n    """Doc.\n\n    More.\n    """\n{body}')
    assert _long_functions(tmp_path) == ["scidx.m.f (scidx/m.py:1): 102"]


def test_ci_runs_the_readme_test_command_and_the_static_checks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(
        line.strip() for line in readme.splitlines() if "-m pytest" in line and "venv" in line
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci
    for check in (
        ".venv/bin/ruff check src tests benchmarks",
        ".venv/bin/ruff format --check src tests benchmarks",
        ".venv/bin/mypy",
        ".venv/bin/lint-imports",
    ):
        assert any(line.startswith(check + " ") or line == check for line in ci), check


def test_no_test_module_imports_another() -> None:
    """Shared helpers live in tests/support, never in a test_*.py."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[-1].startswith("test_"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not offenders, offenders


def test_shared_test_support_lives_in_one_place() -> None:
    """Beside the tests sit only test modules and conftest.py; every helper is in tests/support."""
    stray = [
        path.name
        for path in sorted((ROOT / "tests").glob("*.py"))
        if not path.name.startswith("test_") and path.name != "conftest.py"
    ]
    assert not stray, f"move these into tests/support/: {stray}"
