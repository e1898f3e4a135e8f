"""What the process asked of the network, seen at the lowest level: the interpreter's audit
events for name resolution and connects, raised by C code at the very call, under every
Python-level patch (the guard's included).

    with SocketAudit() as audit:
        run_inner(pytester)
    assert audit.outside_loopback() == []

An audit hook cannot be removed; one is added per process, and records only while an audit
is open.
"""

from __future__ import annotations

import ipaddress
import sys
import threading
from types import TracebackType
from typing import Any, Self

_EVENTS = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
           "socket.connect")  # fmt: skip
_open: list[SocketAudit] = []
_lock = threading.Lock()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _open or event not in _EVENTS:
        return
    if event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else str(address)
    else:
        host = args[0]
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    with _lock:
        for audit in _open:
            audit.events.append((event, text))


class SocketAudit:
    """The resolutions and connects attempted while open: ``(event, host)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def outside_loopback(self) -> list[tuple[str, str]]:
        """Attempts that would leave the machine (or, for a name, need a resolver)."""
        return [(event, host) for event, host in self.events if not _local(host)]

    def __enter__(self) -> Self:
        global _installed  # one hook per process, added on first use
        with _lock:
            if not _installed:
                sys.addaudithook(_hook)
                _installed = True
            _open.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with _lock:
            _open.remove(self)


def _local(host: str) -> bool:
    if host in ("localhost", "") or host.startswith("/"):  # a Unix socket path
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False
