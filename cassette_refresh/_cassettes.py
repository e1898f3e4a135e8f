"""Reading the cassettes to check, and (with ``--write``) writing them back re-recorded.

Files are read and validated by the store (``cassettes_core._store``): a malformed cassette is a
:class:`CassetteFormatError` naming the file and the place, never a partial check. Writing goes
through the secret guard and the store's atomic writer, under the cassette's lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cassette_refresh._reissue import LiveAnswer, LiveCall
from cassette_refresh._skeleton import Answer
from cassettes_core._errors import ConfigError
from cassettes_core._manifest import Manifest
from cassettes_core._model import Interaction, LLMResponse, StreamEvent
from cassettes_core._store import WriteGuard, atomic_write, lock_for, read_snapshot, render

DEFAULT_ENDPOINTS: Mapping[str, str] = {
    "openai.chat": "/v1/chat/completions",
    "openai.responses": "/v1/responses",
    "openai.embeddings": "/v1/embeddings",
    "anthropic.messages": "/v1/messages",
}
SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Recorded:
    """One recorded interaction and the file it came from."""

    path: Path
    interaction: Interaction

    @property
    def origin(self) -> str:
        return f"{self.path}#{self.interaction.seq}"

    @property
    def provider(self) -> str:
        return self.interaction.provider

    @property
    def endpoint(self) -> str:
        return self.interaction.endpoint or DEFAULT_ENDPOINTS.get(self.provider, "")

    @property
    def key(self) -> tuple[str, int]:
        return (str(self.path), self.interaction.seq)

    def call(self) -> LiveCall:
        """The request to send again: semantic fields and recorded params, as first sent."""
        interaction = self.interaction
        return LiveCall(
            self.provider,
            self.endpoint,
            interaction.request.body(),
            self.origin,
            stream=interaction.stream is not None,
        )

    def answer(self) -> Answer | None:
        """The recorded answer for the shape check; ``None`` for a recorded error."""
        interaction = self.interaction
        if interaction.stream is not None and interaction.error is None:
            events = tuple((event.event, event.data) for event in interaction.stream)
            return Answer(self.provider, self.endpoint, events=events, origin=self.origin)
        if interaction.response is not None:
            return Answer(
                self.provider, self.endpoint, body=interaction.response.body, origin=self.origin
            )
        return None


def live_answer(recorded: Recorded, live: LiveAnswer) -> Answer:
    return Answer(
        recorded.provider,
        recorded.endpoint,
        body=live.body,
        events=live.events,
        origin=f"live {recorded.origin}",
    )


def find_cassettes(paths: Iterable[Path | str]) -> list[Path]:
    """The cassette files named or found (recursively, ``*.yaml``/``*.yml``) under ``paths``."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if candidate.suffix in SUFFIXES and candidate.is_file():
                    found[candidate] = None
        elif path.is_file():
            found[path] = None
        else:
            raise ConfigError(
                f"{path}: no such file or directory\n"
                "TIP: pass cassette files or folders, e.g. `cassette-refresh check cassettes/`"
            )
    return list(found)


def load_recorded(files: Sequence[Path]) -> list[Recorded]:
    """Every interaction of ``files``; CassetteFormatError on the first bad file."""
    recorded: list[Recorded] = []
    for path in files:
        snapshot = read_snapshot(path)
        recorded.extend(Recorded(path, interaction) for interaction in snapshot.interactions)
    return recorded


def rerecorded(interaction: Interaction, live: LiveAnswer) -> Interaction:
    """``interaction`` with its answer replaced by the live one (request, seq, digest kept)."""
    if live.events is not None:
        stream = tuple(StreamEvent(data=data, event=name) for name, data in live.events)
        return dataclasses.replace(
            interaction, response=None, stream=stream, error=None, duration_ms=live.duration_ms
        )
    response = LLMResponse(body=live.body, status=live.status, headers=dict(live.headers))
    return dataclasses.replace(
        interaction, response=response, stream=None, error=None, duration_ms=live.duration_ms
    )


def default_guard() -> WriteGuard:
    """The secret guard every write goes through."""
    try:
        from cassettes_core._secrets import SecretGuard
    except ImportError as exc:  # pragma: no cover - the guard ships with the library
        raise ConfigError("the secret guard is not available: refusing to write") from exc
    guard: WriteGuard = SecretGuard()
    return guard


def write_back(
    path: Path,
    live: Mapping[int, LiveAnswer],
    *,
    guard: WriteGuard,
) -> bool:
    """Re-record the interactions of ``path`` that have a live answer (by seq).

    The file is re-read under its lock, so a concurrent append is not lost; the guard sees every
    interaction before anything touches the disk. Returns whether anything was written.
    """
    with lock_for(path):
        snapshot = read_snapshot(path)
        if snapshot.manifest is None or not any(i.seq in live for i in snapshot.interactions):
            return False
        interactions = [
            rerecorded(i, live[i.seq]) if i.seq in live else i for i in snapshot.interactions
        ]
        guard.check([i.to_dict() for i in interactions], path=path)
        atomic_write(path, render(Manifest.current(), interactions))
    return True
