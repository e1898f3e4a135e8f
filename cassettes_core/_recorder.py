"""The recording engine: one cassette in one mode, deciding for each request replay or live.

:class:`Recorder` is what both :class:`~cassettes_core.CassetteProvider` and the httpx transport
stand on. For each request it either returns the recorded interaction to replay, raises
:class:`CassetteMissError`, or says "go live"; after a live call it records the outcome through
the secret guard into the file. In ``replay`` nothing live is ever called, not even on a miss.
"""

from __future__ import annotations

import copy
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cassettes_core._errors import (
    CassetteFormatError,
    CassetteMissError,
    ConfigError,
    ProviderError,
)
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._record_errors import (
    RecordErrors,
    UnrecordedFailureError,
    parse_record_errors,
    refused,
)
from cassettes_core._request import DEFAULT_POLICY, LLMRequest, MatchPolicy
from cassettes_core.diff import MissReason, MissReport, closest_recording
from cassettes_core.digest import normalise
from cassettes_core.modes import Mode, resolve_mode
from cassettes_core.store import (
    MAX_DEPTH,
    Cassette,
    CassetteFile,
    DriftPolicy,
    Lookup,
    RecordRun,
    VersionDrift,
    WriteGuard,
    check_drift_policy,
    check_permissions,
    check_writable,
    depth_of,
    drift_on_load,
    load_cassette,
    parse_interaction,
)

BeforeRecord = Callable[[dict[str, Any]], dict[str, Any] | None]
# The re-record line of a miss, given the mode it should name ("record" or "append").
RerecordHint = Callable[[str], str]


@dataclass
class RecorderStats:
    """What a recorder did; the pytest summary adds these up."""

    replayed: int = 0
    recorded: int = 0
    missed: int = 0
    live: int = 0
    misses: list[CassetteMissError] = field(default_factory=list)
    unrecorded: int = 0  # live failures the record_errors policy kept out of the cassette
    # … of which those not yet reported (the pytest plugin takes them to fail the test).
    refused: list[UnrecordedFailureError] = field(default_factory=list)


@dataclass(frozen=True)
class _Outcome:
    """What a live call produced, as handed to :meth:`Recorder.record`."""

    endpoint: str | None
    response: LLMResponse | None
    stream: Sequence[StreamEvent] | None
    error: ProviderError | RecordedError | None
    duration_ms: int


class Recorder:
    """One cassette file used in one mode.

    ``mode`` is the explicit choice (``None`` resolves from the environment); ``auto`` becomes
    ``replay`` when the file exists and ``record`` when it does not.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        mode: str | Mode | None = None,
        policy: MatchPolicy = DEFAULT_POLICY,
        repeat_last: bool = False,
        before_record: BeforeRecord | None = None,
        allow_secrets: Iterable[str] = (),
        guard: WriteGuard | None = None,
        rerecord_hint: str | RerecordHint | None = None,
        best_effort: bool = False,
        run_id: str | None = None,
        record_errors: RecordErrors | str = "useful",
        on_version_drift: DriftPolicy | None = None,
    ) -> None:
        self.path = Path(path)
        self.record_errors = parse_record_errors(record_errors)
        check_drift_policy(on_version_drift)
        self.best_effort = best_effort
        self.run_id = run_id
        self.requested_mode = resolve_mode(mode)
        self.policy = policy
        self.before_record = before_record
        self.rerecord_hint = rerecord_hint
        self.stats = RecorderStats()
        self._allow = tuple(allow_secrets)
        self._guard = guard
        self._lock = threading.Lock()
        self._first_write = True
        loaded = None
        if self.requested_mode in (Mode.AUTO, Mode.REPLAY, Mode.APPEND):
            loaded = load_cassette(self.path, policy=policy, repeat_last=repeat_last)
        if self.requested_mode is Mode.AUTO:
            self.mode = Mode.REPLAY if loaded is not None else Mode.RECORD
        else:
            self.mode = self.requested_mode
        if self.records:
            check_writable(self.path)  # before a live call is paid for
        # Versions that differ from the ones that recorded the file (the plugin's summary).
        self.version_drift: list[VersionDrift] = []
        if loaded is not None and loaded.manifest is not None and len(loaded):
            self.version_drift = drift_on_load(
                self.path, loaded.manifest, loaded.interactions, on_version_drift
            )
        self.cassette = loaded or Cassette(self.path, policy=policy, repeat_last=repeat_last)
        self._file = CassetteFile(self.path)  # the guard is made at the first write
        # `record` starts the file over once per run, keeping what other writers record
        # meanwhile; what the file holds now is what this run replaces.
        self._run: RecordRun | None = (
            self._file.begin_record(run_id) if self.requested_mode is Mode.RECORD else None
        )

    # -- deciding ---------------------------------------------------------------------------

    @property
    def records(self) -> bool:
        return self.mode in (Mode.RECORD, Mode.APPEND)

    def normalise(self, request: LLMRequest) -> LLMRequest:
        """The request with its semantic fields chosen by this recorder's policy."""
        return self.policy.split(request)

    def find(self, request: LLMRequest, *, stream: bool | None = None) -> Interaction | None:
        """The interaction to replay, ``None`` to go live; raises on a miss in replay.

        ``request`` must already be normalised; ``stream`` says which shape of answer the
        caller can take (``None``: either).
        """
        if self.mode in (Mode.RECORD, Mode.PASSTHROUGH):
            if self.mode is Mode.RECORD:
                _refuse_unstorable(request, self._file.path)
            self._count("live")
            return None
        digest = request.digest()
        found = self.cassette.lookup(digest, stream=stream)
        if found.interaction is not None:
            self._count("replayed")
            return found.interaction
        if self.mode is Mode.APPEND:
            _refuse_unstorable(request, self._file.path)
            self._count("live")
            return None
        error = CassetteMissError(self._miss_report(request, digest, found, stream))
        with self._lock:
            self.stats.missed += 1
            self.stats.misses.append(error)
        raise error

    def _count(self, what: str) -> None:
        with self._lock:  # requests may come from many threads at once
            setattr(self.stats, what, getattr(self.stats, what) + 1)

    def _miss_report(
        self, request: LLMRequest, digest: str, found: Lookup, stream: bool | None
    ) -> MissReport:
        exists = self.path.exists() or len(self.cassette) > 0
        recorded, asked = found.recorded, found.asked
        reason: MissReason
        if not exists:
            reason = "no_cassette"
        elif recorded:
            reason = "exhausted"
        elif found.other_shape:
            reason = "shape_stream" if stream else "shape_complete"
        else:
            reason = "no_match"
        closest = (
            closest_recording(request, self.cassette.interactions) if reason == "no_match" else None
        )
        # A changed request needs `record` (its stale recording must go); a new one `append`.
        # A changed request leaves a recording of its provider unplayed (the one it replaced,
        # whichever recording it looks most like), while a new one (an added call) comes
        # after every recording of its provider was played.
        changed = reason in ("shape_stream", "shape_complete") or (
            closest is not None
            and any(i.provider == request.provider for i in self.cassette.unused())
        )
        hint = self._rerecord_hint("record" if changed else "append")
        return MissReport(
            cassette_path=self.path,
            mode=self.mode.value,
            request=request,
            digest=digest,
            reason=reason,
            recorded=recorded,
            asked=asked,
            interactions=len(self.cassette),
            closest=closest,
            rerecord=hint,
        )

    def _rerecord_hint(self, mode: str) -> str:
        given = self.rerecord_hint
        if isinstance(given, str):
            return given
        if given is not None:
            return given(mode)
        if mode == "record":
            return (
                f"CASSETTE_MODE=record <the command that ran this>   (the request changed: "
                f"record rewrites {self.path} with the new answer; append would keep the "
                "stale recording beside it, never played again)"
            )
        return (
            f"CASSETTE_MODE=append <the command that ran this>   (a new request: append adds "
            f"it to {self.path} and keeps every recording; record would rewrite the file)"
        )

    # -- recording --------------------------------------------------------------------------

    def record(
        self,
        request: LLMRequest,
        *,
        endpoint: str | None = None,
        response: LLMResponse | None = None,
        stream: Sequence[StreamEvent] | None = None,
        error: ProviderError | RecordedError | None = None,
        duration_ms: int = 0,
    ) -> Interaction | None:
        """Write one live outcome to the cassette (in record/append modes; else a no-op).

        Raises :class:`UnsafeCassetteError` (nothing written) if the secret guard refuses it;
        with ``best_effort`` the interaction is dropped with a warning instead, and recording
        never raises into the caller. Auth, cookie and organisation headers are stripped.
        """
        if not self.records:
            return None
        outcome = _Outcome(endpoint, response, stream, error, duration_ms)
        if not self.best_effort:
            return self._record(request, outcome)
        try:
            return self._record(request, outcome)
        except Exception as exc:
            from cassettes_core.secrets import UnsafeInteractionDroppedWarning

            warnings.warn(
                f"best-effort recording dropped an interaction: {exc}",
                UnsafeInteractionDroppedWarning,
                stacklevel=3,
            )
            return None

    def _refuse_setup_failure(self, request: LLMRequest, outcome: _Outcome) -> None:
        """Raise (nothing written) when the policy keeps this failure out of the cassette."""
        error = outcome.error
        failure = RecordedError.from_exception(error) if isinstance(error, ProviderError) else error
        if not refused(self.record_errors, failure, outcome.stream):
            return
        assert failure is not None
        refusal = UnrecordedFailureError(failure, provider=request.provider, path=self.path)
        with self._lock:
            self.stats.unrecorded += 1
            self.stats.refused.append(refusal)
        raise refusal

    def take_refused(self) -> list[UnrecordedFailureError]:
        """The refusals not taken yet (each is reported once)."""
        with self._lock:
            taken, self.stats.refused = self.stats.refused, []
        return taken

    def _record(self, request: LLMRequest, outcome: _Outcome) -> Interaction | None:
        from cassettes_core.secrets import strip_sensitive_headers

        self._refuse_setup_failure(request, outcome)  # before anything is scanned or written

        response, error = outcome.response, outcome.error
        if response is not None:
            response = replace(response, headers=strip_sensitive_headers(response.headers))
        recorded_error = (
            RecordedError.from_exception(error) if isinstance(error, ProviderError) else error
        )
        if recorded_error is not None:
            recorded_error = replace(
                recorded_error, headers=strip_sensitive_headers(recorded_error.headers)
            )
        interaction = Interaction(
            seq=0,
            digest=request.digest(),
            request=request,
            endpoint=outcome.endpoint,
            response=response,
            stream=tuple(outcome.stream) if outcome.stream is not None else None,
            error=recorded_error,
            duration_ms=outcome.duration_ms,
        )
        if self.before_record is not None:
            hooked = self._apply_hook(interaction)
            if hooked is None:
                return None
            interaction = hooked
        with self._lock:
            rewrite = self._run is not None and self._first_write
            written = self._writer().append([interaction], rewrite=rewrite, run=self._run)
            self._first_write = False
            self.cassette.add(written[0])
            self.stats.recorded += 1
        return written[0]

    def _apply_hook(self, interaction: Interaction) -> Interaction | None:
        assert self.before_record is not None
        original = interaction.to_dict()
        edited = self.before_record(copy.deepcopy(original))
        if edited is None:
            return None
        if not isinstance(edited, dict):
            raise ConfigError(
                f"before_record must return the interaction dict or None, not "
                f"{type(edited).__name__}"
            )
        try:
            normalise(edited)
        except ConfigError as exc:
            raise ConfigError(
                f"before_record returned data a cassette cannot hold: {exc}"
            ) from None
        edited["digest"] = interaction.digest  # the match key stays the request as sent
        edited["seq"] = 1  # the real seq is given under the file lock
        if _request_changed(original, edited):
            edited["redacted"] = True
        try:
            return parse_interaction(edited, self.path)
        except CassetteFormatError as exc:
            raise ConfigError(
                f"before_record returned an interaction that cannot be stored: {exc.reason}"
            ) from None

    def _writer(self) -> CassetteFile:
        if self._file.guard is None:
            self._file.guard = self._guard or self._default_guard()
        return self._file

    def _default_guard(self) -> WriteGuard:
        from cassettes_core.secrets import SecretGuard  # detect-secrets loads only to write

        guard: WriteGuard = SecretGuard(allow=self._allow)
        return guard


# A request sits 3 levels down in the file: the document, `interactions`, the interaction.
_REQUEST_LEVEL = 3


def _refuse_unstorable(request: LLMRequest, path: Path) -> None:
    """Fail before a live call is paid for if the request cannot be recorded there."""
    check_permissions(path)
    request.digest()  # raises ConfigError for data JSON cannot hold or cannot digest
    if depth_of(request.to_record()) + _REQUEST_LEVEL > MAX_DEPTH:
        raise ConfigError(
            f"cannot record to {path}: the request is nested deeper than a cassette holds "
            f"({MAX_DEPTH} levels in all); flatten it or leave this call out of the "
            "cassette"
        )


def _request_changed(original: Mapping[str, Any], edited: Mapping[str, Any]) -> bool:
    def semantic(item: Mapping[str, Any]) -> Any:
        request = item.get("request")
        if not isinstance(request, Mapping):
            return request
        return {k: v for k, v in request.items() if k != "params"}

    return bool(semantic(original) != semantic(edited))
