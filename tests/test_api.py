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
