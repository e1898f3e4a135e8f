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

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

if TYPE_CHECKING:  # for the annotations only (no import cycle): the report renders itself
    from cassettes_core._model import RecordedError, StreamEvent
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


# -- the live failures a recording refuses ---------------------------------------------------
#
# Which live failures a recording keeps as answers, and the refusal for the others.
#
# A recording is replayed forever, so a failure that only says something about the machine it
# was made on must not become the answer. By default (``record_errors="useful"``) a recording
# keeps the failures a test can learn from: rate limits (429), overloads and server errors
# (5xx), other 4xx answers about the request (400, 409, 413, 422), timeouts, and a stream that
# broke part-way. It refuses those that mean "this recording was set up wrong", where the fix
# changes nothing the request is matched by (so the failure would replay after it): an
# authentication failure (401, 403, 407: a wrong or missing key), a 404 (a wrong base URL, a
# model this key may not use), an account without credit (402, or a 429 whose code is
# ``insufficient_quota``), and a provider that could not be reached at all (connection refused,
# DNS failure, connect timeout; a connection that broke after it was made,
# ``ReadError``/``RemoteProtocolError``, is kept). The call then fails with
# :class:`UnrecordedFailureError` and nothing is written. ``record_errors="all"`` keeps every
# failure (a test of auth-error handling).

RecordErrors = Literal["useful", "all"]
RECORD_ERRORS: tuple[str, ...] = get_args(RecordErrors)
AUTH_STATUSES = frozenset({401, 403, 407})
# A 404 is the base URL or the model's availability to this key; a 402 the account's credit.
NOT_FOUND_STATUS = 404
_CREDIT_STATUS = 402
# The providers' error codes for an account out of credit (OpenAI sends it with a 429).
_NO_CREDIT_CODES = frozenset({"insufficient_quota", "billing_error", "billing_hard_limit_reached"})
Fault = Literal["auth", "not_found", "no_credit", "unreachable"]
_ALL_HINT = (
    "pass record_errors='all' (@pytest.mark.cassette(record_errors='all'), the ini option "
    "cassette_record_errors = all, or Recorder/CassetteProvider(record_errors='all'))"
)
_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
# httpx/httpx2 failures after the connection was made: the provider was reachable.
_REACHED = ("ReadError", "WriteError", "RemoteProtocolError", "LocalProtocolError", "CloseError")


class UnrecordedFailureError(ProviderError):
    """The live provider refused the call or could not be reached; nothing was recorded."""

    def __init__(
        self,
        failure: RecordedError,
        *,
        provider: str,
        path: Path,
        hidden: Sequence[str] = (),
    ) -> None:
        # Before the base class renders the message. `hidden`: the credentials the request
        # carried, masked wherever the message quotes them (a provider may echo its key).
        self.path = path
        self.hidden: tuple[str, ...] = tuple(v for v in hidden if len(v) >= 8)
        super().__init__(
            failure.kind,
            failure.message,
            provider=provider,
            status=failure.status,
            body=failure.body,
            headers=failure.headers,
        )

    def __str__(self) -> str:
        return render_refusal(self)


def parse_record_errors(value: object, *, source: str = "record_errors") -> RecordErrors:
    """``value`` as a policy name; a :class:`ConfigError` naming the choices otherwise."""
    if value is None:
        return "useful"
    text = str(value).strip().lower() if isinstance(value, str) else value
    if text not in RECORD_ERRORS:
        raise ConfigError(
            f"{source}={value!r} is not a recording policy for errors; choose "
            f"{' or '.join(repr(c) for c in RECORD_ERRORS)} ('useful', the default, does not "
            "record auth failures, 404s, an account out of credit or an unreachable provider; "
            "'all' records every failure)"
        )
    return cast("RecordErrors", text)


def refused(
    policy: RecordErrors, error: RecordedError | None, stream: Sequence[StreamEvent] | None
) -> bool:
    """Whether ``policy`` keeps ``error`` (the outcome of one live call) out of the cassette."""
    if policy == "all" or error is None:
        return False
    return setup_fault(error, stream) is not None


def setup_fault(error: RecordedError, stream: Sequence[StreamEvent] | None = None) -> Fault | None:
    """How ``error`` says the recording was set up wrong, or ``None`` for a real answer."""
    if error.kind == "http_status":
        return _http_fault(error.status, error.body)
    if stream:  # the stream broke part-way: the provider was there, and answered
        return None
    if error.kind == "connection":
        # The transport records "ClassName: text"; these classes mean the host was reached.
        return None if error.message.startswith(_REACHED) else "unreachable"
    return "unreachable" if error.message.startswith("ConnectTimeout") else None


def _http_fault(status: int | None, body: object) -> Fault | None:
    if status in AUTH_STATUSES:
        return "auth"
    if status == _CREDIT_STATUS or _error_code(body) in _NO_CREDIT_CODES:
        return "no_credit"
    return "not_found" if status == NOT_FOUND_STATUS else None


def _error_code(body: object) -> object:
    """The provider's ``error.code`` (OpenAI), else ``error.type`` (both providers)."""
    inner = body.get("error") if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return None
    code = inner.get("code")
    return code if isinstance(code, str) else inner.get("type")


def render_refusal(error: UnrecordedFailureError) -> str:
    """What happened, why nothing was written, and what to do."""
    from cassettes_core.secrets import redact  # loaded on this rare path only

    who = error.provider or "the provider"
    retry = f"run the test again; to record the failure on purpose, {_ALL_HINT}."
    if error.kind != "http_status":
        lines = [
            f"the live provider could not be reached ({who}: {error.kind}, {error.message})",
            f"  nothing was written to {error.path}: an unreachable provider is not recorded "
            "as an answer (CI would replay the outage forever)",
            "TIP: check the base URL (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) and the network, "
            f"and {retry}",
        ]
        return _mask_keys(redact("\n".join(lines)), error.hidden)
    detail = f"{who} answered HTTP {error.status}"
    said = _provider_message(error.body)
    if said:
        detail += f": {said}"
    why, tip = _SETUP_ADVICE[_http_fault(error.status, error.body) or "auth"]
    lines = [
        f"the live provider rejected the call ({detail})",
        f"  nothing was written to {error.path}: {why} is not recorded as an answer (the key "
        "and the base URL are not part of what a request is matched by, so CI would replay "
        "it even after the fix)",
        f"TIP: {tip.format(key=_key_hint(who))} and {retry}",
    ]
    return _mask_keys(redact("\n".join(lines)), error.hidden)


_SETUP_ADVICE: dict[Fault, tuple[str, str]] = {
    "auth": ("an authentication failure", "check the API key ({key})"),
    "not_found": (
        "an endpoint or model not found",
        "check the base URL (OPENAI_BASE_URL / ANTHROPIC_BASE_URL: an OpenAI-compatible one "
        "usually ends in /v1), the model name and whether this key ({key}) may use it,",
    ),
    "no_credit": (
        "an account out of quota or credit",
        "check the plan and billing of the account that the key ({key}) belongs to,",
    ),
}


def _provider_message(body: object) -> str:
    """The provider's own error message (``error.message``), else the body, shortened."""
    said: object = body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            said = inner["message"]
        elif isinstance(body.get("message"), str):
            said = body["message"]
    text = " ".join(str(said).split()) if said is not None else ""
    return text if len(text) <= 300 else text[:299] + "…"


def _key_hint(provider: str) -> str:
    return "ANTHROPIC_API_KEY" if provider.startswith("anthropic") else "OPENAI_API_KEY"


def _mask_keys(text: str, hidden: Sequence[str]) -> str:
    # A provider may quote the key it was given; the keys of this process never reach a log.
    from cassettes_core.secrets import mask

    for value in (*hidden, *(os.environ.get(name, "") for name in _KEY_VARIABLES)):
        if len(value) >= 8 and value in text:
            text = text.replace(value, mask(value))
    return text
