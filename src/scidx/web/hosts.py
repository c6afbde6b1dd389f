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

A request without ``Host`` (HTTP/1.0) is answered: browsers always send one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from scidx.web.common import ApiError, error_response

__all__ = ["HostCheck", "host_name"]


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
        """Whether a request with this ``Host`` header is answered."""
        if self.any:
            return True
        name = host_name(host)
        ip = _ip(name)
        if ip is not None:
            return self.any_ip or ip in self.ips
        return name in self.names or any(name.endswith(s) or name == s[1:] for s in self.suffixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer ``400`` to a foreign ``Host``; pass everything else on."""
        if scope["type"] == "http" and not self.any:
            host = next((v for k, v in scope["headers"] if k == b"host"), None)
            if host is not None and not self.allows(host.decode("latin-1")):
                shown = host.decode("latin-1")[:80]
                error = ApiError(
                    400,
                    f"this server does not answer to Host {shown!r} (a guard against DNS "
                    "rebinding); start it with --allowed-host NAME to allow a name",
                    param="Host",
                    code="invalid_host",
                )
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)
