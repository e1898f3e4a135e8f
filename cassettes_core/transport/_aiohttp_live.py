"""A live aiohttp SSE answer, recorded as it passes: each chunk reaches the caller on arrival.

The response's ``content`` is swapped for a stream we feed: a task on the response's loop reads
the connection, hands each chunk to the tap and to the caller's stream at once, and records the
stream when it ends. The caller reads as before (``iter_any``, ``readline``, ``read``).
Releasing or closing the response before its end does not cut the recording short: the task
reads what is left first, then gives the connection back. An ``intercept`` block or a pytest
test that ends with the stream still open settles it (``_settle``), bounded by 30 s.

A refusal of the secret guard reaches the caller's next read, never a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import Any

import aiohttp

from cassettes_core._errors import CassetteError
from cassettes_core.events import CallEvent
from cassettes_core.transport._aiohttp_answers import WIRE, new_reader
from cassettes_core.transport._exchange import Call
from cassettes_core.transport._settle import LiveTap

_WATCH_S = 0.05  # how often a released stream checks that its connection is still there


class LiveStream(LiveTap):
    """Tees ``response``'s live body into the tap and into a stream the caller reads."""

    def __init__(self, call: Call, response: aiohttp.ClientResponse) -> None:
        super().__init__(call.recorder, call.tap(WIRE), response, request=None)
        self.loop = asyncio.get_running_loop()
        self._source = response.content
        self._reader = new_reader(self.loop)
        self._release: Callable[[], Any] = response.release
        self._close: Callable[[], Any] = response.close
        self._let_go: Callable[[], Any] | None = None  # what the caller asked for, once done
        response.content = self._reader
        # Instance attributes win over the class's methods: the caller's release waits for us.
        response.release = self._released  # type: ignore[method-assign]
        response.close = self._closed  # type: ignore[method-assign]
        self.task = self.loop.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            async for chunk in self._source.iter_any():
                self.tap.feed(chunk)
                self._reader.feed_data(chunk)
        except asyncio.CancelledError:  # its loop is going away: settling it says so later,
            # in the caller's context (a warning raised in a dying task would be lost)
            self._reader.set_exception(aiohttp.ClientPayloadError("stream cancelled"))
            raise
        except Exception as exc:
            self._end(functools.partial(self.failed, exc), failure=exc)
            return
        self._end(self.finished)

    def _end(self, record: Callable[[], None], failure: Exception | None = None) -> None:
        try:
            record()
        except CassetteError as refusal:  # the caller must see it on its next read
            self._reader.set_exception(refusal)
        else:
            if failure is not None:
                self._reader.set_exception(failure)
            else:
                self._reader.feed_eof()
        finally:
            if self.tap.done:
                if self.draining:
                    self._log.add(CallEvent("drained", self.tap.provider))
                self.ended()
            # Else the caller had let go and the connection went before the end: the stream
            # stays registered, and settling it says so (a warning in the caller's context).
            if self._let_go is not None:  # the caller released early: do it now, on the
                # connection's own stream (aiohttp marks the stream it releases as closed)
                self.response.content = self._source
                with contextlib.suppress(Exception):
                    self._let_go()
                self.response.content = self._reader

    def _released(self) -> Any:
        if self.task.done():
            return self._release()
        self._defer(self._let_go or self._release)
        return None

    def _closed(self) -> None:
        if self.task.done():
            self._close()
            return
        self._defer(self._close)

    def _defer(self, let_go: Callable[[], Any]) -> None:
        """The caller let go before the end: read the rest first, unless the connection goes
        (a session closed meanwhile drops it without a word to the stream: watch for that)."""
        first = self._let_go is None
        self.draining = True
        self._let_go = let_go
        if first:
            watch = self.loop.create_task(self._watch_connection())
            self.task.add_done_callback(lambda _: watch.cancel())

    async def _watch_connection(self) -> None:
        protocol = getattr(self._source, "_protocol", None)
        while not self.task.done():
            if protocol is not None and not protocol.connected:
                self._source.set_exception(aiohttp.ClientConnectionError("Connection closed"))
                return
            await asyncio.sleep(_WATCH_S)

    async def asettle(self) -> None:
        """Settle from async code on the stream's loop: wait for the rest (bounded)."""
        if asyncio.get_running_loop() is not self.loop:
            self.settle()
            return
        await self._wait()

    def settle(self) -> None:
        """Settle from sync code: run the rest on the stream's loop, if it can still run."""
        if self.task.done():
            if not self.tap.done:
                self.drop(RuntimeError("its connection closed before its end"))
            return
        try:
            if self.loop.is_running() and not _running_here(self.loop):
                # Its loop runs in another thread (the stream's reader is there): wait for the
                # rest on that loop, never reading it from here.
                waiting = asyncio.run_coroutine_threadsafe(self._wait(), self.loop)
                waiting.result(self.bound + 1.0)
                return
            if self.loop.is_closed() or self.loop.is_running():
                raise RuntimeError("its event loop is closed or busy")
            self.loop.run_until_complete(self._wait())
        except CassetteError:
            raise
        except Exception as exc:
            self.drop(exc)

    async def _wait(self) -> None:
        if self.task.done():
            if not self.tap.done:
                self.drop(RuntimeError("its connection closed before its end"))
            return
        self.draining = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout=self.bound)
        except TimeoutError as exc:
            self.task.cancel()
            self.drop(exc)
        # Read to its end: the pump recorded it and counted it drained.


def _running_here(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop`` is the loop running in this thread now."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
