"""The recording engine: one cassette in one mode, deciding for each request replay or live.

:class:`Recorder` is what both :class:`~cassettes_core.CassetteProvider` and the httpx transport
stand on. For each request it either returns the recorded interaction to replay, raises
:class:`CassetteMissError`, or says "go live"; after a live call it records the outcome through
the secret guard into the file. In ``replay`` nothing live is ever called, not even on a miss.
"""

from __future__ import annotations

import copy
import threading
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes_core._errors import (
    CassetteFormatError,
    CassetteMissError,
    ConfigError,
    ProviderError,
    UnsafeCassetteError,
    UnsafeInteractionDroppedWarning,
)
from cassettes_core._model import Interaction, LLMResponse, RecordedError, StreamEvent
from cassettes_core._record_errors import (
    RecordErrors,
    UnrecordedFailureError,
    parse_record_errors,
    refused,
)
from cassettes_core._request import DEFAULT_POLICY, LLMRequest, MatchPolicy
from cassettes_core.digest import MAX_DEPTH, depth_of, normalise
from cassettes_core.events import CallEvent, CallLog, RecorderStats
from cassettes_core.modes import MODES, Mode, ModeChoice, resolve
from cassettes_core.options import BeforeRecord, RerecordHint
from cassettes_core.store import (
    Cassette,
    CassetteFile,
    DriftPolicy,
    VersionDrift,
    check_drift_policy,
    check_permissions,
    check_writable,
    drift_on_load,
    load_cassette,
    parse_interaction,
)

if TYPE_CHECKING:
    from cassettes_core.store import WriteGuard

__all__ = ["BeforeRecord", "Recorder", "RecorderStats", "RerecordHint"]


class Recorder:
    """One cassette file used in one mode.

    ``mode`` is the explicit choice (``None`` resolves from the environment, see
    :mod:`cassettes_core.modes`; a :class:`ModeChoice` is already resolved); ``auto``
    becomes ``replay`` when the file exists and ``append`` (recording what is missing) when
    it does not. What happened to each call is in :attr:`log`; :attr:`stats` counts it.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        mode: str | Mode | ModeChoice | None = None,
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
        choice = mode if isinstance(mode, ModeChoice) else resolve(marker=mode)
        self.policy = policy
        self.before_record = before_record
        self.rerecord_hint = rerecord_hint
        self.log = CallLog()
        self._allow = tuple(allow_secrets)
        self._guard = guard
        self._lock = threading.Lock()
        self._first_write = True
        loaded = None
        if choice.mode is Mode.AUTO or MODES[choice.mode].loads:
            loaded = load_cassette(self.path, policy=policy, repeat_last=repeat_last)
        self.mode = choice.on_file(loaded is not None)
        if self.records:
            check_writable(self.path)  # before a live call is paid for
        # Versions that differ from the ones that recorded the file (the plugin's summary).
        self.version_drift: list[VersionDrift] = []
        if loaded is not None and loaded.manifest is not None and len(loaded):
            self.version_drift = drift_on_load(
                self.path, loaded.manifest, loaded.interactions, on_version_drift
            )
        self.cassette = loaded or Cassette(self.path, policy=policy, repeat_last=repeat_last)
        # The file is made when first needed (a replay never needs it), at the place the path
        # named now: a relative path must not follow the process into another directory.
        self._file_path = self.path.absolute()
        self._file_made: CassetteFile | None = None
        # `record` starts the file over at the first write of its run (the plugin gives every
        # test of a session, and every pytest-xdist worker, one run id); later writes append.
        self._run_id = (run_id or uuid.uuid4().hex) if MODES[self.mode].rewrites else None
        if self.records:
            self._file.fold()  # a journal a killed writer left is folded in at this open

    @property
    def _file(self) -> CassetteFile:
        """The file this recorder writes (its guard is made at the first write)."""
        if self._file_made is None:
            self._file_made = CassetteFile(self._file_path)
        return self._file_made

    def close(self) -> None:
        """Fold what this recorder journaled into the cassette file (a whole write); the
        test's end and an ``intercept`` block's exit call it."""
        if self._file_made is not None:
            self._file_made.fold()

    @property
    def stats(self) -> RecorderStats:
        """What this recorder did so far, counted from :attr:`log`."""
        return RecorderStats(self.log)

    # -- deciding ---------------------------------------------------------------------------

    @property
    def records(self) -> bool:
        return MODES[self.mode].writes

    def normalise(self, request: LLMRequest) -> LLMRequest:
        """The request with its semantic fields chosen by this recorder's policy."""
        return self.policy.split(request)

    def find(self, request: LLMRequest, *, stream: bool | None = None) -> Interaction | None:
        """The interaction to replay, ``None`` to go live; raises on a miss in replay.

        ``request`` must already be normalised; ``stream`` says which shape of answer the
        caller can take (``None``: either).
        """
        traits = MODES[self.mode]
        if not traits.replays:
            self._go_live(request)
            return None
        digest = request.digest()
        found = self.cassette.lookup(digest, stream=stream)
        if found.interaction is not None:
            self.log.add(
                CallEvent(
                    "replayed", request.provider, digest=digest, interaction=found.interaction
                )
            )
            return found.interaction
        if traits.goes_live:
            self._go_live(request)
            return None
        from cassettes_core.miss_report import miss_report  # a miss only: replay never needs it

        report = miss_report(
            request,
            digest,
            found,
            stream=stream,
            cassette=self.cassette,
            mode=self.mode.value,
            rerecord=self._rerecord_hint,
        )
        error = CassetteMissError(report)
        self.log.add(CallEvent("missed", request.provider, digest=digest, error=error))
        raise error

    def _go_live(self, request: LLMRequest) -> None:
        if self.records:
            _refuse_unstorable(request, self._file.path)
        self.log.add(CallEvent("live", request.provider))

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
        credentials: Sequence[str] = (),
    ) -> Interaction | None:
        """Write one live outcome to the cassette (in record/append modes; else a no-op).

        Raises :class:`UnsafeCassetteError` (nothing written) if the secret guard refuses it;
        with ``best_effort`` the interaction is dropped with a warning instead, and recording
        never raises into the caller. Auth, cookie and organisation headers are stripped.
        ``credentials`` (the keys the request carried) are masked wherever a refusal's
        message would quote them.
        """
        if not self.records:
            return None
        from cassettes_core.secrets import strip_sensitive_headers

        failure = RecordedError.from_exception(error) if isinstance(error, ProviderError) else error
        try:
            digest = request.digest()
            if failure is not None and refused(self.record_errors, failure, stream):
                # Kept out by the policy: raised before anything is scanned or written.
                refusal = UnrecordedFailureError(
                    failure, provider=request.provider, path=self.path, hidden=credentials
                )
                self.log.add(CallEvent("refused", request.provider, digest=digest, error=refusal))
                raise refusal
            if response is not None:
                response = replace(response, headers=strip_sensitive_headers(response.headers))
            if failure is not None:
                failure = replace(failure, headers=strip_sensitive_headers(failure.headers))
            built = Interaction(
                seq=0,
                digest=digest,
                request=request,
                endpoint=endpoint,
                response=response,
                stream=tuple(stream) if stream is not None else None,
                error=failure,
                duration_ms=duration_ms,
            )
            hooked = built if self.before_record is None else self._apply_hook(built)
            if hooked is None:
                return None
            with self._lock:
                run = self._run_id if self._first_write else None
                written = self._writer().record(hooked, run=run)
                self._first_write = False
                self.cassette.add(written)
        except Exception as exc:
            if isinstance(exc, UnsafeCassetteError):  # the summary names it, even if caught
                self.log.add(CallEvent("unsafe", request.provider, digest=digest, error=exc))
            if not self.best_effort:
                raise
            warnings.warn(
                f"best-effort recording dropped an interaction: {exc}",
                UnsafeInteractionDroppedWarning,
                stacklevel=3,
            )
            return None
        self.log.add(CallEvent("recorded", request.provider, digest=digest, interaction=written))
        return written

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
            from cassettes_core.secrets import SecretGuard  # detect-secrets loads only to write

            self._file.guard = self._guard or SecretGuard(allow=self._allow)
        return self._file


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
