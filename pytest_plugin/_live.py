"""The cassette of one running test: the recorder, global interception, and what it did.

This is the value of the ``cassette`` fixture. It is imported (with the core, httpx and YAML)
only when a test uses a cassette.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes_core import (
    Cassette,
    CassetteMissError,
    ConfigError,
    Interaction,
    LLMRequest,
    Mode,
    Recorder,
    RecorderStats,
)
from pytest_plugin._mode import plan
from pytest_plugin._spec import CassetteSpec
from pytest_plugin._tally import CassetteRecord
from pytest_plugin._usage import usage_of

if TYPE_CHECKING:
    from cassettes_core.transport import Interception, Traffic
    from cassettes_core.transport import httpx as httpx_adapter
    from cassettes_core.transport import httpx2 as httpx2_adapter


class _PluginRecorder(Recorder):
    """A :class:`Recorder` that also keeps what it replayed, for the tokens-saved line."""

    def __init__(self, path: Path, **options: Any) -> None:
        super().__init__(path, **options)
        self.replays: list[Interaction] = []
        self._replays_lock = threading.Lock()

    def find(self, request: LLMRequest, *, stream: bool | None = None) -> Interaction | None:
        found = super().find(request, stream=stream)
        if found is not None:
            with self._replays_lock:
                self.replays.append(found)
        return found


class CassetteSession:
    """One test's cassette, as the ``cassette`` fixture gives it::

        @pytest.mark.cassette
        def test_agent(cassette):
            run_agent()
            assert cassette.replayed == 2 and not cassette.unused()

    ``mode`` is the mode in force (``auto`` already turned into ``replay`` or ``record``),
    ``mode_source`` says who chose it. ``httpx_transport()`` / ``httpx2_transport()`` give a
    ready transport on this cassette for code that takes one (interception already covers
    every client, so most tests never need them).
    """

    def __init__(self, spec: CassetteSpec, *, existed: bool, run_id: str | None = None) -> None:
        self.spec = spec
        recorder_mode, self._shown_mode = plan(spec.mode.mode, existed=existed)
        self.recorder = _PluginRecorder(
            spec.path,
            mode=recorder_mode,
            rerecord_hint=spec.rerecord_hint,
            run_id=run_id,  # one per test run, shared by xdist workers: `record` rewrites once
            **spec.recorder_options,
        )
        self._shown_misses = 0
        self._shown_blocked = 0
        self._accepted = 0
        self._interception: Interception | None = None
        self._paused = 0
        self.skipped = False

    # -- what a test asserts on ---------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.recorder.path

    @property
    def mode(self) -> str:
        """The mode in force: ``auto`` shows as ``replay`` or ``record``."""
        return self._shown_mode

    @property
    def mode_source(self) -> str:
        return self.spec.mode.source

    @property
    def cassette(self) -> Cassette:
        return self.recorder.cassette

    @property
    def interactions(self) -> Sequence[Interaction]:
        return self.recorder.cassette.interactions

    def unused(self) -> list[Interaction]:
        """Interactions in the file that this test has not played (so far)."""
        return self.recorder.cassette.unused()

    @property
    def played_count(self) -> int:
        return self.recorder.cassette.played_count

    @property
    def stats(self) -> RecorderStats:
        return self.recorder.stats

    @property
    def replayed(self) -> int:
        return self.recorder.stats.replayed

    @property
    def recorded(self) -> int:
        return self.recorder.stats.recorded

    @property
    def missed(self) -> int:
        return self.recorder.stats.missed

    @property
    def misses(self) -> list[CassetteMissError]:
        return list(self.recorder.stats.misses)

    def accept_misses(self) -> list[CassetteMissError]:
        """Misses so far that the test expected (``pytest.raises``): they will not fail it.

        Every other miss fails the test, even when the code under test caught it.
        """
        accepted = self.take_misses()
        self._accepted += len(accepted)
        return accepted

    # -- ready transports, for code that takes one ----------------------------------------

    def httpx2_transport(self, *, inner: Any = None) -> httpx2_adapter.CassetteTransport:
        """An ``httpx2`` transport on this cassette (``inner`` carries live calls)."""
        from cassettes_core.transport.httpx2 import CassetteTransport

        return CassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    def httpx2_async_transport(self, *, inner: Any = None) -> httpx2_adapter.AsyncCassetteTransport:
        """The ``httpx2.AsyncClient`` twin of :meth:`httpx2_transport`."""
        from cassettes_core.transport.httpx2 import AsyncCassetteTransport

        return AsyncCassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    def httpx_transport(self, *, inner: Any = None) -> httpx_adapter.CassetteTransport:
        """A legacy ``httpx`` transport on this cassette."""
        from cassettes_core.transport.httpx import CassetteTransport

        return CassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    def httpx_async_transport(self, *, inner: Any = None) -> httpx_adapter.AsyncCassetteTransport:
        """The ``httpx.AsyncClient`` twin of :meth:`httpx_transport`."""
        from cassettes_core.transport.httpx import AsyncCassetteTransport

        return AsyncCassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    @property
    def _block(self) -> bool | None:
        return self.spec.block_unmatched

    def __repr__(self) -> str:
        return (
            f"<cassette {self.path} mode={self.mode} replayed={self.replayed} "
            f"recorded={self.recorded} missed={self.missed}>"
        )

    # -- lifecycle (the plugin's side) ------------------------------------------------------

    def start(self) -> None:
        from cassettes_core.transport import intercept

        self._interception = intercept(self.recorder, block_unmatched=self.spec.block_unmatched)
        self._interception.__enter__()

    def pause(self) -> None:
        """Out of force while a fixture of a wider scope sets up or tears down (nestable)."""
        self._paused += 1
        if self._paused == 1 and self._interception is not None:
            self._interception.pause()

    def resume(self) -> None:
        self._paused -= 1
        if self._paused == 0 and self._interception is not None:
            self._interception.resume()

    def settle(self) -> None:
        """Read live streams the test left open to their end, and record them."""
        from cassettes_core.transport import settle

        settle(self.recorder)

    def stop(self) -> None:
        """Interception off (its exit settles what is still open)."""
        interception, self._interception = self._interception, None
        if interception is None:
            return
        if self._paused:
            self._paused = 0
            interception.resume()  # balanced, so that the exit below leaves nothing behind
        interception.__exit__(None, None, None)

    def take_misses(self) -> list[CassetteMissError]:
        """Misses not yet reported (each is reported once, in the phase it happened in)."""
        misses = self.recorder.stats.misses
        new = list(misses[self._shown_misses :])
        self._shown_misses = len(misses)
        return new

    def take_blocked(self) -> list[ConfigError]:
        """Requests blocked since the last call (they fail the phase, even when caught)."""
        blocked = self._traffic().blocked
        new = list(blocked[self._shown_blocked :])
        self._shown_blocked = len(blocked)
        return new

    def _traffic(self) -> Traffic:
        from cassettes_core.transport import traffic_of

        return traffic_of(self.recorder)

    def strict_unused(self) -> list[Interaction]:
        """Unused interactions that fail this test: strict, own cassette, replay."""
        if not self.spec.strict or self.spec.shared or self.recorder.mode is not Mode.REPLAY:
            return []
        return self.unused()

    def result(self) -> CassetteRecord:
        saved: dict[str, list[int]] = {}
        for interaction in self.recorder.replays:
            usage = usage_of(interaction)
            slot = saved.setdefault(usage.model, [0, 0])
            slot[0] += usage.input_tokens
            slot[1] += usage.output_tokens
        cassette = self.recorder.cassette
        unused = {i.seq for i in cassette.unused()}
        seqs = [i.seq for i in cassette.interactions]
        stats = self.recorder.stats
        traffic = self._traffic()
        return CassetteRecord(
            nodeid=self.spec.nodeid,
            path=str(self.path),
            mode=self.mode,
            source=self.mode_source,
            shared=self.spec.shared,
            strict=self.spec.strict,
            replayed=stats.replayed,
            recorded=stats.recorded,
            missed=stats.missed - self._accepted,
            live=stats.live,
            seqs=seqs,
            played=[s for s in seqs if s not in unused],
            saved=saved,
            skipped=self.skipped,
            went_live=list(traffic.went_live),
            blocked=len(traffic.blocked),
            drained=traffic.drained,
            dropped=traffic.dropped,
            unrecorded=stats.unrecorded,
        )


def open_session(spec: CassetteSpec, *, existed: bool, run_id: str) -> CassetteSession:
    """Load the cassette and turn interception on; the caller stops it at teardown.

    ``existed``: whether the file was there when the session collected its tests.
    """
    session = CassetteSession(spec, existed=existed, run_id=run_id)
    session.start()
    return session


def close_session(session: CassetteSession) -> CassetteRecord:
    """Turn interception off and return what the test did."""
    session.stop()
    return session.result()
