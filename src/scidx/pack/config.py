"""Read and validate ``staticcorpus.json`` into a :class:`Config`, and collect its input files.

Contract:

* :func:`load_config` / :func:`config_from_dict` either return a fully validated, frozen
  :class:`Config` or raise :class:`~scidx.errors.ConfigError` whose message names the file, the
  key and the offending value and says how to fix it.
* All paths and globs are relative to the config file's folder (``Config.root``).
* :func:`collect_inputs` is deterministic: the result is sorted bytewise by the UTF-8 source path
  and never depends on the order in which the file system lists directories.

Glob syntax (used by ``include`` and ``exclude``; always ``/``-separated and case-sensitive):

* ``*`` matches any run of characters inside one path segment, ``?`` one character,
  ``[abc]`` / ``[!abc]`` a character class;
* a whole segment ``**`` matches zero or more segments (``docs/**/*.md`` matches
  ``docs/a.md`` and ``docs/x/y/a.md``);
* names starting with a dot are *not* special (``*.md`` matches ``..md`` and ``.github/x.md``
  is matched by ``**/*.md``), as in :meth:`pathlib.Path.glob`; use ``exclude`` to drop them.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

import xxhash

from scidx.embed.openai_models import DEFAULT_MODEL as OPENAI_DEFAULT_MODEL
from scidx.embed.openai_models import MODELS as OPENAI_MODELS
from scidx.errors import ConfigError
from scidx.index.urls import URL_PLACEHOLDERS, source_root_problem, url_template_problem
from scidx.index.vectors import DEFAULT_ENCODING, ENCODINGS, UNDECLARED_ENCODING
from scidx.pack.flavours import GENERATORS
from scidx.pack.flavours.detect import Detection, detect, find_configs, sample_texts
from scidx.pack.globs import compile_glob
from scidx.pack.site import Site, derive_site
from scidx.pack.versions import Versions, config_versions, docusaurus_versions

__all__ = [
    "CONFIG_FILENAME",
    "URL_PLACEHOLDERS",
    "AnchorStyle",
    "Config",
    "Provider",
    "config_from_dict",
    "load_config",
]

CONFIG_FILENAME = "staticcorpus.json"

# A built-in provider ("hashing", "openai", "local") or a plugin's name (scidx.embedders).
Provider = str
AnchorStyle = Literal["github", "mkdocs", "vitepress", "docutils"]

PROVIDERS = ("hashing", "openai", "local")
DEFAULT_MODELS = {"hashing": "hashing-v2", "openai": OPENAI_DEFAULT_MODEL}
# Keys that only the local provider reads.
_LOCAL_KEYS = ("threads", "maxTokens", "windowOverlap", "allowDownload")
ANCHOR_STYLES = ("github", "mkdocs", "vitepress", "docutils")
_DEFAULT_ANCHORS = {"mkdocs": "mkdocs", "vitepress": "vitepress", "myst": "docutils"}
# Full vector lengths of the OpenAI models scidx knows (from the one model table).
OPENAI_NATIVE_DIMENSIONS = {model: info.native_dimensions for model, info in OPENAI_MODELS.items()}

# JSON key -> (allowed inclusive range) for the integer settings. The hashing embedder needs a
# few buckets to be useful, hence its higher floor.
_INT_RANGES: dict[str, tuple[int, int]] = {
    "dimensions": (1, 8192),
    "maxChunkChars": (200, 1_000_000),
    # 2048 is the OpenAI embeddings API's limit on inputs per request.
    "batchSize": (1, 2048),
    "concurrency": (1, 64),
    "threads": (1, 256),
    "maxTokens": (2, 1_000_000),
    "windowOverlap": (0, 500_000),
}
_HASHING_MIN_DIMENSIONS = 8
_MAX_TIMEOUT = 3600.0

# Every key the file may contain. "$schema" is accepted (and ignored) so editors can attach a
# JSON schema for completion.
KNOWN_KEYS = (
    "$schema",
    "include",
    "exclude",
    "embeddingProvider",
    "model",
    "dimensions",
    "maxChunkChars",
    "output",
    "anchorStyle",
    "generator",
    "vectors",
    "snippetOffsets",
    "cacheDir",
    "urlTemplate",
    "sourceRoot",
    "baseUrl",
    "batchSize",
    "concurrency",
    "timeoutSeconds",
    "threads",
    "maxTokens",
    "windowOverlap",
    "allowDownload",
    "providerOptions",
    "allowExternalSymlinks",
    # Docs versions (issue 40; scidx.pack.versions).
    "version",
    "versions",
    # Languages (issue 42).
    "language",
    "locale",
)


@dataclass(frozen=True)
class Config:
    """A validated ``staticcorpus.json``.

    Build it with :func:`load_config` or :func:`config_from_dict`; constructing it directly skips
    validation. Fields after ``include`` are keyword-only.

    Attributes:
        root: The config file's folder (absolute, resolved); every path and glob is relative to it.
        path: The config file itself, or ``None`` when built from a mapping.
        include: Globs of the input files (at least one).
        exclude: Globs removed from the matched files.
        output: The ``.scidx`` file to write (absolute).
        embedding_provider: ``"hashing"`` (offline), ``"openai"``, ``"local"`` (an ONNX model
            on the CPU) or the name of an installed provider plugin.
        model: The embedding model; ``config_from_dict`` fills in the provider's default. For
            ``local``: a model folder (relative to ``root``) or a Hugging Face model id.
        dimensions: Vector dimensions; 0 for ``local`` and plugins means the model's own.
        max_chunk_chars: Upper bound on a chunk's Markdown length.
        anchor_style: Heading-slug flavour, ``"github"``, ``"mkdocs"``, ``"vitepress"`` or
            ``"docutils"`` (default: the generator's own, ``"github"`` for the others).
        generator: The docs generator whose Markdown syntax the inputs use (one of
            :data:`~scidx.pack.flavours.GENERATORS`); ``config_from_dict`` detects it from the
            generator's config file or the Markdown (:func:`~scidx.pack.flavours.detect.detect`).
        vectors: Vector encoding in the index: ``"float32"`` (default), ``"int8"`` or
            ``"binary"`` (see :mod:`scidx.index.vectors`).
        snippet_offsets: Store which eighth of each chunk's text holds each of its terms
            (``snippet.where``, one byte per posting; see :mod:`scidx.index.offsets`), so a
            snippet reads and scans only that part. Off: a smaller file whose snippets read
            and scan the whole text (slower; the same marks, the best window over all words).
        cache_dir: Embedding-cache folder (absolute), or ``None`` for the default.
        url_template: Link pattern with ``{source}``, ``{path}``, ``{page}`` and ``{anchor}``
            placeholders.
        source_root: The folder the docs site is built from (``"docs/src"`` for an mdBook whose
            book.toml is in ``docs/``); URL placeholders are relative to it. ``None``: the root.
        base_url: Base URL of an OpenAI-compatible server.
        batch_size: Texts per embedding request (None: the provider's default).
        concurrency: Embedding requests in flight.
        timeout: Seconds before an embedding request is abandoned.
        threads: ``local``: ONNX Runtime threads (None: one per core).
        max_tokens: ``local``: cut model inputs at this many tokens (None: the model's limit).
        window_overlap: ``local``: tokens each window of a long chunk shares with the previous
            one (None: the provider's default, ``scidx.embed.local.WINDOW_OVERLAP``).
        allow_download: ``local``: fetch a Hugging Face model id missing from the local cache.
        provider_options: A plugin provider's own settings (a JSON object).
        allow_external_symlinks: Follow symlinks that resolve outside ``root`` (off by
            default: such a link is refused, so ``docs/x.md -> /etc/passwd`` cannot be packed).
        site: What the generator's config says about published URLs
            (:func:`~scidx.pack.site.derive_site`): the template derived when the config has
            no ``urlTemplate``, and the page-path rules stored per source.
        detection: Where ``generator`` came from (the ``generator`` key, a config file, the
            content), for the pack summary; None when built without validation.
        versions: Each page's docs version (:mod:`scidx.pack.versions`): from ``version`` /
            ``versions``, else the generator's layout (Docusaurus ``versions.json``); None
            for an unversioned site.
    """

    root: Path
    path: Path | None
    include: tuple[str, ...]
    _: KW_ONLY
    output: Path
    exclude: tuple[str, ...] = ()
    embedding_provider: Provider = "hashing"
    model: str | None = None
    dimensions: int = 512
    max_chunk_chars: int = 1500
    anchor_style: AnchorStyle = "github"
    generator: str = "commonmark"
    vectors: str = DEFAULT_ENCODING
    snippet_offsets: bool = True
    cache_dir: Path | None = None
    url_template: str | None = None
    source_root: str | None = None
    base_url: str | None = None
    batch_size: int | None = None
    concurrency: int = 4
    allow_external_symlinks: bool = False
    timeout: float = 60.0
    threads: int | None = None
    max_tokens: int | None = None
    window_overlap: int | None = None
    allow_download: bool = False
    provider_options: dict[str, Any] | None = None
    site: Site | None = None
    # Diagnostics only: two configs that pack the same index compare equal.
    detection: Detection | None = field(default=None, compare=False)
    versions: Versions | None = None
    # Languages (issue 42): the pages' language when front matter and folders do not say, and
    # the search page's UI language (default: the index's language).
    language: str | None = None
    locale: str | None = None

    @property
    def model_id(self) -> str:
        """The model name, falling back to the provider's default when ``model`` is ``None``."""
        return self.model or DEFAULT_MODELS.get(self.embedding_provider, "")

    def canonical(self) -> dict[str, Any]:
        """The settings that determine the index content, as a JSON-able mapping.

        Only root-relative values appear, so the same project checked out in two places gives
        the same mapping. Settings that cannot change the index bytes (``output``, ``cacheDir``,
        ``batchSize``, ``concurrency``, ``timeoutSeconds``) are left out, and so is ``baseUrl``
        (it may carry credentials; the provider stamp already names the model). Glob lists are
        sorted and de-duplicated because their order does not change the result.

        Returns:
            A mapping with JSON key names.
        """
        out: dict[str, Any] = {
            "include": sorted(set(self.include)),
            "exclude": sorted(set(self.exclude)),
            "embeddingProvider": self.embedding_provider,
            "model": self.model_id,
            "dimensions": self.dimensions,
            "maxChunkChars": self.max_chunk_chars,
            "anchorStyle": self.anchor_style,
            "generator": self.generator,
            "urlTemplate": self.url_template,
            # Only when not float32 (what every config meant before encodings existed), so a
            # config's hash changes exactly when what it packs does (the default is int8 since
            # packer 7: a config without the key now packs int8, and gets a new hash).
            **({"vectors": self.vectors} if self.vectors != UNDECLARED_ENCODING else {}),
        }
        # Only when set, so that configs without them keep the hash they always had.
        if self.max_tokens is not None:
            out["maxTokens"] = self.max_tokens
        if self.window_overlap is not None:
            out["windowOverlap"] = self.window_overlap
        if self.provider_options:
            out["providerOptions"] = self.provider_options
        if self.source_root is not None:
            # Only when set, so configs without it keep their hash.
            out["sourceRoot"] = self.source_root
        if not self.snippet_offsets:
            out["snippetOffsets"] = False
        if self.site is not None and self.site.pages is not None:
            # Only with stored page paths, so other configs keep their hash.
            out["sitePages"] = self.site.canonical()
        if self.versions is not None:
            # Only for a versioned site, so other configs keep their hash.
            out["versions"] = self.versions.canonical()
        # Languages (issue 42): only when set, so other configs keep their hash.
        if self.language is not None:
            out["language"] = self.language
        if self.locale is not None:
            out["locale"] = self.locale
        return out

    def config_hash(self) -> str:
        """The xxh3-128 hex digest of :meth:`canonical` as compact, key-sorted JSON."""
        text = json.dumps(
            self.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def _languages(check: Any) -> tuple[str | None, str | None]:
    """``language`` and ``locale`` (issue 42): language tags such as ``"de"`` or ``"zh-Hans"``."""
    from scidx.pack.language import language_tag

    out: list[str | None] = []
    for key in ("language", "locale"):
        value = check.optional_string(key)
        tag = language_tag(value) if value is not None else None
        if value is not None and tag is None:
            raise check.fail(key, 'a language tag such as "en", "de" or "zh-Hans"')
        out.append(tag)
    return out[0], out[1]


# --------------------------------------------------------------------------------------------
# Loading


def load_config(path: str | Path) -> Config:
    """Read and validate a ``staticcorpus.json``.

    Args:
        path: The config file. Its folder becomes ``Config.root``.

    Returns:
        The validated configuration.

    Raises:
        ConfigError: The file is missing, unreadable, not JSON, or has an invalid setting.

    Example:
        >>> config = load_config("staticcorpus.json")  # doctest: +SKIP
        >>> [f.source for f in collect_inputs(config)][:2]  # doctest: +SKIP
        ['docs/index.md', 'docs/install.md']
    """
    label = str(path)
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"{label}: config file not found; create it (see staticcorpus.example.json) "
            "or pass the right path"
        ) from None
    except IsADirectoryError:
        raise ConfigError(
            f"{label}: is a folder, not a config file; pass the path of {CONFIG_FILENAME}"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot read config file: {exc.strerror or exc}") from None
    try:
        # utf-8-sig: editors on Windows like to prepend a BOM, which json.loads rejects.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{label}: not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
        ) from None
    try:
        data = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_int=_bounded_int,
        )
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{label}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except _JSONValueError as exc:
        raise ConfigError(f"{label}: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{label}: the JSON is nested too deeply to be a staticcorpus config; keys take "
            "strings, numbers and lists of strings"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{label}: the top level must be a JSON object like "
            f'{{"include": ["docs/**/*.md"], "output": "docs.scidx"}}, got {_json_type(data)}'
        )
    resolved = file.resolve()
    return _validate(data, root=resolved.parent, path=resolved, label=label)


def config_from_dict(data: Mapping[str, Any], *, root: Path, path: Path | None = None) -> Config:
    """Validate a mapping with the same keys as ``staticcorpus.json``.

    Args:
        data: The settings, with JSON key names (``maxChunkChars``, ...).
        root: The folder that paths and globs are relative to.
        path: The file the settings came from, used in messages and stored in ``Config.path``.

    Returns:
        The validated configuration.

    Raises:
        ConfigError: A setting is missing or invalid.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"config: expected a mapping of settings, got {type(data).__name__}")
    label = str(path) if path is not None else CONFIG_FILENAME
    resolved_path = Path(path).resolve() if path is not None else None
    return _validate(data, root=Path(root).resolve(), path=resolved_path, label=label)


class _JSONValueError(ValueError):
    """A JSON document that parses but that scidx refuses (duplicate keys, NaN)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json silently keeps the last of two equal keys; a user editing the first would be puzzled.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _JSONValueError(f'key "{key}" appears twice; keep only one')
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    # int() refuses over 4,300 digits with a message about sys.set_int_max_str_digits; no
    # setting needs more than a few digits, so say that instead.
    digits = len(text.lstrip("-"))
    if digits > 30:
        raise _JSONValueError(
            f"a number with {digits} digits is far outside the range of any setting"
        )
    return int(text)


def _no_constant(name: str) -> Any:
    raise _JSONValueError(f"{name} is not valid JSON; use a finite number")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def show_value(value: object) -> str:
    """Render a value as JSON for a message, shortened so a huge value cannot flood the output."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Checker:
    """Per-file validation helpers that format messages uniformly."""

    def __init__(self, data: Mapping[str, Any], label: str) -> None:
        self.data = data
        self.label = label

    def fail(self, key: str, expected: str, hint: str = "") -> ConfigError:
        value = self.data[key]
        message = f'{self.label}: "{key}" must be {expected}, got {show_value(value)}'
        return ConfigError(message + (f"; {hint}" if hint else ""))

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, str) and value in choices:
            return value
        options = " or ".join(f'"{c}"' for c in choices)
        close = (
            difflib.get_close_matches(value.lower(), choices, n=1) if isinstance(value, str) else []
        )
        hint = f'did you mean "{close[0]}"?' if close else ""
        raise self.fail(key, options, hint)

    def integer(self, key: str, default: int, low: int, high: int, context: str = "") -> int:
        if key not in self.data:
            return default
        value = self.data[key]
        # bool is a subclass of int: `"dimensions": true` must not pass as 1.
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"an integer from {low} to {high}{context}")
        return value

    def optional_string(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "a non-empty string or null")
        return value

    def globs(self, key: str, *, required: bool) -> tuple[str, ...]:
        if key not in self.data:
            if required:
                raise ConfigError(
                    f'{self.label}: missing required key "{key}"; add e.g. '
                    f'"{key}": ["docs/**/*.md"]'
                )
            return ()
        value = self.data[key]
        # A single string is accepted as a one-glob list: it is unambiguous and a common slip.
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(g, str) for g in items):
            raise self.fail(key, 'an array of glob strings like ["docs/**/*.md"]')
        if required and not items:
            raise self.fail(key, "a non-empty array of globs", 'add e.g. "docs/**/*.md"')
        for glob in items:
            problem = _glob_problem(glob)
            if problem:
                raise ConfigError(f'{self.label}: "{key}" glob {show_value(glob)} {problem}')
        return tuple(items)


def _glob_problem(glob: str) -> str:
    """Explain why ``glob`` cannot be used, or return ``""``."""
    if not glob.strip():
        return 'is empty; remove it or write a pattern like "docs/**/*.md"'
    if "\\" in glob:
        return 'contains "\\"; use "/" as the path separator'
    if glob.startswith("/") or re.match(r"^[A-Za-z]:", glob):
        return "is absolute; write it relative to the folder of the config file"
    if glob.endswith("/"):
        return f'ends with "/"; to match the files inside use "{glob}**/*.md"'
    parts = glob.split("/")
    if ".." in parts:
        return (
            'leaves the config folder through ".."; move the config file to a folder that '
            'contains every input, or use a symlink inside it with "allowExternalSymlinks": true'
        )
    if "" in parts:
        return 'contains an empty segment ("//"); remove the extra "/"'
    try:
        compile_glob(glob)
    except re.error:
        return 'has an unbalanced "["; write "[[]" to match a literal "["'
    return ""


_PATH_KEYS = ("include", "exclude", "output", "cacheDir")


def _check_strings(data: Mapping[str, Any], label: str) -> None:
    """Refuse strings no file system or index can hold, before any key is used.

    A lone surrogate (``"\\ud800"`` in JSON) cannot be encoded as UTF-8: it would fail deep
    inside path handling or the index writer. A NUL byte cannot be part of a path.
    """
    for key, value in data.items():
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str):
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ConfigError(
                    f'{label}: "{key}" contains the lone surrogate U+{ord(item[exc.start]):04X} '
                    f"at position {exc.start}, which is not valid Unicode text; remove it or "
                    "write the character it was meant to be"
                ) from None
            if key in _PATH_KEYS and "\x00" in item:
                raise ConfigError(
                    f'{label}: "{key}" contains a NUL character (\\u0000) at position '
                    f"{item.index(chr(0))}; a path cannot hold one"
                )


def _validate(data: Mapping[str, Any], *, root: Path, path: Path | None, label: str) -> Config:
    # The checks run in the order of the keys' documentation: with several mistakes, the
    # first one reported stays the same.
    _check_keys(data, label)
    check = _Checker(data, label)
    _check_strings(data, label)

    include = check.globs("include", required=True)
    exclude = check.globs("exclude", required=False)

    provider = _provider(data, check)
    model = _model(data, check, provider)
    dimensions = _dimensions(data, check, provider, model)
    max_chunk_chars = check.integer("maxChunkChars", 1500, *_INT_RANGES["maxChunkChars"])
    batch_size = check.integer("batchSize", 0, *_INT_RANGES["batchSize"]) or None
    concurrency = check.integer("concurrency", 4, *_INT_RANGES["concurrency"])
    threads = check.integer("threads", 0, *_INT_RANGES["threads"]) or None
    max_tokens = check.integer("maxTokens", 0, *_INT_RANGES["maxTokens"]) or None
    window_overlap = (
        check.integer("windowOverlap", 0, *_INT_RANGES["windowOverlap"])
        if "windowOverlap" in data
        else None
    )
    allow_download = data.get("allowDownload", False)
    if not isinstance(allow_download, bool):
        raise check.fail("allowDownload", "true or false")
    provider_options = data.get("providerOptions")
    if provider_options is not None and not isinstance(provider_options, dict):
        raise check.fail("providerOptions", "a JSON object of the plugin's settings")
    timeout = _timeout(data, check)

    detection = _detection(check, root, include, exclude)
    generator = detection.generator
    # Each generator's own heading ids (Docusaurus and Starlight use github-slugger; Sphinx
    # gives every MyST heading its docutils id).
    default_anchors = _DEFAULT_ANCHORS.get(generator, "github")
    anchor_style = cast(AnchorStyle, check.choice("anchorStyle", ANCHOR_STYLES, default_anchors))
    vectors = check.choice("vectors", ENCODINGS, DEFAULT_ENCODING)
    snippet_offsets = data.get("snippetOffsets", True)
    if not isinstance(snippet_offsets, bool):
        raise check.fail("snippetOffsets", "true or false")
    output = _output(data, check, root)

    cache_value = check.optional_string("cacheDir")
    # "~" is expanded because a per-user cache folder is the common choice.
    cache_dir = (
        Path(os.path.abspath(root / Path(cache_value).expanduser()))
        if cache_value is not None
        else None
    )

    url_template = _url_template(check)
    allow_external = data.get("allowExternalSymlinks", False)
    if not isinstance(allow_external, bool):
        raise check.fail("allowExternalSymlinks", "true or false")
    source_root = _source_root(check)
    base_url = _base_url(check, provider)
    site, url_template, source_root = _site_urls(
        detection, root, url_template, source_root, include
    )
    versions = _versions(data, label, generator, root, site)
    language, locale = _languages(check)

    return Config(
        root,
        path,
        include,
        output=output,
        exclude=exclude,
        embedding_provider=provider,
        model=model,
        dimensions=dimensions,
        max_chunk_chars=max_chunk_chars,
        anchor_style=anchor_style,
        generator=generator,
        vectors=vectors,
        snippet_offsets=snippet_offsets,
        cache_dir=cache_dir,
        url_template=url_template,
        source_root=source_root,
        base_url=base_url,
        batch_size=batch_size,
        concurrency=concurrency,
        timeout=timeout,
        threads=threads,
        max_tokens=max_tokens,
        window_overlap=window_overlap,
        allow_download=allow_download,
        provider_options=dict(provider_options) if provider_options else None,
        allow_external_symlinks=allow_external,
        language=language,
        locale=locale,
        site=site,
        detection=detection,
        versions=versions,
    )


def _url_template(check: _Checker) -> str | None:
    """The config's ``urlTemplate``, checked to be a usable URL pattern (None: not set)."""
    url_template = check.optional_string("urlTemplate")
    if url_template is not None:
        problem = url_template_problem(url_template)
        if problem:
            raise check.fail(
                "urlTemplate",
                'a URL pattern like "https://docs.example.com/{path}#{anchor}"',
                problem,
            )
    return url_template


def _detection(
    check: _Checker, root: Path, include: tuple[str, ...], exclude: tuple[str, ...]
) -> Detection:
    """The ``generator`` key's, else the one detection finds (its config, else the inputs)."""
    forced = check.choice("generator", GENERATORS, "")
    if forced:
        return Detection(forced, "key")
    return detect(root, sample_texts(root, include, exclude))


# --- docs versions (issue 40) ------------------------------------------------------------------


def _versions(
    data: Mapping[str, Any], label: str, generator: str, root: Path, site: Site | None
) -> Versions | None:
    """The config's ``version``/``versions``, else the generator's layout (Docusaurus)."""
    found = config_versions(data, label, generator)
    if found is not None or generator != "docusaurus" or site is None:
        return found
    config = root / site.config
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return docusaurus_versions(config, text, root, site.docs_dir)


def _site_urls(
    detection: Detection,
    root: Path,
    url_template: str | None,
    source_root: str | None,
    include: tuple[str, ...],
) -> tuple[Site | None, str | None, str | None]:
    """The generator's site (pages, derived template), and the template and root to use.

    A ``urlTemplate`` from the config always wins. Without one, the template the generator's
    config implies is used, with its docs folder as ``sourceRoot`` (unless the config names
    another). Page paths are stored only when ``sourceRoot`` is the docs folder, which is what
    they are relative to.
    """
    generator = detection.generator
    configs = list(detection.configs)
    if detection.origin == "key":  # forced: its configs where detection would look
        configs = [p for g, p in find_configs(root) if g == generator]
    site = derive_site(generator, root, configs, include) if configs else None
    if site is None:
        return None, url_template, source_root
    if (
        url_template is None
        and site.template is not None
        and site.docs_dir is not None
        and (source_root is None or source_root == site.docs_dir)
    ):
        url_template, source_root = site.template, site.docs_dir or None
        site = replace(site, derived=True)
    if site.pages is not None and (source_root or "") != site.docs_dir:
        site = replace(site, pages=None)
    return site, url_template, source_root


def _check_keys(data: Mapping[str, Any], label: str) -> None:
    """Refuse an unknown top-level key, suggesting the closest known one."""
    for key in data:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(str(key), KNOWN_KEYS[1:], n=1, cutoff=0.6)
            hint = (
                f'; did you mean "{close[0]}"?'
                if close
                else ("; known keys: " + ", ".join(KNOWN_KEYS[1:]))
            )
            raise ConfigError(f'{label}: unknown key "{key}"{hint}')


def _model(data: Mapping[str, Any], check: _Checker, provider: str) -> str | None:
    """The ``model`` (the provider's default when absent), and no other provider's settings."""
    model = check.optional_string("model")
    if provider == "hashing" and model is not None and model != DEFAULT_MODELS["hashing"]:
        raise check.fail(
            "model",
            f'"{DEFAULT_MODELS["hashing"]}" (or absent) for embeddingProvider "hashing"',
            'remove "model" or set "embeddingProvider": "openai" or "local"',
        )
    if provider == "local" and model is None:
        raise ConfigError(
            f'{check.label}: "model" is required for embeddingProvider "local": the folder '
            'holding model.onnx and tokenizer.json (e.g. "models/all-MiniLM-L6-v2"), or a '
            "Hugging Face model id in the local cache"
        )
    for key in _LOCAL_KEYS:
        if key in data and provider != "local":
            raise check.fail(
                key, f'absent for embeddingProvider "{provider}"', "it is a local-provider setting"
            )
    if "providerOptions" in data and provider in PROVIDERS:
        raise check.fail(
            "providerOptions",
            f'absent for embeddingProvider "{provider}"',
            "it is for provider plugins",
        )
    return model or DEFAULT_MODELS.get(provider)


def _dimensions(data: Mapping[str, Any], check: _Checker, provider: str, model: str | None) -> int:
    """``dimensions``, defaulting to what the provider and model produce."""
    low, high = _INT_RANGES["dimensions"]
    context = ""
    if provider == "hashing":
        low, context = _HASHING_MIN_DIMENSIONS, ' for embeddingProvider "hashing"'
    # 0: the model's own length (local and plugin providers find it out themselves).
    default_dimensions = 512 if provider in ("hashing", "openai") else 0
    if provider == "openai":
        native = OPENAI_NATIVE_DIMENSIONS.get(model or "")
        if native is None and "dimensions" not in data:
            raise ConfigError(
                f'{check.label}: "dimensions" is required for the model "{model}" (scidx does '
                'not know its vector length); set "dimensions" to the length of the vectors '
                "it returns"
            )
        # OpenAI models default to their full length: shortening is an explicit choice.
        default_dimensions = native or default_dimensions
    return check.integer("dimensions", default_dimensions, low, high, context)


def _timeout(data: Mapping[str, Any], check: _Checker) -> float:
    """``timeoutSeconds``: a finite number of seconds in (0, the maximum]; default 60."""
    if "timeoutSeconds" not in data:
        return 60.0
    value = data["timeoutSeconds"]
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value <= _MAX_TIMEOUT
    ):
        raise check.fail(
            "timeoutSeconds", f"a number of seconds above 0 and at most {_MAX_TIMEOUT:g}"
        )
    return float(value)


def _output(data: Mapping[str, Any], check: _Checker, root: Path) -> Path:
    """The absolute ``output`` path (required; a file, not a folder)."""
    if "output" not in data:
        raise ConfigError(
            f'{check.label}: missing required key "output"; add e.g. "output": "docs.scidx"'
        )
    output_value = data["output"]
    if not isinstance(output_value, str) or not output_value.strip():
        raise check.fail("output", 'a file path like "docs.scidx"')
    if output_value.endswith(("/", "\\")):
        raise check.fail("output", "a file path, not a folder", 'add a file name like "docs.scidx"')
    # Whether the output is writable (or an existing folder) is checked by the packer when it
    # writes, so that it raises OutputError (exit 3) at the moment that matters.
    return Path(os.path.abspath(root / output_value))


def _source_root(check: _Checker) -> str | None:
    """``sourceRoot`` without a trailing slash; ``"."`` (the config's folder) is None."""
    source_root = check.optional_string("sourceRoot")
    if source_root is None:
        return None
    problem = source_root_problem(source_root)
    if problem:
        raise check.fail(
            "sourceRoot", 'a folder relative to the config file, like "docs/src"', problem
        )
    source_root = source_root.rstrip("/")
    return None if source_root == "." else source_root


def _base_url(check: _Checker, provider: str) -> str | None:
    """``baseUrl``: an http(s) URL, for the openai provider only."""
    base_url = check.optional_string("baseUrl")
    if base_url is not None:
        if provider != "openai":
            raise check.fail(
                "baseUrl",
                'absent for embeddingProvider "hashing"',
                'remove "baseUrl" or set "embeddingProvider": "openai"',
            )
        if not re.match(r"^https?://[^/\s]+", base_url):
            raise check.fail("baseUrl", 'an http(s) URL like "http://localhost:8080/v1"')
    return base_url


def _provider(data: Mapping[str, Any], check: _Checker) -> str:
    """The ``embeddingProvider``: a built-in, or a plugin registered under ``scidx.embedders``."""
    value = data.get("embeddingProvider", "hashing")
    if isinstance(value, str) and value in PROVIDERS:
        return value
    from scidx.embed.registry import is_provider, provider_names

    if is_provider(value):
        return cast(str, value)
    names = provider_names()
    close = difflib.get_close_matches(value.lower(), names, n=1) if isinstance(value, str) else []
    hint = f'did you mean "{close[0]}"?' if close else ""
    if not close and isinstance(value, str):
        hint = "no installed plugin provides it (see docs/providers.md)"
    raise check.fail("embeddingProvider", " or ".join(f'"{n}"' for n in names), hint)


# --------------------------------------------------------------------------------------------
# Globbing and input collection
