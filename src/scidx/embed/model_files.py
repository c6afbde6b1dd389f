"""Finding and describing a local model: its folder, its files, its identity, the HF cache.

* **Model** — a folder holding ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``,
  a path to an ``.onnx`` file with ``tokenizer.json`` beside it or one folder up, or a Hugging
  Face model id (``org/name``) found in the standard local cache (``$HF_HUB_CACHE``, else
  ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``). Pooling (mean, cls, max,
  mean_sqrt_len) comes from the sentence-transformers files ``modules.json`` and
  ``1_Pooling/config.json`` when present (else mean); the maximum sequence length from
  ``sentence_bert_config.json`` (else ``tokenizer_config.json``), capped by ``config.json``'s
  ``max_position_embeddings``.
* **Identity** — :func:`model_identity` hashes (xxh3-128) the bytes of the ONNX file(s) and
  ``tokenizer.json`` plus the settings that change vectors (pooling, sequence length), never
  the folder path.

Nothing here loads a model or imports ``onnxruntime``/``tokenizers``; nothing is downloaded
unless the caller allows it. Used by :mod:`scidx.embed.local`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

from scidx.errors import ConfigError, EmbeddingError

__all__ = [
    "INSTALL_HINT",
    "POOLING_MODES",
    "ModelFiles",
    "find_in_hf_cache",
    "is_hf_id",
    "model_identity",
    "read_model_files",
    "resolve_model",
]

INSTALL_HINT = "pip install 'toolup-rag[local]'"
POOLING_MODES = ("mean", "cls", "max", "mean_sqrt_len")

_IDENTITY_DOMAIN = b"scidx-local-model-v1\x00"
_HF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*/[A-Za-z0-9][A-Za-z0-9._\-]*")
_HF_SNAPSHOT = re.compile(r"models--([^/]+?)--([^/]+)$")
_DEFAULT_MAX_TOKENS = 512


def is_hf_id(name: str) -> bool:
    """Whether ``name`` has the shape of a Hugging Face model id (``org/name``)."""
    return _HF_ID.fullmatch(name) is not None


@dataclass(frozen=True)
class ModelFiles:
    """What a model folder says about itself, before anything is loaded.

    Attributes:
        name: A readable name: the folder's name, or ``org/name`` for a Hugging Face snapshot.
        onnx: The ONNX file.
        tokenizer: The ``tokenizer.json`` file.
        pooling: ``mean``, ``cls``, ``max`` or ``mean_sqrt_len``.
        max_tokens: The model's maximum sequence length (special tokens included).
        position_limit: ``max_position_embeddings`` from ``config.json``, if given.
        dimensions: ``word_embedding_dimension`` from the pooling config, if given.
        vocab_size: ``vocab_size`` from ``config.json``, if given.
    """

    name: str
    onnx: Path
    tokenizer: Path
    pooling: str
    max_tokens: int
    position_limit: int | None
    dimensions: int | None
    vocab_size: int | None

    def weight_files(self) -> list[Path]:
        """The ONNX file and any external-data files beside it (``model.onnx_data``...)."""
        extra = sorted(
            p
            for p in self.onnx.parent.iterdir()
            if p.name != self.onnx.name and p.name.startswith(self.onnx.name) and p.is_file()
        )
        return [self.onnx, *extra]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read this model file ({exc}); restore it from the model's source"
        ) from None


def _positive_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _pooling(folder: Path) -> str:
    """The pooling mode from ``modules.json`` → the Pooling module's ``config.json`` (else mean)."""
    modules = _read_json(folder / "modules.json")
    pool_dir = folder / "1_Pooling"
    if isinstance(modules, list):
        for module in modules:
            if isinstance(module, dict) and str(module.get("type", "")).endswith(".Pooling"):
                path = module.get("path")
                if isinstance(path, str) and path and ".." not in Path(path).parts:
                    pool_dir = folder / path
    config = _read_json(pool_dir / "config.json")
    if not isinstance(config, dict):
        return "mean"
    modes = [
        mode
        for key, mode in (
            ("pooling_mode_cls_token", "cls"),
            ("pooling_mode_mean_tokens", "mean"),
            ("pooling_mode_max_tokens", "max"),
            ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len"),
        )
        if config.get(key) is True
    ]
    other = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
    if len(modes) != 1 or len(other) != 1:
        raise ConfigError(
            f"{pool_dir / 'config.json'}: scidx supports exactly one of the pooling modes "
            f"{', '.join(POOLING_MODES)}, but this model asks for {other or 'none'}"
        )
    return modes[0]


def _dimension_hint(folder: Path) -> int | None:
    config = _read_json(folder / "1_Pooling" / "config.json")
    return (
        _positive_int(config.get("word_embedding_dimension")) if isinstance(config, dict) else None
    )


def _snapshot_name(folder: Path) -> str | None:
    """``org/name`` when ``folder`` is ``.../models--org--name/snapshots/<revision>``."""
    if folder.parent.name != "snapshots":
        return None
    match = _HF_SNAPSHOT.search(folder.parent.parent.name)
    return f"{match.group(1)}/{match.group(2)}" if match else None


def read_model_files(location: Path, *, name: str | None = None) -> ModelFiles:
    """Describe the model at ``location`` (a folder or an ``.onnx`` file) without loading it.

    Args:
        location: The model folder, or its ONNX file.
        name: The readable name to record; default from the folder (see :class:`ModelFiles`).

    Returns:
        The model's files and settings.

    Raises:
        ConfigError: The folder, its ONNX file or its ``tokenizer.json`` is missing, or a
            sentence-transformers file is unreadable or asks for something unsupported.
    """
    location = Path(location)
    if location.is_file() and location.suffix == ".onnx":
        onnx = location
        folder = location.parent
        if (
            not (folder / "tokenizer.json").is_file()
            and (folder.parent / "tokenizer.json").is_file()
        ):
            folder = folder.parent
    elif location.is_dir():
        folder = location
        onnx = folder / "model.onnx"
        if not onnx.is_file() and (folder / "onnx" / "model.onnx").is_file():
            onnx = folder / "onnx" / "model.onnx"
        if not onnx.is_file():
            raise ConfigError(
                f"{location}: no model.onnx in this model folder (nor onnx/model.onnx); export "
                "the model to ONNX (e.g. with optimum) or point at the folder that holds it"
            )
    else:
        raise ConfigError(
            f"{location}: model folder not found; point the model setting at a folder holding "
            "model.onnx and tokenizer.json"
        )
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file():
        raise ConfigError(
            f"{folder}: no tokenizer.json in this model folder; save the model's fast tokenizer "
            "there (tokenizer.save_pretrained) next to model.onnx"
        )
    st_config = _read_json(folder / "sentence_bert_config.json")
    tok_config = _read_json(folder / "tokenizer_config.json")
    hf_config = _read_json(folder / "config.json")
    max_tokens = None
    if isinstance(st_config, dict):
        max_tokens = _positive_int(st_config.get("max_seq_length"))
    if max_tokens is None and isinstance(tok_config, dict):
        value = _positive_int(tok_config.get("model_max_length"))
        # transformers writes 1e30 for "no limit": not a usable length.
        max_tokens = value if value is not None and value <= 1_000_000 else None
    position_limit = None
    vocab_size = None
    if isinstance(hf_config, dict):
        position_limit = _positive_int(hf_config.get("max_position_embeddings"))
        vocab_size = _positive_int(hf_config.get("vocab_size"))
    max_tokens = max_tokens or position_limit or _DEFAULT_MAX_TOKENS
    if position_limit is not None:
        max_tokens = min(max_tokens, position_limit)
    return ModelFiles(
        name=name or _snapshot_name(folder) or folder.resolve().name,
        onnx=onnx,
        tokenizer=tokenizer,
        pooling=_pooling(folder),
        max_tokens=max_tokens,
        position_limit=position_limit,
        dimensions=_dimension_hint(folder),
        vocab_size=vocab_size,
    )


def model_identity(files: ModelFiles, *, pooling: str, max_tokens: int) -> str:
    """The xxh3-128 hex digest that identifies a model's vectors.

    It covers the bytes of the ONNX file(s) and ``tokenizer.json`` and the settings that change
    vectors, never a path: the same model anywhere has the same identity, and any change to its
    weights or tokenizer gives another.

    Raises:
        ConfigError: A file cannot be read.
    """
    digest = xxhash.xxh3_128(_IDENTITY_DOMAIN)
    for role, path in [
        *(("weights", p) for p in files.weight_files()),
        ("tokenizer", files.tokenizer),
    ]:
        try:
            with path.open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                digest.update(f"{role}\x00{size}\x00".encode())
                while block := fh.read(1 << 20):
                    digest.update(block)
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot read the model file ({exc.strerror or exc})"
            ) from None
    settings = {"pooling": pooling, "maxTokens": max_tokens, "normalization": "l2"}
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()


def _hf_cache_roots() -> list[Path]:
    roots = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(var, "").strip()
        if value:
            roots.append(Path(value).expanduser())
    home = os.environ.get("HF_HOME", "").strip()
    if home:
        roots.append(Path(home).expanduser() / "hub")
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    roots.append(base / "huggingface" / "hub")
    return list(dict.fromkeys(roots))


def find_in_hf_cache(repo_id: str, revision: str = "main") -> Path | None:
    """The snapshot folder of ``repo_id`` in the local Hugging Face cache, or None.

    Reads the cache layout (``models--org--name/refs/<revision>`` → ``snapshots/<commit>``)
    directly: no network, no ``huggingface_hub`` needed.
    """
    if not _HF_ID.fullmatch(repo_id):
        return None
    org, name = repo_id.split("/", 1)
    for root in _hf_cache_roots():
        repo = root / f"models--{org}--{name}"
        snapshots = repo / "snapshots"
        if not snapshots.is_dir():
            continue
        try:
            commit = (repo / "refs" / revision).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            commit = ""
        if commit and (snapshots / commit).is_dir():
            return snapshots / commit
        found = sorted(p for p in snapshots.iterdir() if p.is_dir())
        if len(found) == 1:
            return found[0]
    return None


def resolve_model(
    model: str | os.PathLike[str],
    *,
    root: Path | None = None,
    allow_download: bool = False,
) -> tuple[Path, str | None]:
    """Find the model a config names: ``(location, Hugging Face id or None)``.

    Args:
        model: A folder or ``.onnx`` path (relative to ``root``), or a Hugging Face model id.
        root: The folder relative paths start from (the config file's folder).
        allow_download: Fetch a Hugging Face id that is not cached (needs ``huggingface_hub``
            and a network); otherwise nothing is ever fetched.

    Raises:
        ConfigError: Neither an existing path nor a cached model id.
        EmbeddingError: The download was allowed but failed.
    """
    text = os.fspath(model)
    path = Path(text).expanduser()
    if not path.is_absolute() and root is not None:
        path = root / path
    if path.exists():
        return path, None
    if _HF_ID.fullmatch(text) and not text.startswith((".", "~")):
        cached = find_in_hf_cache(text)
        if cached is not None:
            return cached, text
        if allow_download:
            return _download(text), text
        raise ConfigError(
            f"model {text!r}: no such folder, and no Hugging Face model of that id in the local "
            f'cache ({", ".join(str(r) for r in _hf_cache_roots())}); point "model" at a '
            'folder with model.onnx and tokenizer.json, or set "allowDownload": true to fetch it'
        )
    raise ConfigError(
        f"model {text!r}: model folder not found ({path}); point the model setting at a folder "
        "holding model.onnx and tokenizer.json"
    )


def _download(repo_id: str) -> Path:
    """Fetch ``repo_id``'s ONNX model and tokenizer files into the Hugging Face cache."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise EmbeddingError(
            f"downloading {repo_id!r} needs huggingface_hub ({exc}); {INSTALL_HINT}"
        ) from None
    try:
        folder = snapshot_download(
            repo_id,
            allow_patterns=[
                "*.json",
                "model.onnx",
                "model.onnx_data",
                "onnx/model.onnx",
                "onnx/model.onnx_data",
                "1_Pooling/*",
            ],
        )
    except Exception as exc:  # the hub raises many types (offline, 404, timeouts)
        raise EmbeddingError(
            f"could not download the model {repo_id!r}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}; fetch it on a machine with a "
            'network and point "model" at the folder'
        ) from None
    return Path(folder)
