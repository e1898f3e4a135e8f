"""The cassette session of one running test (or fixture): its recorder, interception, and
results.

``CassetteSession`` is the value of the ``cassette`` fixture. It reads what happened from the
recorder's event log (``recorder.log``), the one record of each call: the summary's counts,
the tokens replay saved, and the problems that fail a test phase all come from there. Imported
(with the core, httpx and YAML) only when a test uses a cassette.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cassettes_core import (
    Cassette,
    CassetteError,
    CassetteMissError,
    Interaction,
    Mode,
    Recorder,
    RecorderStats,
)
from cassettes_core.events import Cursor
from cassettes_core.usage import usage_of
from pytest_plugin._agents import agent_counts
from pytest_plugin._report import LEAVE_ALONE, CassetteRecord, Problems, error_failure
from pytest_plugin._settings import MARKER, CassetteSpec, resolve
from pytest_plugin.plugin import REPORT_LINE_KEY, SESSION_KEY, PluginState, state_of

if TYPE_CHECKING:
    from cassettes_core.events import EventKind
    from cassettes_core.transport import Interception
    from cassettes_core.transport import httpx as httpx_adapter
    from cassettes_core.transport import httpx2 as httpx2_adapter


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
        # `auto` decides on the file as the session first saw it (at collection): several
        # tests sharing a new cassette then all record into it, none replays another's miss.
        mode = spec.mode.on_file(existed)
        self._shown_mode = "record" if spec.mode.mode is Mode.AUTO and not existed else mode.value
        self.recorder = Recorder(
            spec.path,
            mode=mode,
            rerecord_hint=spec.rerecord_hint,
            run_id=run_id,  # one per test run, shared by xdist workers: `record` rewrites once
            **spec.recorder_options,
        )
        self.recorder.log.summarized = True  # the summary lists what would be warnings
        self._taken = Cursor(self.recorder.log)  # problems reported so far, each once
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
        return self.recorder.log.count("replayed")

    @property
    def recorded(self) -> int:
        return self.recorder.log.count("recorded")

    @property
    def missed(self) -> int:
        return self.recorder.log.count("missed")

    @property
    def misses(self) -> list[CassetteMissError]:
        return list(self.recorder.stats.misses)

    def accept_misses(self) -> list[CassetteMissError]:
        """Misses so far that the test expected (``pytest.raises``): they will not fail it.

        Every other miss fails the test, even when the code under test caught it.
        """
        accepted = self.take("missed")
        self._accepted += len(accepted)
        return [miss for miss in accepted if isinstance(miss, CassetteMissError)]

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

    def take(self, kind: EventKind) -> list[CassetteError]:
        """The errors of ``kind`` (missed, blocked, refused) not yet reported."""
        taken = self._taken.take(kind)
        return [event.error for event in taken if event.error is not None]

    def strict_unused(self) -> list[Interaction]:
        """Unused interactions that fail this test: strict, own cassette, replay."""
        if not self.spec.strict or self.spec.shared or self.recorder.mode is not Mode.REPLAY:
            return []
        return self.unused()

    def result(self) -> CassetteRecord:
        """What this test did, from the recorder's log (read once, counted in one pass)."""
        events = self.recorder.log.events()
        counts: Counter[str] = Counter(event.kind for event in events)
        saved: dict[str, list[int]] = {}
        for event in events:
            if event.kind != "replayed" or event.interaction is None:
                continue
            usage = usage_of(event.interaction)
            slot = saved.setdefault(usage.model, [0, 0])
            slot[0] += usage.input_tokens
            slot[1] += usage.output_tokens
        cassette = self.recorder.cassette
        unused = {i.seq for i in cassette.unused()}
        seqs = [i.seq for i in cassette.interactions]
        return CassetteRecord(
            nodeid=self.spec.nodeid,
            path=str(self.path),
            mode=self.mode,
            source=self.mode_source,
            shared=self.spec.shared,
            strict=self.spec.strict,
            replayed=counts["replayed"],
            recorded=counts["recorded"],
            missed=counts["missed"] - self._accepted,
            live=counts["live"],
            seqs=seqs,
            played=[s for s in seqs if s not in unused],
            saved=saved,
            skipped=self.skipped,
            went_live=[e.what or "" for e in events if e.kind == "went_live"],
            blocked=counts["blocked"],
            drained=counts["drained"],
            dropped=counts["dropped"],
            unrecorded=counts["refused"],
            **agent_counts(events),
        )


def open_session(spec: CassetteSpec, state: PluginState) -> CassetteSession:
    """Load the cassette and turn interception on; the caller closes it at teardown.

    ``auto`` decides on whether the file was there when the session first looked (collection).
    """
    session = CassetteSession(spec, existed=state.existed(spec.path), run_id=state.run_id)
    session.start()
    return session


def close_session(session: CassetteSession, state: PluginState, *, fixture: bool = False) -> None:
    """Turn interception off and add what the test (or fixture) did to the run's results."""
    if not fixture:
        state.open.remove(session)
    session.stop()
    record = session.result()
    record.fixture = fixture
    state.tally.records.append(record)


def close_for_fixture(
    session: CassetteSession, state: PluginState, raised: BaseException | None
) -> None:
    """Close a fixture's own cassette and fail (its setup or teardown) on its problems."""
    close_session(session, state, fixture=True)
    if not isinstance(raised, LEAVE_ALONE):
        fail_on_problems(session, raised)


def fail_on_problems(session: CassetteSession, raised: BaseException | None) -> None:
    """Fail (a fixture's setup or teardown) on the problems not reported yet."""
    from pytest_plugin._report import problems_failure

    problems = Problems(session.take("missed"), session.take("blocked"), session.take("refused"))
    if problems.every:
        text = problems_failure(problems, raised, session.path)
        raise pytest.fail.Exception(text, pytrace=False) from None


def open_for_test(item: pytest.Item, request: pytest.FixtureRequest) -> CassetteSession:
    """Open the cassette of test ``item`` (its markers over ``cassette_config``), or fail its
    setup with the error's class and the cassette file (never a bare "cassette:")."""
    state = state_of(item.config)
    where = None
    try:
        where = state.place(item)
        spec = resolve(
            state.settings,
            nodeid=item.nodeid,
            test_file=item.path,
            marks=item.iter_markers("cassette"),
            defaults=request.getfixturevalue("cassette_config"),
            label=MARKER,
            where=where,
        )
        session = open_session(spec, state)
    except CassetteError as exc:
        text = error_failure(exc, where.path if where is not None else None)
        raise pytest.fail.Exception(text, pytrace=False) from None
    item.stash[SESSION_KEY] = session
    state.open.append(session)  # the test's: closed at its teardown, or at the session's end
    base = str(state.settings.invocation_dir)
    item.stash[REPORT_LINE_KEY] = (str(spec.path), base, session.mode, session.mode_source)
    return session
