"""The cassette session of one running test (or fixture): its recorder, interception and
results, read from the recorder's event log; ``cassette_for`` opens one for a fixture."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cassettes_core import (
    CassetteError,
    CassetteMissError,
    Interaction,
    Mode,
    Recorder,
    UnsafeCassetteError,
)
from cassettes_core.events import Cursor
from cassettes_core.modes import ModeChoice
from cassettes_core.usage import usage_of
from pytest_plugin._report import (
    LEAVE_ALONE,
    REPORT_LINE_KEY,
    SESSION_KEY,
    CassetteRecord,
    PluginState,
    Problems,
    agent_counts,
    error_failure,
    problems_failure,
    state_of,
)
from pytest_plugin._settings import MARKER, CassetteSpec, rerecord_target, resolve

if TYPE_CHECKING:
    from cassettes_core import MatchPolicy
    from cassettes_core.events import EventKind
    from cassettes_core.options import BeforeRecord
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
            mode=ModeChoice(mode, spec.mode.source),  # resolved once, by the spec
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
    def interactions(self) -> Sequence[Interaction]:
        return self.recorder.cassette.interactions

    def unused(self) -> list[Interaction]:
        """Interactions in the file that this test has not played (so far)."""
        return self.recorder.cassette.unused()

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
        from cassettes_core.transport import httpx2

        return httpx2.CassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    def httpx2_async_transport(self, *, inner: Any = None) -> httpx2_adapter.AsyncCassetteTransport:
        """The ``httpx2.AsyncClient`` twin of :meth:`httpx2_transport`."""
        from cassettes_core.transport import httpx2

        return httpx2.AsyncCassetteTransport(
            self.recorder, inner=inner, block_unmatched=self._block
        )

    def httpx_transport(self, *, inner: Any = None) -> httpx_adapter.CassetteTransport:
        """A legacy ``httpx`` transport on this cassette."""
        from cassettes_core.transport import httpx

        return httpx.CassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

    def httpx_async_transport(self, *, inner: Any = None) -> httpx_adapter.AsyncCassetteTransport:
        """The ``httpx.AsyncClient`` twin of :meth:`httpx_transport`."""
        from cassettes_core.transport import httpx

        return httpx.AsyncCassetteTransport(self.recorder, inner=inner, block_unmatched=self._block)

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
            unsafe=[
                str(finding)
                for event in events
                if event.kind == "unsafe" and isinstance(event.error, UnsafeCassetteError)
                for finding in event.error.findings
            ],
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


def fail_on_problems(session: CassetteSession, raised: BaseException | None) -> None:
    """Fail (a fixture's setup or teardown) on the problems not reported yet."""
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


# -- a fixture's own cassette -----------------------------------------------------------------

# The scopes whose fixtures may read `cassette_config` (a module-scoped fixture by default).
_CONFIGURED_SCOPES = ("function", "class", "module")


def _config_for(request: pytest.FixtureRequest) -> dict[str, object] | None:
    """What ``cassette_config`` says for this fixture: a function, class or module fixture
    reads the directory's defaults like a test. A package or session fixture is wider than any
    one directory's defaults (which ``cassette_config`` pytest would pick would depend on the
    test that happened to set it up first), so it takes its options as keywords only."""
    if request.scope not in _CONFIGURED_SCOPES:
        return None
    from cassettes_core import ConfigError

    try:
        config: dict[str, object] = request.getfixturevalue("cassette_config")
    except pytest.fail.Exception as exc:  # ScopeMismatch: a narrower override than the fixture
        raise ConfigError(
            f"the {request.scope}-scoped fixture {request.fixturename!r} cannot read a "
            f"narrower cassette_config ({str(exc).strip().splitlines()[0]}); make the "
            "cassette_config override module-scoped, as the plugin's own is"
        ) from None
    return config


def _defined_under(request: pytest.FixtureRequest) -> str:
    """The folder (node id) of the conftest that defines a session fixture, ``""`` at the
    root: two same-named session fixtures in different folders get different cassettes."""
    definition = getattr(request, "_fixturedef", None)  # pytest's FixtureDef (no public API)
    baseid = getattr(definition, "baseid", "")
    return baseid if isinstance(baseid, str) else ""


@contextlib.contextmanager
def cassette_for(
    request: pytest.FixtureRequest,
    name: str | None = None,
    *,
    mode: str | None = None,
    repeat_last: bool | None = None,
    policy: MatchPolicy | None = None,
    before_record: BeforeRecord | None = None,
    allow_secrets: Sequence[str] | None = None,
    block_unmatched: bool | None = None,
    record_errors: str | None = None,
) -> Iterator[CassetteSession]:
    """A cassette of its own for the fixture ``request`` belongs to, in force inside the block::

        @pytest.fixture(scope="module")
        def agent(request):
            with cassette_for(request) as cassette:  # cassettes/<module path>/agent.yaml
                yield build_agent()                   # setup and teardown calls recorded here

    The keywords are the marker's; ``strict`` is the tests' own, so it is not one of them.
    A miss, a blocked request or an unrecorded live failure fails the fixture's setup or
    teardown, even when its code caught it.
    """
    given = {
        "mode": mode,
        "repeat_last": repeat_last,
        "policy": policy,
        "before_record": before_record,
        "allow_secrets": allow_secrets,
        "block_unmatched": block_unmatched,
        "record_errors": record_errors,
    }
    mark = pytest.mark.cassette(
        *([name] if name is not None else []),
        **{key: value for key, value in given.items() if value is not None},
    ).mark
    fixture = request.fixturename
    if fixture is None:
        raise pytest.UsageError(
            "cassette_for(request) takes the request of a fixture; a test gets its cassette "
            "from @pytest.mark.cassette or the cassette fixture"
        )
    state = state_of(request.config)
    if request.scope == "function" and state.current() is not None:
        # Its calls run inside the test's own cassette, which already covers function fixtures:
        # a second cassette there would take the test body's calls too.
        raise pytest.fail.Exception(
            f"ConfigError: the function-scoped fixture {fixture!r} runs inside the test's own "
            "cassette, which records its calls already; drop cassette_for there, or give the "
            "fixture a wider scope (class, module, package, session) to keep a cassette of "
            "its own",
            pytrace=False,
        )
    node = request.node
    owner = node.nodeid.partition("[")[0] if isinstance(node, pytest.Item) else node.nodeid
    test_file = node.path
    if request.scope == "session" and (folder := _defined_under(request)):
        owner, test_file = folder, request.config.rootpath / folder
    try:
        spec = resolve(
            state.settings,
            nodeid=f"{owner}::{fixture}",
            test_file=test_file,
            marks=[mark],
            defaults=_config_for(request),
            label="cassette_for",
            # Re-recorded by running the module, class or folder that owns its scope.
            target=rerecord_target(state.settings, owner, test_file) if owner else ".",
        )
        spec = replace(spec, strict=False)  # strict is the tests'
        session = open_session(spec, state)
    except CassetteError as exc:
        raise pytest.fail.Exception(error_failure(exc, None), pytrace=False) from None
    state.fixtures.append((fixture, session))
    raised: BaseException | None = None
    try:
        yield session
    except BaseException as exc:
        raised = exc
        raise
    finally:
        state.fixtures.remove((fixture, session))
        close_session(session, state, fixture=True)
        if not isinstance(raised, LEAVE_ALONE):
            fail_on_problems(session, raised)  # its teardown's problems fail the teardown
