"""The public API surface: exported names, lazy build-time names, light imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import scidx
import scidx.errors


def test_exported_members() -> None:
    assert scidx.__all__ == sorted(scidx.__all__)
    for name in scidx.__all__:
        assert getattr(scidx, name) is not None, name
    assert set(dir(scidx)) >= set(scidx.__all__)


def test_every_error_is_importable_from_scidx() -> None:
    for name in scidx.errors.__all__:
        cls = getattr(scidx, name)
        assert issubclass(cls, scidx.ScidxError)
        assert cls.__doc__, name
    assert issubclass(scidx.QueryError, ValueError)


def test_unknown_attribute() -> None:
    try:
        scidx.does_not_exist  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "does_not_exist" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_scidx_is_light(tmp_path: Path) -> None:
    index = tmp_path / "t.scidx"
    scidx.pack_records([{"id": "a", "text": "hello world"}], index, dimensions=16)
    code = (
        "import sys, json, scidx\n"
        f"idx = scidx.load({str(index)!r})\n"
        "hits = [h.id for h in idx.search('hello', k=1)]\n"
        "heavy = sorted({'typer', 'rich', 'markdown_it', 'openai', 'platformdirs', 'click'}"
        " & {m.split('.')[0] for m in sys.modules})\n"
        "print(json.dumps([hits, heavy]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == [["a"], []]


def test_runtime_works_without_the_build_stack_installed(tmp_path: Path) -> None:
    """A runtime-only install (numpy, msgpack, xxhash): the build-time packages are absent."""
    index = tmp_path / "t.scidx"
    scidx.pack_records(
        [{"id": "a", "text": "hello world"}, {"id": "b", "text": "other words"}],
        index,
        dimensions=16,
    )
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'typer', 'rich', 'markdown_it', 'openai',"
        " 'platformdirs', 'click'}:\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import scidx\n"
        f"idx = scidx.load({str(index)!r}, verify=True)\n"
        "modes = ('keyword', 'vector', 'hybrid')\n"
        "print(*[idx.search('hello', k=1, mode=m)[0].id for m in modes])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["a", "a", "a"]


def test_the_error_tree_in_the_docstring_matches_the_classes() -> None:
    import re

    from scidx import errors

    tree: dict[str, str] = {}
    codes: dict[str, int] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^(\s*)(?:[│ ]*[├└]── )?(\w+Error)\b(.*)$", line)
        if not m:
            continue
        depth = len(line) - len(line.lstrip(" │├└─"))
        name = m.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            tree[name] = stack[-1][1]
        # "InputError (ConfigError)" drawn beside its parent's siblings names the real parent.
        declared = re.match(r"\s*\((\w+Error)\)", m.group(3))
        if declared:
            tree[name] = declared.group(1)
        stack.append((depth, name))
        code = re.search(r"exit (\d)", m.group(3))
        if code:
            codes[name] = int(code.group(1))
    classes = {
        n: c for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, Exception)
    }
    scidx_classes = {n for n, c in classes.items() if issubclass(c, errors.ScidxError)}
    assert set(tree) | {"ScidxError"} == scidx_classes
    for name, parent in tree.items():
        bases = {b.__name__ for b in classes[name].__bases__}
        assert parent in bases, f"{name}'s parent is {parent} in the docstring, {bases} in code"
    for name, code in codes.items():
        assert classes[name].exit_code == code, f"{name} exits {classes[name].exit_code}"
