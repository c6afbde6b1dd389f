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
import string
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

import xxhash

from scidx.errors import ConfigError, InputError
from scidx.format import MAGIC

__all__ = [
    "CONFIG_FILENAME",
    "AnchorStyle",
    "Config",
    "InputFile",
    "Provider",
    "collect_inputs",
    "config_from_dict",
    "load_config",
]

CONFIG_FILENAME = "staticcorpus.json"

Provider = Literal["hashing", "openai"]
AnchorStyle = Literal["github", "mkdocs"]

PROVIDERS = ("hashing", "openai")
DEFAULT_MODELS = {"hashing": "hashing-v2", "openai": "text-embedding-3-small"}
ANCHOR_STYLES = ("github", "mkdocs")
# Full vector lengths of the OpenAI models scidx knows (kept equal to scidx.embed.openai.MODELS,
# which a test checks; that module is not imported here because it loads the openai SDK).
OPENAI_NATIVE_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
URL_PLACEHOLDERS = ("source", "path", "page", "anchor")

# JSON key -> (allowed inclusive range) for the integer settings. The hashing embedder needs a
# few buckets to be useful, hence its higher floor.
_INT_RANGES: dict[str, tuple[int, int]] = {
    "dimensions": (1, 8192),
    "maxChunkChars": (200, 1_000_000),
    # 2048 is the OpenAI embeddings API's limit on inputs per request.
    "batchSize": (1, 2048),
    "concurrency": (1, 64),
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
    "cacheDir",
    "urlTemplate",
    "baseUrl",
    "batchSize",
    "concurrency",
    "timeoutSeconds",
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
        embedding_provider: ``"hashing"`` (offline) or ``"openai"``.
        model: The embedding model; ``config_from_dict`` fills in the provider's default.
        dimensions: Vector dimensions.
        max_chunk_chars: Upper bound on a chunk's Markdown length.
        anchor_style: Heading-slug flavour, ``"github"`` or ``"mkdocs"``.
        cache_dir: Embedding-cache folder (absolute), or ``None`` for the default.
        url_template: Link pattern with ``{source}``, ``{path}`` and ``{anchor}`` placeholders.
        base_url: Base URL of an OpenAI-compatible server.
        batch_size: Texts per embedding request.
        concurrency: Embedding requests in flight.
        timeout: Seconds before an embedding request is abandoned.
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
    cache_dir: Path | None = None
    url_template: str | None = None
    base_url: str | None = None
    batch_size: int = 128
    concurrency: int = 4
    timeout: float = 60.0

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
        return {
            "include": sorted(set(self.include)),
            "exclude": sorted(set(self.exclude)),
            "embeddingProvider": self.embedding_provider,
            "model": self.model_id,
            "dimensions": self.dimensions,
            "maxChunkChars": self.max_chunk_chars,
            "anchorStyle": self.anchor_style,
            "urlTemplate": self.url_template,
        }

    def config_hash(self) -> str:
        """The xxh3-128 hex digest of :meth:`canonical` as compact, key-sorted JSON."""
        text = json.dumps(
            self.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


class InputFile(NamedTuple):
    """One input file found by :func:`collect_inputs`.

    Attributes:
        source: Path relative to the config root with ``/`` separators (the chunk ``source``).
        path: Absolute path to read.
    """

    source: str
    path: Path


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
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
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


def _show(value: object) -> str:
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
        message = f'{self.label}: "{key}" must be {expected}, got {_show(value)}'
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
                raise ConfigError(f'{self.label}: "{key}" glob {_show(glob)} {problem}')
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
            "contains every input, or use a symlink inside it"
        )
    if "" in parts:
        return 'contains an empty segment ("//"); remove the extra "/"'
    try:
        _compile_glob(glob)
    except re.error:
        return 'has an unbalanced "["; write "[[]" to match a literal "["'
    return ""


def _validate(data: Mapping[str, Any], *, root: Path, path: Path | None, label: str) -> Config:
    for key in data:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(str(key), KNOWN_KEYS[1:], n=1, cutoff=0.6)
            hint = (
                f'; did you mean "{close[0]}"?'
                if close
                else ("; known keys: " + ", ".join(KNOWN_KEYS[1:]))
            )
            raise ConfigError(f'{label}: unknown key "{key}"{hint}')
    check = _Checker(data, label)

    include = check.globs("include", required=True)
    exclude = check.globs("exclude", required=False)

    provider = cast(Provider, check.choice("embeddingProvider", PROVIDERS, "hashing"))

    model = check.optional_string("model")
    if provider == "hashing" and model is not None and model != DEFAULT_MODELS["hashing"]:
        raise check.fail(
            "model",
            f'"{DEFAULT_MODELS["hashing"]}" (or absent) for embeddingProvider "hashing"',
            'remove "model" or set "embeddingProvider": "openai"',
        )
    model = model or DEFAULT_MODELS[provider]

    low, high = _INT_RANGES["dimensions"]
    context = ""
    if provider == "hashing":
        low, context = _HASHING_MIN_DIMENSIONS, ' for embeddingProvider "hashing"'
    default_dimensions = 512
    if provider == "openai":
        native = OPENAI_NATIVE_DIMENSIONS.get(model)
        if native is None and "dimensions" not in data:
            raise ConfigError(
                f'{label}: "dimensions" is required for the model "{model}" (scidx does not '
                'know its vector length); set "dimensions" to the length of the vectors it returns'
            )
        # OpenAI models default to their full length: shortening is an explicit choice.
        default_dimensions = native or default_dimensions
    dimensions = check.integer("dimensions", default_dimensions, low, high, context)
    max_chunk_chars = check.integer("maxChunkChars", 1500, *_INT_RANGES["maxChunkChars"])
    batch_size = check.integer("batchSize", 128, *_INT_RANGES["batchSize"])
    concurrency = check.integer("concurrency", 4, *_INT_RANGES["concurrency"])

    timeout = 60.0
    if "timeoutSeconds" in data:
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
        timeout = float(value)

    anchor_style = cast(AnchorStyle, check.choice("anchorStyle", ANCHOR_STYLES, "github"))

    if "output" not in data:
        raise ConfigError(
            f'{label}: missing required key "output"; add e.g. "output": "docs.scidx"'
        )
    output_value = data["output"]
    if not isinstance(output_value, str) or not output_value.strip():
        raise check.fail("output", 'a file path like "docs.scidx"')
    if output_value.endswith(("/", "\\")):
        raise check.fail("output", "a file path, not a folder", 'add a file name like "docs.scidx"')
    # Whether the output is writable (or an existing folder) is checked by the packer when it
    # writes, so that it raises OutputError (exit 3) at the moment that matters.
    output = Path(os.path.abspath(root / output_value))

    cache_value = check.optional_string("cacheDir")
    # "~" is expanded because a per-user cache folder is the common choice.
    cache_dir = (
        Path(os.path.abspath(root / Path(cache_value).expanduser()))
        if cache_value is not None
        else None
    )

    url_template = check.optional_string("urlTemplate")
    if url_template is not None:
        problem = _url_template_problem(url_template)
        if problem:
            raise check.fail(
                "urlTemplate",
                'a URL pattern like "https://docs.example.com/{path}#{anchor}"',
                problem,
            )

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
        cache_dir=cache_dir,
        url_template=url_template,
        base_url=base_url,
        batch_size=batch_size,
        concurrency=concurrency,
        timeout=timeout,
    )


def _url_template_problem(template: str) -> str:
    """Explain why ``template`` is not a usable URL template, or return ``""``."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f'{exc}; write "{{{{" or "}}}}" for a literal brace'
    names: list[str] = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in URL_PLACEHOLDERS or spec or conversion:
            shown = (
                "{"
                + name
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            allowed = ", ".join("{" + p + "}" for p in URL_PLACEHOLDERS)
            return f"unknown placeholder {shown}; use only {allowed}"
        names.append(name)
    if not {"source", "path", "page"} & set(names):
        return (
            "it has no {path}, {page} or {source} placeholder, so every hit would get the same URL"
        )
    return ""


# --------------------------------------------------------------------------------------------
# Globbing and input collection


def _compile_glob(glob: str) -> re.Pattern[str]:
    """Translate a ``/``-separated glob to an anchored regular expression."""
    parts = glob.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # "**" as the last segment matches everything below (at least one segment, so that
            # "docs/**" does not match the folder "docs" itself); elsewhere zero or more segments.
            out.append(".+" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment_regex(part) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i < n and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and segment[j] in "!^":
                j += 1
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:
                raise re.error("unbalanced [")
            body = segment[i + 1 : j]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _literal_prefix(glob: str) -> str:
    """The leading segments of ``glob`` without wildcards: the folder the walk can start in."""
    prefix: list[str] = []
    for part in glob.split("/")[:-1]:
        if any(c in part for c in "*?["):
            break
        prefix.append(part)
    return "/".join(prefix)


def _utf8_key(source: str) -> bytes:
    # surrogateescape: undecodable names sort consistently until they are rejected below.
    return source.encode("utf-8", "surrogateescape")


def collect_inputs(config: Config) -> list[InputFile]:
    """Find the input files: ``include`` globs minus ``exclude`` globs, under ``config.root``.

    An ``exclude`` glob that matches a folder removes everything inside it. Directories are
    never returned, even if their name matches (a folder ``foo.md``). Directory
    symlinks are followed, but each real directory is entered once, so symlink loops end. The
    output file is never an input.

    Args:
        config: A validated configuration.

    Returns:
        The files, sorted bytewise by their UTF-8 ``source`` and without duplicates.

    Raises:
        ConfigError: An ``include`` glob matches no file, or the root is not a folder.
        InputError: A matched file name is not valid UTF-8.
    """
    label = str(config.path) if config.path is not None else CONFIG_FILENAME
    root = config.root
    if not root.is_dir():
        raise ConfigError(f"{label}: the config folder {root} does not exist or is not a folder")
    includes = [(g, _compile_glob(g)) for g in dict.fromkeys(config.include)]
    excludes = [_compile_glob(g) for g in dict.fromkeys(config.exclude)]

    def excluded(source: str) -> bool:
        # A glob that matches a folder excludes everything in it ("node_modules", "drafts/**").
        if not excludes:
            return False
        parts = source.split("/")
        return any(
            rx.fullmatch("/".join(parts[:n])) for n in range(len(parts), 0, -1) for rx in excludes
        )

    # Globs without wildcards name one file: look it up instead of walking the tree for it.
    literal = [g for g, _ in includes if not any(c in g for c in "*?[")]
    starts = sorted({_literal_prefix(g) for g, _ in includes if g not in literal}, key=_utf8_key)
    # A start folder below another start is covered by the walk of the outer one.
    starts = [s for s in starts if not any(_is_below(s, t) for t in starts if t != s)]

    output = os.path.abspath(config.output)
    own_files = {output, output + ".inputs"}
    temp_prefix = os.path.join(os.path.dirname(output), f".{os.path.basename(output)}.tmp.")

    def is_own(abspath: str, source: str) -> bool:
        """The index, its sidecar and the packer's temp files are never inputs."""
        if abspath == output and not _is_index_or_empty(output):
            raise ConfigError(
                f'{label}: "output" is {_show(source)}, one of the input files matched by '
                '"include"; packing would overwrite it. Choose an output path such as '
                '"docs.scidx"'
            )
        return abspath in own_files or abspath.startswith(temp_prefix)

    matched: dict[str, str] = {}  # source -> absolute path
    hit: set[str] = set()
    folders: list[str] = []
    for start in starts:
        for source, abspath, is_dir in _walk(str(root), start, excludes):
            if is_dir:
                folders.append(source)
                continue
            for glob, rx in includes:
                if rx.fullmatch(source):
                    hit.add(glob)
                    if not is_own(abspath, source) and not excluded(source):
                        matched[source] = abspath
                    # Other globs still need to learn that they matched something.

    for glob in literal:
        abspath = os.path.join(str(root), *glob.split("/"))
        if os.path.isfile(abspath):
            hit.add(glob)
            if not is_own(abspath, glob) and not excluded(glob):
                matched[glob] = abspath
        elif os.path.isdir(abspath):
            folders.append(glob)

    for glob, rx in includes:
        if glob not in hit:
            message = (
                f'{label}: "include" glob {_show(glob)} matches no file; check the path is '
                f"relative to {root}"
            )
            if any(rx.fullmatch(f) for f in folders):
                message += f' (it matches a folder; to take the files in it use "{glob}/**/*.md")'
            raise ConfigError(message)

    if not matched:
        raise ConfigError(
            f'{label}: every file matched by "include" is removed by "exclude" '
            f"{_show(list(config.exclude))}; loosen the exclude globs"
        )

    for source in matched:
        try:
            source.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"{label}: input file name {source!r} is not valid UTF-8; rename the file or "
                'add it to "exclude"'
            ) from None

    return [InputFile(s, Path(matched[s])) for s in sorted(matched, key=_utf8_key)]


def _is_index_or_empty(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError:
        return True  # not readable as an input either; the pack reports it when writing
    return head in (b"", MAGIC)


def _is_below(path: str, folder: str) -> bool:
    return folder == "" or path.startswith(folder + "/")


def _walk(root: str, start: str, prunes: list[re.Pattern[str]]) -> Iterator[tuple[str, str, bool]]:
    """Yield ``(source, absolute path, is_dir)`` for everything below ``root/start``.

    Each real folder is entered once. Real (non-symlink) routes are walked first and folder
    symlinks afterwards, in sorted order, so a folder reachable both ways is listed under its
    real path, a symlink loop ends, and the result never depends on the file system's order.
    """
    top = os.path.join(root, *start.split("/")) if start else root
    try:
        st = os.stat(top)
    except OSError:
        return
    if not os.path.isdir(top):
        return
    seen: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
    stack: list[tuple[str, str]] = [(top, start)]
    linked: list[tuple[str, str]] = []  # folder symlinks, followed once the real tree is done
    while stack or linked:
        if not stack:
            linked.sort(key=lambda item: _utf8_key(item[1]), reverse=True)
            path, source = linked.pop()
            try:
                dst = os.stat(path)
            except OSError:
                continue
            if (dst.st_dev, dst.st_ino) in seen:
                continue
            seen.add((dst.st_dev, dst.st_ino))
            stack.append((path, source))
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: _utf8_key(e.name))
        except OSError:
            # An unreadable folder is skipped like one that does not exist; a glob that needed
            # it then reports "matches no file".
            continue
        subfolders: list[tuple[str, str]] = []
        for entry in entries:
            source = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
                is_file = not is_dir and entry.is_file()
                is_link = is_dir and entry.is_symlink()
            except OSError:
                continue
            if is_file:
                yield source, entry.path, False
                continue
            if not is_dir:
                continue
            yield source, entry.path, True
            # Excluded folders are not entered: nothing below them can be an input.
            if any(rx.fullmatch(source) or rx.fullmatch(source + "/") for rx in prunes):
                continue
            if is_link:
                linked.append((entry.path, source))
                continue
            try:
                dst = entry.stat()
            except OSError:
                continue
            ident = (dst.st_dev, dst.st_ino)
            if ident not in seen:
                seen.add(ident)
                subfolders.append((entry.path, source))
        # Reversed so that folders pop (and are walked) in ascending order.
        stack.extend(reversed(subfolders))
