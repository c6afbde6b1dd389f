"""Which docs generator a folder is built with, from the generator's own config file.

Looked for beside the ``staticcorpus.json`` (its folder), then in that folder's immediate
subfolders (``docs/``, ``website/``: where MkDocs, Docusaurus, VitePress, Starlight and Sphinx
projects keep it), then in the folders above it up to the repository root (the folder holding
``.git``) or three levels. The first folder with a marker decides; within a folder the order of
:data:`MARKERS` does.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_GENERATOR", "MARKERS", "detect_generator"]

#: (file or folder name, generator), in precedence order.
MARKERS: tuple[tuple[str, str], ...] = (
    ("mkdocs.yml", "mkdocs"),
    ("mkdocs.yaml", "mkdocs"),
    *((f"docusaurus.config.{ext}", "docusaurus") for ext in ("js", "ts", "mjs", "cjs", "mts")),
    (".vitepress", "vitepress"),
    *((f"astro.config.{ext}", "starlight") for ext in ("mjs", "ts", "js", "mts", "cjs")),
    ("conf.py", "myst"),
    ("book.toml", "mdbook"),
    *((f"hugo.{ext}", "hugo") for ext in ("toml", "yaml", "yml", "json")),
)
#: The generator of a folder with no known config: GitHub renders it.
DEFAULT_GENERATOR = "github"
_UP_LEVELS = 3


def _marker(folder: Path) -> str | None:
    for name, generator in MARKERS:
        try:
            if (folder / name).exists():
                return generator
        except OSError:  # unreadable folder: no marker
            continue
    return None


def detect_generator(root: Path) -> str:
    """The generator whose config sits beside, just below or above ``root``.

    Args:
        root: The ``staticcorpus.json`` folder.

    Returns:
        A generator name (``"mkdocs"``, ``"docusaurus"``, ...) or :data:`DEFAULT_GENERATOR`.
    """
    found = _marker(root)
    if found is not None:
        return found
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        children = []
    for child in children:
        found = _marker(child)
        if found is not None:
            return found
    folder = root
    for _ in range(_UP_LEVELS):
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
        found = _marker(folder)
        if found is not None:
            return found
    return DEFAULT_GENERATOR
