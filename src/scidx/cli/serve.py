"""``toolup-rag serve``: the search page, JSON API and OpenAI vector-store API over indexes."""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import math
import re
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scidx.cli.app import app
from scidx.cli.exits import fail
from scidx.cli.output import echo
from scidx.errors import ConfigError, ScidxError

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from scidx.web import IndexSet

__all__ = ["serve_command"]

_NAMED = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]{0,63})=(.+)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """Bind the listening socket here, so the printed URL has the real port (``--port 0``)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host!r}: cannot resolve it ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(512)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
            "(0 picks a free one)"
        ) from None
    sock.set_inheritable(True)
    return sock


# The options of serve_command, declared here so that its signature stays one line each.
_Indexes = Annotated[
    list[str],
    typer.Argument(
        help="The .scidx files to serve; NAME=PATH sets the vector-store id (default: the "
        "file name without .scidx).",
        metavar="INDEX...",
    ),
]
_Host = Annotated[
    str, typer.Option("--host", help="Address to listen on (loopback unless you say so).")
]
_Mode = Annotated[
    str, typer.Option("--mode", help="Default search mode: hybrid, keyword or vector.")
]
_TokenEnv = Annotated[
    str,
    typer.Option(
        "--token-env",
        help="Environment variable holding the bearer token; unset or empty: no auth.",
    ),
]
_CorsOrigin = Annotated[
    list[str] | None,
    typer.Option("--cors-origin", help="Origin allowed to call the API (repeatable; '*' any)."),
]
_MaxBody = Annotated[int, typer.Option("--max-body", help="Largest request body in bytes.")]
_ReloadInterval = Annotated[
    float,
    typer.Option(
        "--reload-interval", help="Seconds between checks for replaced index files; 0: off."
    ),
]
_Verify = Annotated[
    bool,
    typer.Option("--verify/--no-verify", help="Check every checksum when (re)loading."),
]
_LoadMode = Annotated[
    str,
    typer.Option(
        "--load",
        help="How index files are held: auto (memory up to --memory-max, else a private "
        "copy), memory, copy, or map (the file itself; unsafe if it is rewritten in place).",
    ),
]
_MemoryMax = Annotated[
    int,
    typer.Option("--memory-max", help="With --load auto: largest index (MiB) read into memory."),
]
_AllowedHost = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-host",
        help="Another Host header value to answer (repeatable; '.example.com' with its "
        "subdomains, '*' any). Always answered: the --host address and localhost.",
    ),
]
_ReadTimeout = Annotated[
    float,
    typer.Option(
        "--read-timeout",
        help="Seconds a client has to send a whole request (headers and body).",
    ),
]
_MaxConnections = Annotated[
    int,
    typer.Option("--max-connections", help="Most connections open at once (then 503)."),
]
_SearchThreads = Annotated[
    int,
    typer.Option("--search-threads", help="Searches running at once (0: one per core)."),
]
_EmbedThreads = Annotated[
    int,
    typer.Option(
        "--embed-threads",
        help="Query embeddings (hybrid, vector) running at once, apart from the searches.",
    ),
]
_EmbedWait = Annotated[
    float,
    typer.Option(
        "--embed-wait",
        help="Seconds a hybrid or vector request waits for its query embedding (then 503).",
    ),
]
_AccessLog = Annotated[
    bool, typer.Option("--access-log/--no-access-log", help="Log every request.")
]
_ModelDir = Annotated[
    Path | None,
    typer.Option(
        "--model-dir",
        help="Where a local-provider index's query model is: its folder, or a folder "
        "holding it (default: where it was packed on this machine, then $SCIDX_MODEL_DIR).",
    ),
]
_KeywordOnly = Annotated[
    bool,
    typer.Option(
        "--keyword-only",
        help="Serve indexes whose query model is missing here with keyword search only "
        "(without it, serve refuses to start).",
    ),
]


@app.command("serve")
def serve_command(
    indexes: _Indexes,
    host: _Host = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port; 0 picks a free one.")] = 8000,
    mode: _Mode = "hybrid",
    token_env: _TokenEnv = "SCIDX_SERVE_TOKEN",
    cors_origin: _CorsOrigin = None,
    max_k: Annotated[int, typer.Option("--max-k", help="Most hits per request.")] = 50,
    max_body: _MaxBody = 64 * 1024,
    reload_interval: _ReloadInterval = 1.0,
    verify: _Verify = True,
    load_mode: _LoadMode = "auto",
    memory_max: _MemoryMax = 256,
    allowed_host: _AllowedHost = None,
    read_timeout: _ReadTimeout = 10.0,
    max_connections: _MaxConnections = 512,
    search_threads: _SearchThreads = 0,
    embed_threads: _EmbedThreads = 8,
    embed_wait: _EmbedWait = 10.0,
    title: Annotated[str, typer.Option("--title", help="The search page's heading.")] = "Search",
    access_log: _AccessLog = False,
    model_dir: _ModelDir = None,
    keyword_only: _KeywordOnly = False,
    locale: Annotated[
        str | None,
        typer.Option(
            "--locale",
            help="The page's UI language (en, zh, ja, ko, de, fr, es, pt; default: "
            "the first index's).",
        ),
    ] = None,
) -> None:
    """Serve indexes over HTTP: a search page, GET /search and OpenAI's vector-store API.

    Before listening, every index's query embedding model must be found here (exit 2 naming
    the index and the fix), unless --keyword-only.
    """
    try:
        # Imported first so that a missing serve extra is reported before any work.
        import uvicorn  # noqa: F401

        from scidx.web import IndexSet, WebSettings, create_app
    except ImportError as exc:
        fail(
            ConfigError(
                f"toolup-rag serve needs the serve extra ({exc.name} is missing): "
                "pip install 'toolup-rag[serve]'"
            )
        )
    options = {"model_dir": str(model_dir)} if model_dir is not None else None
    settings = WebSettings(
        max_k=max_k,
        default_k=min(10, max_k) if max_k >= 1 else 10,
        default_mode="keyword" if keyword_only else mode,
        max_body_bytes=max_body,
        token_env=token_env or None,
        cors_origins=tuple(cors_origin or ()),
        reload_interval=reload_interval,
        verify=verify,
        search_threads=search_threads,
        embed_threads=embed_threads,
        embed_wait=embed_wait,
        load_mode=load_mode,
        memory_max=max(memory_max, -1) * 1024 * 1024,
    )
    store = None
    try:
        settings.validate()
        _check_limits(read_timeout, max_connections)
        store = IndexSet(
            _named_paths(indexes),
            verify=verify,
            load_mode=load_mode,
            memory_max=settings.memory_max,
            embedder_options=options,
        )
        if not keyword_only:
            _check_query_models(store, options or {})
        sock = _listen(host, port)
        allowed = (host, sock.getsockname()[0], "localhost", *(allowed_host or ()))
        settings = dataclasses.replace(settings, allowed_hosts=allowed)
        web_app = create_app(store, settings, title=title, locale=locale)
    except ScidxError as exc:
        if store is not None:
            store.close()
        fail(exc)
    except OSError as exc:
        if store is not None:
            store.close()
        name = getattr(exc, "filename", None) or "an index"
        fail(ConfigError(f"cannot read {name}: {exc.strerror or exc}; check the index path"))

    _log_to_stderr()
    _announce(host, sock, store, auth=bool(settings.token_env and _token_set(token_env)))
    if load_mode == "map":
        echo(MAP_WARNING, err=True)
    if not _run(web_app, sock, store, access_log, (read_timeout, max_connections)):
        fail(ConfigError("the server did not start; see the messages above"))
    echo("stopped", err=True)


def _check_query_models(store: IndexSet, options: dict[str, str]) -> None:
    """Refuse to serve an index whose queries cannot be embedded here (before listening).

    A visitor would otherwise meet the failure on every hybrid or vector search. Finding the
    model is enough (no text is embedded: an OpenAI index costs no request here).

    Raises:
        QueryEmbeddingError: Naming the index and the fix (exit 2).
    """
    from scidx.embed.registry import resolve_provider
    from scidx.errors import QueryEmbeddingError

    for entry in store:
        stamp = entry.index.stamp
        provider = stamp.get("provider")
        if provider in (None, "hashing") or not stamp.get("dimensions"):
            continue
        try:
            resolve_provider(provider).query_embedder_from_stamp(stamp, **options)
        except Exception as exc:  # any failure of a provider (or a plugin) here
            fix = (
                "pass --model-dir DIR (the model's folder)"
                if provider == "local"
                else ("make the provider usable here (its package, key or server)")
            )
            raise QueryEmbeddingError(
                f"index {entry.name} ({entry.path}) cannot embed queries here: {exc}. "
                f"Fix: {fix}, or serve it with keyword search only: --keyword-only"
            ) from None


def _named_paths(indexes: list[str]) -> list[tuple[str, Path]]:
    """``(vector-store id, path)`` of each INDEX argument: ``NAME=PATH``, or a path alone."""
    from scidx.web.store import store_name

    pairs: list[tuple[str, Path]] = []
    for item in indexes:
        named = _NAMED.fullmatch(item)
        # A file whose name merely looks like NAME=PATH is still that file.
        if named and not Path(item).exists():
            pairs.append((named.group(1), Path(named.group(2))))
        else:
            pairs.append((store_name(item), Path(item)))
    return pairs


def _log_to_stderr() -> None:
    """Show the web layer's log records (reloads, failures) on stderr, as uvicorn's look."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
    web_logger = logging.getLogger("scidx.web")
    web_logger.addHandler(handler)
    web_logger.setLevel(logging.INFO)


MAP_WARNING = (
    "warning: --load map reads the index files themselves: replace them by rename (pack-docs "
    "writes that way), never in place (cp, rsync --inplace). A file rewritten in place is "
    "reloaded, or refused with 503, at the next request, but one rewritten during a search can "
    "kill the server (SIGBUS); --load auto, memory and copy are safe"
)


def _announce(host: str, sock: socket.socket, store: IndexSet, *, auth: bool) -> None:
    """Print the URL really bound, and warn on stderr when other machines can reach it."""
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    names = ", ".join(f"{e.name} ({len(e.index)} chunks)" for e in store)
    echo(f"serving {names} on http://{shown}:{bound_port}/")
    sys.stdout.flush()
    if not _is_loopback(host):
        how = "with a bearer token" if auth else "WITHOUT auth"
        echo(f"warning: listening on {host}, reachable from other machines, {how}", err=True)


def _check_limits(read_timeout: float, max_connections: int) -> None:
    if not math.isfinite(read_timeout) or not 0 < read_timeout <= 3600:
        raise ConfigError(f"--read-timeout must be in (0, 3600] seconds, got {read_timeout}")
    if not 1 <= max_connections <= 65_536:
        raise ConfigError(f"--max-connections must be in 1..65536, got {max_connections}")


def _run(
    web_app: Starlette,
    sock: socket.socket,
    store: IndexSet,
    access_log: bool,
    limits: tuple[float, int],
) -> bool:
    """Serve on ``sock`` until stopped, then close it and ``store``; False if it never started."""
    import uvicorn

    from scidx.web.server import bounded_protocol

    config = uvicorn.Config(
        web_app,
        log_level="info",
        access_log=access_log,
        lifespan="on",
        timeout_graceful_shutdown=5,
        # uvicorn's default of 5 s closes an idle keep-alive connection just as a busy client
        # reuses it (a ReadError on its side, seen under load in bench_serve.py); 30 s makes that
        # race rare without holding idle sockets for long.
        timeout_keep_alive=30,
        # A request-read deadline and a connection cap (scidx.web.server): uvicorn has neither.
        http=bounded_protocol(*limits),
        server_header=False,
    )
    server = uvicorn.Server(config)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again for the
    # previous handler; these handlers turn that into a normal exit 0 instead of a crash (130).
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        store.close()
    return bool(server.started)


class _Stopped(Exception):
    """SIGTERM arrived (after uvicorn's graceful shutdown)."""


def _stopped(signum: int, frame: object) -> None:
    raise _Stopped


def _token_set(name: str) -> bool:
    import os

    return bool(os.environ.get(name))
