"""What of a tool call a cassette can hold: arguments as plain data, results exactly.

Arguments are what a call is matched by, so they are made plain: tuples become lists,
dataclasses and pydantic models their fields, enums their values. Results are what replay
hands back, so they must survive the file *unchanged*: only ``dict`` (string keys), ``list``,
``str``, ``int``, finite ``float``, ``bool`` and ``None``; anything else (a tuple would come
back a list, a model a dict) needs the tool's own ``serialize``/``deserialize``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from typing import Any

from cassettes_core._errors import ConfigError, UnrecordableAnswerError

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
    raise ConfigError(
        f"tool {tool}: argument {path} is a {type(value).__name__}, which a cassette cannot "
        "match on (it matches arguments as JSON data)\n"
        f"TIP: leave it out of the match with @tool(..., ignore=[{_parameter(path)!r}]) "
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


def _parameter(path: str) -> str:
    return path.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]


def storable_problem(value: Any, path: str, depth: int) -> str | None:
    """What keeps ``value`` from replaying unchanged, or ``None`` when nothing does."""
    if depth > _MAX_DEPTH:
        return f"{path} is nested deeper than a cassette holds"
    if type(value) is str:
        return None if _is_unicode(value) else f"{path} holds text that is not valid Unicode"
    if value is None or type(value) in (bool, int):
        return None
    if type(value) is float:
        return None if math.isfinite(value) else f"{path} is {value!r}"
    return _container_problem(value, path, depth)


def _is_unicode(text: str) -> bool:
    """False for a lone surrogate (half of an emoji cut from a longer text): UTF-8 has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _container_problem(value: Any, path: str, depth: int) -> str | None:
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str or not _is_unicode(key):
                return f"{path} has the key {key!r}, not a string of valid Unicode"
            found = storable_problem(item, f"{path}.{key}", depth + 1)
            if found:
                return found
        return None
    if type(value) is list:
        for n, item in enumerate(value):
            found = storable_problem(item, f"{path}[{n}]", depth + 1)
            if found:
                return found
        return None
    return f"{path} is a {type(value).__module__}.{type(value).__qualname__}"
