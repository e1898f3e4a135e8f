"""``@tool``: a function (sync or async, or a method) whose calls a cassette records.

Outside an active cassette the wrapper calls the function at once: one check of the active
interception, nothing else (``bench/bench_tools.py`` measures it).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, overload

from cassettes_core.tools._policy import ReplayPolicy, parse_policy
from cassettes_core.tools._run import run_async, run_sync
from cassettes_core.tools._spec import Serialize, ToolSpec
from cassettes_core.transport import active_interception

F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    replay: ReplayPolicy = ...,
    name: str | None = ...,
    ignore: Iterable[str] = ...,
    serialize: Serialize | None = ...,
    deserialize: Serialize | None = ...,
) -> Callable[[F], F]: ...


def tool(
    fn: Any = None,
    /,
    *,
    replay: ReplayPolicy = "never",
    name: str | None = None,
    ignore: Iterable[str] = (),
    serialize: Serialize | None = None,
    deserialize: Serialize | None = None,
) -> Any:
    """Record a tool's calls in the active cassette, in the same order as the model calls.

    ``replay="never"`` (the default: a side effect is the safe assumption): replay returns the
    recorded result, or raises the recorded exception again, and the body never runs.
    ``replay="safe"`` (read-only): the body runs in replay too, and a result that differs from
    the recording is reported (``ToolResultChangedWarning``, the pytest summary, a failure
    under ``--cassette-strict``). Either way, arguments that were never recorded are a
    :class:`~cassettes_core.CassetteMissError` in replay.

    ``name`` replaces the default ``module.qualname`` (keep it when you move the function);
    ``ignore`` leaves parameters out of the match (a client, a connection); ``serialize`` /
    ``deserialize`` turn a result that is not plain JSON data into it and back.
    """

    policy = parse_policy(replay, where=f"@tool({'name=' + repr(name) if name else ''})")

    def decorate(target: Any) -> Any:
        if isinstance(target, staticmethod | classmethod):
            return type(target)(decorate(target.__func__))
        spec = ToolSpec.of(
            target,
            policy=policy,
            name=name,
            ignore=ignore,
            serialize=serialize,
            deserialize=deserialize,
        )
        return _wrap(target, spec)

    if fn is not None:
        return decorate(fn)
    return decorate


def _wrap(fn: Callable[..., Any], spec: ToolSpec) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_tool(*args: Any, **kwargs: Any) -> Any:
            current = active_interception()
            if current is None:
                return await fn(*args, **kwargs)
            return await run_async(spec, current.recorder, fn, args, kwargs)

        async_tool.__cassette_tool__ = spec  # type: ignore[attr-defined]
        return async_tool

    @functools.wraps(fn)
    def sync_tool(*args: Any, **kwargs: Any) -> Any:
        current = active_interception()
        if current is None:
            return fn(*args, **kwargs)
        return run_sync(spec, current.recorder, fn, args, kwargs)

    sync_tool.__cassette_tool__ = spec  # type: ignore[attr-defined]
    return sync_tool
