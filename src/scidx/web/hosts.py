"""Which ``Host`` header values the server answers: the defence against DNS rebinding.

A web page on ``evil.example`` can point its own name at ``127.0.0.1`` and then read a loopback
server as same-origin: the browser still sends ``Host: evil.example``. A server that answers only
the names it was started for cannot be read that way. :class:`HostCheck` answers ``400`` to any
other ``Host``, before routing and before the bearer-token check.

Allowed entries (``WebSettings.allowed_hosts``; ``toolup-rag serve`` passes the ``--host``
address, the address really bound, ``localhost`` and each ``--allowed-host``):

* a name or IP address, matched case-insensitively without the port (a trailing dot ignored);
* ``.example.com``: that name and every name under it;
* ``*``: any host (the check is off);
* a wildcard address (``0.0.0.0``, ``::``): any IP-address ``Host`` (a listener on every
  address is reached by the machine's addresses; rebinding always uses a name).

A request without ``Host`` (HTTP/1.0) is answered: browsers always send one. A ``Host`` that is
not ``uri-host [":" port]`` (RFC 3986 §3.2.2, the port digits only) gets ``400 invalid_host``
whatever the allowed entries, ``*`` included (RFC 9112 §3.2): ``127.0.0.1:80@evil.example`` is not
``127.0.0.1``, and a lenient split on the first ``:`` would make it so.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from scidx.web.common import ApiError, error_response

__all__ = ["HostCheck", "host_name", "parse_host"]

# RFC 3986 reg-name (which IPv4address is a subset of): unreserved / pct-encoded / sub-delims.
_REG_NAME = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
# IP-literal: an IPv6 address (checked by ipaddress) or IPvFuture, in brackets.
_IP_LITERAL = re.compile(r"\[([^\[\]]*)\]")
_IPV_FUTURE = re.compile(r"v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+", re.IGNORECASE)
_PORT = re.compile(r"[0-9]*")


def parse_host(value: str) -> str | None:
    """The host of a ``Host`` header as :func:`host_name` gives it, or None if it is malformed.

    The grammar is ``uri-host [":" port]`` with ``port = *DIGIT``; anything else (a second ``:``
    outside brackets, ``@``, ``/``, a space, a port with letters) is None.

    Example:
        >>> parse_host("[::1]:8000"), parse_host("localhost:evil.example")
        ('::1', None)
    """
    if value.startswith("["):
        literal = _IP_LITERAL.match(value)
        if literal is None:
            return None
        inner, rest = literal.group(1), value[literal.end() :]
        if _IPV_FUTURE.fullmatch(inner) is None:
            try:
                ipaddress.IPv6Address(inner)
            except ValueError:
                return None
    else:
        name, colon, port = value.partition(":")
        if _REG_NAME.fullmatch(name) is None:
            return None
        rest = colon + port
    if rest and not (rest[0] == ":" and _PORT.fullmatch(rest[1:])):
        return None
    return host_name(value)


def host_name(value: str) -> str:
    """``value`` (a ``Host`` header or an allowed entry) without port, brackets or final dot.

    Example:
        >>> host_name("[::1]:8000"), host_name("Docs.Example.COM.:443")
        ('::1', 'docs.example.com')
    """
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        value = value[1:end] if end > 0 else value[1:]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def _ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


class HostCheck:
    """ASGI middleware answering ``400`` to a request whose ``Host`` is not allowed.

    Args:
        app: The wrapped application.
        allowed: The allowed entries (see the module docstring).
    """

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        names = {host_name(a) for a in allowed if a.strip()}
        self.any = "*" in names
        self.any_ip = any((ip := _ip(n)) is not None and ip.is_unspecified for n in names)
        self.ips = {ip for n in names if (ip := _ip(n)) is not None}
        self.names = {n for n in names if _ip(n) is None and not n.startswith(".")}
        self.suffixes = tuple(n for n in names if n.startswith("."))

    def allows(self, host: str) -> bool:
        """Whether a request with this ``Host`` header is answered (never a malformed one)."""
        name = parse_host(host)
        if name is None:
            return False
        if self.any:
            return True
        ip = _ip(name)
        if ip is not None:
            return self.any_ip or ip in self.ips
        return name in self.names or any(name.endswith(s) or name == s[1:] for s in self.suffixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer ``400`` to a foreign ``Host``; pass everything else on."""
        if scope["type"] == "http":
            host = next((v for k, v in scope["headers"] if k == b"host"), None)
            if host is not None and not self.allows(host.decode("latin-1")):
                shown = host.decode("latin-1")[:80]
                malformed = parse_host(host.decode("latin-1")) is None
                error = ApiError(
                    400,
                    f"Host {shown!r} is not a host name with an optional numeric port"
                    if malformed
                    else f"this server does not answer to Host {shown!r} (a guard against DNS "
                    "rebinding); start it with --allowed-host NAME to allow a name",
                    param="Host",
                    code="invalid_host",
                )
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)
