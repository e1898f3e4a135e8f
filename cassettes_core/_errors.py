"""The exception tree of provider-cassettes.

Every failure a user can cause is one of these, and every message says what happened and
where, the nearest difference when there is one, and the next step::

    CassetteError                 root: catch this to catch everything we raise
    ├── CassetteFormatError       a cassette file is malformed, truncated, tampered or too new
    ├── CassetteMissError         replay met a request the cassette does not hold
    ├── UnsafeCassetteError       an interaction carries a secret; nothing was written
    ├── ProviderError             the provider failed (HTTP status, timeout, connection)
    │   └── UnrecordedFailureError  a recording met a failure of its set-up (auth, 404, no
    │                               credit, unreachable) and kept it out
    ├── ConfigError               an option, mode or request is not usable as given
    │   ├── UnrecordableAnswerError a live answer cannot be stored so that it replays the same
    │   └── LiveCallRefusedError  a request to a live provider (or, when asked, any host) was
    │                             refused before it connected
    └── VersionDriftError         versions drifted and cassette_version_drift = error asked
                                  for a failure (otherwise drift is a warning or a summary line)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # for the annotations only (no import cycle): the report renders itself
    from cassettes_core.miss_report import MissReport

# ``exception``: a tool call (``cassettes_core.tools``) raised; the others are provider failures.
ErrorKind = Literal["http_status", "timeout", "connection", "exception"]


class CassetteError(Exception):
    """Root of every error provider-cassettes raises."""


class ConfigError(CassetteError):
    """An option, a mode or a request value cannot be used as given."""


class UnrecordableAnswerError(ConfigError):
    """A live answer cannot be stored so that it replays the same; nothing was written."""


class VersionDriftError(CassetteError):
    """A cassette was recorded with other SDK versions, and drift was asked to be an error."""

    def __init__(self, path: Path | str, drift: Sequence[object]) -> None:
        self.path = Path(path)
        self.drift = tuple(drift)
        super().__init__(str(self))

    def __str__(self) -> str:
        changes = "; ".join(str(d) for d in self.drift)
        return (
            f"cassette {self.path} was recorded with other versions ({changes}), and version "
            "drift is an error here (cassette_version_drift = error)\n"
            f"TIP: re-record it with the versions installed now (--cassette-mode=record), or "
            "set cassette_version_drift = summary to list drift without failing."
        )


class LiveCallRefusedError(ConfigError):
    """A request would have left the process for a live provider (or, under
    ``--cassette-block-network``, any host not allowed); it was refused before connecting.

    ``host``, ``port``, ``method``, ``path``, ``via`` (the client) and ``where`` (the test or
    fixture) say which request and from where; ``reason`` says why the host is refused.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int | None,
        method: str,
        path: str,
        via: str,
        reason: str,
        where: str,
        why_refused: str,
    ) -> None:
        self.host = host
        self.port = port
        self.method = method
        self.path = path
        self.via = via
        self.reason = reason
        self.where = where
        self.why_refused = why_refused
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only construction: rebuild from the attributes (pickle, copy, xdist).
        return (_rebuild_refusal, (type(self), dict(self.__dict__)))

    @property
    def target(self) -> str:
        """``host[:port]`` as shown (IPv6 literals in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port else host

    def __str__(self) -> str:
        what = f"{self.method} {self.path}".strip() if self.path else f"{self.method}".strip()
        what = f"{what}, " if what else ""
        return (
            f"refused a live call to {self.target} ({what}via {self.via}) from {self.where}; "
            "nothing was sent and no connection was opened.\n"
            f"  why: {self.reason}, and {self.why_refused}.\n"
            "TIP: give the test or fixture a cassette (@pytest.mark.cassette, or `with "
            "cassette_for(request):` inside the fixture), record it locally with "
            f"CASSETTE_MODE=record, or allow the host: --cassette-allow-host {self.host} "
            "(ini cassette_allow_hosts)."
        )


def _rebuild_refusal(cls: type[LiveCallRefusedError], state: dict[str, Any]) -> Any:
    error = cls.__new__(cls)
    error.__dict__.update(state)
    error.args = (str(error),)
    return error


class CassetteFormatError(CassetteError):
    """A cassette file cannot be trusted: malformed, truncated, tampered or from the future."""

    def __init__(self, path: Path | str, reason: str, *, location: str | None = None) -> None:
        self.path = Path(path)
        self.reason = reason
        self.location = location
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}" + (f", {self.location}" if self.location else "")
        return (
            f"cassette {where}: {self.reason}\n"
            "TIP: fix the file by hand, restore it from version control, or delete it and "
            "re-record with CASSETTE_MODE=record."
        )


class CassetteMissError(CassetteError):
    """Replay met a request that the cassette does not hold.

    The structured report (closest recording, path-level differences) is on ``report``.
    """

    def __init__(self, report: MissReport) -> None:
        self.report = report
        super().__init__(str(self))

    @property
    def digest(self) -> str:
        return self.report.digest

    @property
    def cassette_path(self) -> Path:
        return self.report.cassette_path

    def __str__(self) -> str:
        return self.report.render()


class UnsafeCassetteError(CassetteError):
    """An interaction holds something that looks like a secret; the cassette was left as it was."""

    def __init__(self, path: Path | str | None, findings: Sequence[Any]) -> None:
        self.path = Path(path) if path is not None else None
        self.findings = tuple(findings)
        super().__init__(str(self))

    def __str__(self) -> str:
        target = str(self.path) if self.path is not None else "the cassette"
        n = len(self.findings)
        count = "1 possible secret" if n == 1 else f"{n} possible secrets"
        lines = [f"refused to write {target}: {count} found"]
        lines.extend(f"  {finding}" for finding in self.findings)
        lines.append(
            "TIP: nothing was written, the cassette on disk is as it was. Scrub each value in a "
            "before_record hook (replace it with a placeholder), or, if a value is known to be "
            "safe, allow it explicitly (allow_secrets=[...])."
        )
        return "\n".join(lines)


class UnsafeInteractionDroppedWarning(UserWarning):
    """Best-effort recording dropped an interaction that holds a possible secret."""


class ProviderError(CassetteError):
    """The provider answered with an error status, timed out, or could not be reached."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str = "",
        *,
        provider: str = "",
        status: int | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.kind: ErrorKind = kind
        self.message = message
        self.provider = provider
        self.status = status
        self.body = body
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(str(self))

    def __str__(self) -> str:
        who = self.provider or "provider"
        if self.kind == "http_status":
            text = f"{who} answered HTTP {self.status}"
            if self.body is not None:
                text += f": {_short(self.body)}"
            return text
        return f"{who}: {self.kind}" + (f" ({self.message})" if self.message else "")


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
