"""The shared MiniLM model folder as the local-provider tests use it: its files and a project."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

__all__ = ["DOCS", "MODEL_FILES", "copy_model", "make_project"]

MODEL_FILES = (
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "modules.json",
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config_sentence_transformers.json",
)

DOCS = {
    "install.md": "# Install\n\n## Linux\n\nRun the installer script to set up the agent on a "
    "server.\n\n## Windows\n\nDownload the MSI package and double-click it.\n",
    "pets.md": "# Pets\n\n## Cats\n\nA cat is a small furry animal that purrs and sleeps all "
    "day.\n\n## Dogs\n\nDogs bark at the postman and love long walks.\n",
}


def copy_model(src: Path, dest: Path) -> Path:
    """A private copy of the model folder (the ONNX file hard-linked or copied)."""
    dest.mkdir(parents=True)
    for name in MODEL_FILES:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "model.onnx":
            try:
                os.link(src / name, target)
                continue
            except OSError:
                pass
        shutil.copyfile(src / name, target)
    return dest


def make_project(root: Path, model: str | Path, **extra: object) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    cfg = root / "staticcorpus.json"
    settings = {
        "include": ["docs/**/*.md"],
        "output": "docs.scidx",
        "embeddingProvider": "local",
        "model": str(model),
        **extra,
    }
    cfg.write_text(json.dumps(settings), encoding="utf-8")
    return cfg
