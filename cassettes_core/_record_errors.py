"""Which live failures a recording keeps as answers, and the refusal for the others.

A recording replays forever, so a failure that says only how it was set up must not become
the answer. ``record_errors="useful"`` (the default) keeps rate limits, overloads and server
errors, other 4xx answers about the request, timeouts and a stream broken part-way. It refuses,
with :class:`UnrecordedFailureError` and nothing written, an authentication failure (401, 403,
407), a 404 (base URL or model), an account without credit (402, or ``insufficient_quota``) and
a provider never reached (refused, DNS, connect timeout; a connection broken after it was made
is kept). ``record_errors="all"`` keeps every failure (a test of auth-error handling).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, cast, get_args

from cassettes_core._errors import ConfigError, ProviderError
from cassettes_core._model import RecordedError, StreamEvent

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
