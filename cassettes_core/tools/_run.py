"""One tool call inside an active cassette: replay it, run it and compare, or record it.

::

    mode / found        never                      safe
    replay, recorded    recorded answer            body runs, result compared
    replay, not         CassetteMissError          CassetteMissError
    append, recorded    recorded answer            body runs, result compared
    append, not / record   body runs, recorded     body runs, recorded
    passthrough         body runs                  body runs

A safe tool that ran again hands its caller the *recorded* answer (the model calls that follow
were recorded with it, so the story replays on); a different result is reported.

The recorder decides replay or live exactly as for a model call (same ``seq`` counter, same
miss, same secret guard on the way to the file); only the answer is a tool's: its result, or
its exception raised again.
"""

from __future__ import annotations

import copy
import json
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cassettes_core._errors import CassetteError
from cassettes_core._model import Interaction, LLMResponse
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.events import CallEvent
from cassettes_core.tools._errors import ToolResultChangedError, ToolResultChangedWarning
from cassettes_core.tools._raised import (
    is_recorded_exception,
    rebuilt_exception,
    recorded_exception,
)
from cassettes_core.tools._spec import ToolSpec


@dataclass(frozen=True)
class _Plan:
    """What to do with one call: its request, and the recording to answer or compare with."""

    request: LLMRequest
    recorded: Interaction | None


def _plan(spec: ToolSpec, recorder: Recorder, args: Any, kwargs: Any) -> _Plan:
    request = recorder.normalise(spec.request(args, kwargs))
    return _Plan(request, recorder.find(request, stream=False))


def run_sync(
    spec: ToolSpec, recorder: Recorder, fn: Callable[..., Any], args: Any, kwargs: Any
) -> Any:
    plan = _plan(spec, recorder, args, kwargs)
    if plan.recorded is not None and spec.policy == "never":
        return _answer(spec, plan.recorded)
    started = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
    except CassetteError:
        raise  # ours (a model call's miss inside the tool): not the tool's answer
    except Exception as exc:
        if plan.recorded is None:
            _record(spec, recorder, plan, started, error=exc)
            raise
        _compare(spec, recorder, plan.recorded, error=exc)
        return _answer(spec, plan.recorded)
    if plan.recorded is None:
        _record(spec, recorder, plan, started, result=result)
        return result
    _compare(spec, recorder, plan.recorded, result=result)
    return _answer(spec, plan.recorded)


async def run_async(
    spec: ToolSpec, recorder: Recorder, fn: Callable[..., Awaitable[Any]], args: Any, kwargs: Any
) -> Any:
    plan = _plan(spec, recorder, args, kwargs)
    if plan.recorded is not None and spec.policy == "never":
        return _answer(spec, plan.recorded)
    started = time.perf_counter()
    try:
        result = await fn(*args, **kwargs)
    except CassetteError:
        raise
    except Exception as exc:
        if plan.recorded is None:
            _record(spec, recorder, plan, started, error=exc)
            raise
        _compare(spec, recorder, plan.recorded, error=exc)
        return _answer(spec, plan.recorded)
    if plan.recorded is None:
        _record(spec, recorder, plan, started, result=result)
        return result
    _compare(spec, recorder, plan.recorded, result=result)
    return _answer(spec, plan.recorded)


def _answer(spec: ToolSpec, interaction: Interaction) -> Any:
    if interaction.error is not None and is_recorded_exception(interaction.error):
        raise rebuilt_exception(spec.name, interaction.error)
    if interaction.error is not None:  # a provider's failure, in a hand-edited file
        raise interaction.error.to_exception(interaction.provider)
    body = interaction.response.body if interaction.response is not None else None
    # A copy: what the caller does with an answer must not change the next replay of it.
    return spec.replayed(copy.deepcopy(body))


def _record(
    spec: ToolSpec,
    recorder: Recorder,
    plan: _Plan,
    started: float,
    *,
    result: Any = None,
    error: Exception | None = None,
) -> None:
    """Write a live outcome (record and append; a no-op in passthrough)."""
    if not recorder.records:
        return
    duration = round((time.perf_counter() - started) * 1000)
    if error is not None:
        recorder.record(
            plan.request,
            endpoint=spec.name,
            error=recorded_exception(error),
            duration_ms=duration,
        )
        return
    try:
        stored = spec.stored(result)
    except CassetteError as exc:
        if not recorder.best_effort:
            raise
        from cassettes_core.secrets import UnsafeInteractionDroppedWarning

        warnings.warn(
            f"best-effort recording dropped a tool call: {exc}",
            UnsafeInteractionDroppedWarning,
            stacklevel=4,
        )
        return
    recorder.record(
        plan.request,
        endpoint=spec.name,
        response=LLMResponse(body=copy.deepcopy(stored)),  # the caller keeps the original
        duration_ms=duration,
    )


def _compare(
    spec: ToolSpec,
    recorder: Recorder,
    recorded: Interaction,
    *,
    result: Any = None,
    error: Exception | None = None,
) -> None:
    """Report a safe tool whose result of now differs from its recording."""
    if recorded.error is not None:
        was: Any = {"raised": recorded.error.message}
    else:
        was = recorded.response.body if recorded.response is not None else None
    if error is not None:
        now: Any = {"raised": recorded_exception(error).message}
    else:
        try:
            now = spec.stored(result)
        except CassetteError:
            now = {"unstorable": repr(result)}
    if _same(now, was):
        return
    changed = ToolResultChangedError(spec.name, recorded.seq, was, now, str(recorder.path))
    event = CallEvent(
        "changed", recorded.provider, digest=recorded.digest, interaction=recorded, error=changed
    )
    recorder.log.add(event)
    if not recorder.log.summarized:
        warnings.warn(str(changed).split("\n", 1)[0], ToolResultChangedWarning, stacklevel=4)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``1`` is not ``1.0`` nor ``True``; key order does not count."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return False
