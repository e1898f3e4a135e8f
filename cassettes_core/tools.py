"""Tools in the cassette: ``@tool(replay="never" | "safe")`` (DESIGN §9).

    from cassettes_core import tool

    @tool(replay="never")            # a side effect: replay returns the recording, never runs it
    def send_email(to: str, body: str) -> dict: ...

    @tool(replay="safe")             # read-only: runs again in replay, the result is compared
    def get_weather(city: str) -> str: ...

Inside an active cassette (the pytest marker, ``intercept(recorder)``) each call is one
interaction of the same cassette and the same ``seq`` order as the model calls::

    provider: tool
    endpoint: myapp.tools.send_email
    request: {tool: myapp.tools.send_email, arguments: {to: ..., body: ...}}
    response: {status: 200, headers: {}, body: <the result>}    # or
    error: {kind: exception, message: "builtins.ValueError: …", body: {type: …, args: […]}}

What replay does with a recorded call::

    mode / found        never                      safe
    replay, recorded    recorded answer            body runs, result compared
    replay, not         CassetteMissError          CassetteMissError
    append, recorded    recorded answer            body runs, result compared
    append, not / record   body runs, recorded     body runs, recorded
    passthrough         body runs                  body runs

A safe tool that ran again hands its caller the *recorded* answer (the model calls that follow
were recorded with it); a different result is reported. Outside an active cassette the wrapper
calls the function at once.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar, cast, get_args, overload

from cassettes_core._errors import (
    CassetteError,
    ConfigError,
    UnrecordableAnswerError,
    UnsafeInteractionDroppedWarning,
)
from cassettes_core._model import Interaction, LLMResponse, RecordedError
from cassettes_core._recorder import Recorder
from cassettes_core._request import LLMRequest
from cassettes_core.events import CallEvent
from cassettes_core.transport import active_interception

TOOL_PROVIDER = "tool"
EXCEPTION_KIND: Literal["exception"] = "exception"

F = TypeVar("F", bound=Callable[..., Any])
Serialize = Callable[[Any], Any]

# -- the two policies --------------------------------------------------------------------------

ReplayPolicy = Literal["never", "safe"]


def parse_policy(value: object, *, where: str) -> ReplayPolicy:
    """``value`` as a policy; a :class:`ConfigError` naming ``where`` and the choices."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in get_args(ReplayPolicy):
        raise ConfigError(
            f"{where}: replay={value!r} is not a replay policy; use replay='never' (side "
            "effects: replay returns the recording, the body never runs) or replay='safe' "
            "(read-only: the body runs again and its result is compared)"
        )
    return cast("ReplayPolicy", text)


# -- the errors and the warning a tool call can end in -----------------------------------------


class RecordedToolError(CassetteError):
    """A tool raised an exception when it was recorded, and replay does not rebuild its class:
    it is not one replay may build (see :func:`rebuilt_exception`), or not from its args."""

    def __init__(self, tool: str, type_name: str, message: str, why: str) -> None:
        self.tool = tool
        self.type_name = type_name
        self.message = message
        self.why = why
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool, self.type_name, self.message, self.why))

    def __str__(self) -> str:
        return (
            f"tool {self.tool} raised {self.type_name} when it was recorded: {self.message}\n"
            f"  replayed as RecordedToolError: {self.why}\n"
            f"TIP: catch RecordedToolError (its type_name is {self.type_name!r}), or raise a "
            "built-in exception or one defined in the tool's own module, buildable from its args."
        )


class ToolResultChangedError(CassetteError):
    """A ``safe`` tool ran again in replay and returned something else than its recording."""

    def __init__(self, tool: str, seq: int, recorded: Any, now: Any, path: str) -> None:
        self.tool = tool
        self.seq = seq
        self.recorded = recorded
        self.now = now
        self.path = path
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool, self.seq, self.recorded, self.now, self.path))

    def __str__(self) -> str:
        return (
            f"safe tool {self.tool} returned another result than its recording (seq "
            f"{self.seq} of {self.path}): recorded {_short(self.recorded)}, now "
            f"{_short(self.now)}\n"
            "TIP: the answer the model saw was recorded with the old result; re-record "
            "(CASSETTE_MODE=record) if the change is expected, or make the tool "
            "deterministic."
        )


class ToolResultChangedWarning(UserWarning):
    """A ``safe`` tool's result in replay differs from its recording (see the summary)."""


def _short(value: Any, limit: int = 120) -> str:
    # The message lands in CI logs: a key the new result carries is masked as findings are.
    from cassettes_core.secrets import redact

    text = redact(repr(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- what a cassette can hold: arguments as plain data (matched), results exactly (replayed) ----

# A result is walked to this depth at most; a cassette holds 100 levels in all.
_MAX_DEPTH = 90


def plain_argument(value: Any, tool: str, path: str) -> Any:
    """``value`` as JSON data to match on; :class:`ConfigError` naming the argument if not."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"tool {tool}: argument {path} is {value!r}, which JSON cannot hold")
        return value
    return _plain_container(value, tool, path)


def _plain_container(value: Any, tool: str, path: str) -> Any:
    if isinstance(value, enum.Enum):
        return plain_argument(value.value, tool, path)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(
                    f"tool {tool}: argument {path} has the key {key!r}; a cassette matches "
                    "arguments as JSON, whose keys are strings"
                )
            out[key] = plain_argument(item, tool, f"{path}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [plain_argument(item, tool, f"{path}[{n}]") for n, item in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return plain_argument(fields, tool, path)
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model
        return plain_argument(dump(mode="json"), tool, path)
    parameter = path.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]
    raise ConfigError(
        f"tool {tool}: argument {path} is a {type(value).__name__}, which a cassette cannot "
        "match on (it matches arguments as JSON data)\n"
        f"TIP: leave it out of the match with @tool(..., ignore=[{parameter!r}]) "
        "(a connection, a client, a callback), or pass JSON data."
    )


def check_storable(value: Any, tool: str, *, serializer: bool) -> None:
    """Raise :class:`UnrecordableAnswerError` unless ``value`` replays exactly as it is."""
    problem = storable_problem(value, "result", 0)
    if problem is None:
        return
    if serializer:
        raise UnrecordableAnswerError(
            f"tool {tool}: its serialize= returned data a cassette cannot hold unchanged "
            f"({problem}); nothing was recorded\n"
            "TIP: serialize= must return plain JSON data: dict with str keys, list, str, int, "
            "float, bool, None."
        )
    raise UnrecordableAnswerError(
        f"tool {tool}: its result cannot be stored so that it replays the same ({problem}); "
        "nothing was recorded\n"
        "TIP: return plain JSON data (dict with str keys, list, str, int, float, bool, None), "
        "or give the tool a codec: @tool(replay=..., serialize=to_json_data, "
        "deserialize=from_json_data)."
    )


def storable_problem(value: Any, path: str, depth: int) -> str | None:
    """What keeps ``value`` from replaying unchanged, or ``None`` when nothing does."""
    if depth > _MAX_DEPTH:
        return f"{path} is nested deeper than a cassette holds"
    kind = type(value)
    if kind is str:
        return None if _is_unicode(value) else f"{path} holds text that is not valid Unicode"
    if value is None or kind in (bool, int):
        return None
    if kind is float:
        return None if math.isfinite(value) else f"{path} is {value!r}"
    return _container_problem(value, path, depth)


def _container_problem(value: Any, path: str, depth: int) -> str | None:
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not _is_unicode(key):
                return f"{path} has the key {key!r}, not a string of valid Unicode"
            found = storable_problem(item, f"{path}.{key}", depth + 1)
            if found:
                return found
        return None
    if kind is list:
        for n, item in enumerate(value):
            found = storable_problem(item, f"{path}[{n}]", depth + 1)
            if found:
                return found
        return None
    return f"{path} is a {kind.__module__}.{kind.__qualname__}"


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate (half of an emoji cut from a longer text): UTF-8 has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- a tool's exception as a cassette keeps it, and raised again from there ---------------------
#
# A cassette can be edited in a pull request, so replay must never let it steer the run
# (DESIGN §13): it rebuilds only an ``Exception`` subclass from the built-ins or defined in the
# tool's own module, already loaded, and none that ends an iteration, a skip or a debugger.

# Exception subclasses that steer control flow where they are caught by type.
_STEERING = frozenset(
    {
        "builtins.StopIteration",
        "builtins.StopAsyncIteration",
        "unittest.case.SkipTest",
        "bdb.BdbQuit",
    }
)


def recorded_exception(exc: BaseException) -> RecordedError:
    """``exc`` as the cassette keeps it: class name, message, and its args when plain data."""
    kind = type(exc)
    name = f"{kind.__module__}.{kind.__qualname__}"
    args: Any = list(exc.args)
    body: dict[str, Any] = {"type": name}
    if storable_problem(args, "args", 0) is None:
        body["args"] = args
    return RecordedError(kind=EXCEPTION_KIND, message=f"{name}: {exc}", body=body)


def is_recorded_exception(error: RecordedError) -> bool:
    return error.kind == EXCEPTION_KIND


def rebuilt_exception(tool: str, error: RecordedError, *, home: str | None = None) -> Exception:
    """The exception to raise for ``error``: the recorded class when replay may build it (a
    built-in, or defined in module ``home``: the tool's), else :class:`RecordedToolError`."""
    body = error.body if isinstance(error.body, dict) else {}
    name = body.get("type")
    type_name = name if isinstance(name, str) else "an unknown exception"
    prefix = f"{type_name}: "
    message = error.message[len(prefix) :] if error.message.startswith(prefix) else error.message
    if not isinstance(name, str):
        return RecordedToolError(tool, type_name, message, "the recording names no class")
    kind = _rebuildable_class(name, home)
    if kind is None:
        allowed = "Python's built-in exceptions" + (f" and those of {home}" if home else "")
        return RecordedToolError(
            tool,
            name,
            message,
            f"{name} is not an exception class replay rebuilds (only {allowed}, never one that "
            "steers the run)",
        )
    args = body.get("args")
    attempts = [tuple(args)] if isinstance(args, list) else []
    attempts.append((message,))
    for attempt in attempts:
        try:
            return kind(*attempt)
        except Exception:  # noqa: S112 - a constructor that takes other arguments
            continue
    return RecordedToolError(tool, name, message, f"{name} cannot be built from its args")


def _rebuildable_class(name: str, home: str | None) -> type[Exception] | None:
    """The class ``name`` (``module.Qual.Name``) when it is one replay may build."""
    for module in ("builtins", home):
        if module is None or not name.startswith(module + "."):
            continue
        # Only a module loaded already: naming a module in a cassette must not run its import.
        target: Any = sys.modules.get(module)
        qualname = name[len(module) + 1 :]
        for attribute in qualname.split("."):
            target = getattr(target, attribute, None)
        if (
            isinstance(target, type)
            and issubclass(target, Exception)
            # Defined there, not imported into it (a tool module's `from x import Exit`).
            and target.__module__ == module
            and target.__qualname__ == qualname
            and not any(f"{c.__module__}.{c.__qualname__}" in _STEERING for c in target.__mro__)
        ):
            return target
    return None


# -- one decorated tool: its name, policy, signature and codec ----------------------------------


@dataclasses.dataclass(frozen=True)
class ToolSpec:
    """One tool, fixed at decoration time. A call is matched by its name and its arguments
    bound to the signature with defaults applied (``f(1)`` is ``f(x=1)``), without a method's
    ``self``/``cls`` and the parameters named in ``ignore``."""

    name: str
    policy: ReplayPolicy
    signature: inspect.Signature
    skip_first: bool
    ignore: frozenset[str]
    serialize: Serialize | None
    deserialize: Serialize | None
    module: str | None = None  # where the function is defined: its exceptions replay as such

    @classmethod
    def of(
        cls,
        fn: Callable[..., Any],
        *,
        policy: ReplayPolicy,
        name: str | None,
        ignore: Iterable[str],
        serialize: Serialize | None,
        deserialize: Serialize | None,
    ) -> ToolSpec:
        qualname = getattr(fn, "__qualname__", None)
        if not isinstance(qualname, str) and name is None:
            # A partial or a callable object: repr() holds an address, a new name every run.
            raise ConfigError(
                f"@tool on {fn!r}: it has no qualified name to match recordings by\n"
                "TIP: name it: @tool(replay=..., name='send_email')"
            )
        qualname = qualname if isinstance(qualname, str) else str(name)
        module = getattr(fn, "__module__", None)
        module = module if isinstance(module, str) else None
        full = name or (f"{module}.{qualname}" if module and module != "__main__" else qualname)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"@tool cannot read the signature of {full}: {exc}") from None
        names = list(signature.parameters)
        # A method's first parameter: ``A.f`` and ``g.<locals>.A.f`` are in a class body.
        parts = qualname.split(".")
        in_class = len(parts) > 1 and parts[-2] != "<locals>"
        skip_first = bool(names) and names[0] in ("self", "cls") and in_class
        ignored = frozenset([ignore] if isinstance(ignore, str) else ignore)
        unknown = sorted(ignored - set(names))
        if unknown:
            raise ConfigError(
                f"@tool(ignore=...) on {full}: {', '.join(unknown)} "
                f"{'is' if len(unknown) == 1 else 'are'} not a parameter of it (it has "
                f"{', '.join(names) or 'none'})"
            )
        if (serialize is None) != (deserialize is None):
            raise ConfigError(
                f"@tool on {full}: give serialize= and deserialize= together (one turns the "
                "result into JSON data to record, the other turns it back in replay)"
            )
        return cls(full, policy, signature, skip_first, ignored, serialize, deserialize, module)

    def request(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> LLMRequest:
        """The call as a request: ``{"tool": name, "arguments": {...}}``, all of it matched."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.name}(): {exc}") from None
        bound.apply_defaults()
        items = list(bound.arguments.items())
        if self.skip_first:
            items = items[1:]
        arguments = {
            key: plain_argument(value, self.name, key)
            for key, value in items
            if key not in self.ignore
        }
        return LLMRequest(TOOL_PROVIDER, {"tool": self.name, "arguments": arguments})

    def stored(self, result: Any) -> Any:
        """``result`` as the cassette keeps it (through ``serialize`` when given)."""
        value = self.serialize(result) if self.serialize is not None else result
        check_storable(value, self.name, serializer=self.serialize is not None)
        return value

    def replayed(self, stored: Any) -> Any:
        """The recorded result as the caller gets it (through ``deserialize`` when given)."""
        return self.deserialize(stored) if self.deserialize is not None else stored


# -- the decorator ------------------------------------------------------------------------------


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
            call = _Call(spec, current.recorder, args, kwargs)
            if call.recorded is not None and spec.policy == "never":
                return _answer(spec, call.recorded)
            try:
                result = await fn(*args, **kwargs)
            except CassetteError:
                raise  # ours (a model call's miss inside the tool): not the tool's answer
            except Exception as exc:
                return call.done(error=exc)
            return call.done(result=result)

        async_tool.__cassette_tool__ = spec  # type: ignore[attr-defined]
        return async_tool

    @functools.wraps(fn)
    def sync_tool(*args: Any, **kwargs: Any) -> Any:
        current = active_interception()
        if current is None:
            return fn(*args, **kwargs)
        call = _Call(spec, current.recorder, args, kwargs)
        if call.recorded is not None and spec.policy == "never":
            return _answer(spec, call.recorded)
        try:
            result = fn(*args, **kwargs)
        except CassetteError:
            raise
        except Exception as exc:
            return call.done(error=exc)
        return call.done(result=result)

    sync_tool.__cassette_tool__ = spec  # type: ignore[attr-defined]
    return sync_tool


# -- one call inside an active cassette: replay it, run it and compare, or record it ------------


class _Call:
    """One call of a tool in an active cassette, from its lookup to its outcome."""

    def __init__(self, spec: ToolSpec, recorder: Recorder, args: Any, kwargs: Any) -> None:
        self.spec = spec
        self.recorder = recorder
        self.request = recorder.normalise(spec.request(args, kwargs))
        self.recorded = recorder.find(self.request, stream=False)
        self.started = time.perf_counter()

    def done(self, *, result: Any = None, error: Exception | None = None) -> Any:
        """What the body's outcome becomes: recorded when new, compared (a safe tool) when not."""
        if self.recorded is None:
            if self.recorder.records:
                self._record(result, error)
            if error is not None:
                raise error
            return result
        self._compare(self.recorded, result, error)
        return _answer(self.spec, self.recorded)

    def _record(self, result: Any, error: Exception | None) -> None:
        spec, recorder = self.spec, self.recorder
        duration = round((time.perf_counter() - self.started) * 1000)
        if error is not None:
            recorder.record(
                self.request,
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
            warnings.warn(
                f"best-effort recording dropped a tool call: {exc}",
                UnsafeInteractionDroppedWarning,
                stacklevel=4,
            )
            return
        recorder.record(
            self.request,
            endpoint=spec.name,
            response=LLMResponse(body=copy.deepcopy(stored)),  # the caller keeps the original
            duration_ms=duration,
        )

    def _compare(self, recorded: Interaction, result: Any, error: Exception | None) -> None:
        """Report a safe tool whose result of now differs from its recording."""
        if recorded.error is not None:
            was: Any = {"raised": recorded.error.message}
        else:
            was = recorded.response.body if recorded.response is not None else None
        if error is not None:
            now: Any = {"raised": recorded_exception(error).message}
        else:
            try:
                now = self.spec.stored(result)
            except CassetteError:
                now = {"unstorable": repr(result)}
        report_change(self.recorder, recorded, self.spec.name, was, now, stacklevel=5)


def _answer(spec: ToolSpec, interaction: Interaction) -> Any:
    if interaction.error is not None and is_recorded_exception(interaction.error):
        raise rebuilt_exception(spec.name, interaction.error, home=spec.module)
    if interaction.error is not None:  # a provider's failure, in a hand-edited file
        raise interaction.error.to_exception(interaction.provider)
    body = interaction.response.body if interaction.response is not None else None
    # A copy: what the caller does with an answer must not change the next replay of it.
    return spec.replayed(copy.deepcopy(body))


def report_change(
    recorder: Recorder, recorded: Interaction, tool: str, was: Any, now: Any, *, stacklevel: int
) -> None:
    """Log (and warn of, unless a summary will) a tool result that differs from its
    recording: equal as JSON, ``1`` is not ``1.0`` nor ``True``; key order does not count."""
    try:
        if json.dumps(now, sort_keys=True) == json.dumps(was, sort_keys=True):
            return
    except (TypeError, ValueError):
        pass
    changed = ToolResultChangedError(tool, recorded.seq, was, now, str(recorder.path))
    event = CallEvent(
        "changed", recorded.provider, digest=recorded.digest, interaction=recorded, error=changed
    )
    recorder.log.add(event)
    if not recorder.log.summarized:
        warnings.warn(
            str(changed).split("\n", 1)[0], ToolResultChangedWarning, stacklevel=stacklevel
        )


__all__ = [
    "TOOL_PROVIDER",
    "RecordedToolError",
    "ReplayPolicy",
    "ToolResultChangedError",
    "ToolResultChangedWarning",
    "ToolSpec",
    "is_recorded_exception",
    "parse_policy",
    "rebuilt_exception",
    "recorded_exception",
    "report_change",
    "tool",
]
