"""One decorated tool: its name, policy, signature and codec; a call turned into a request.

A call is matched by the tool's name and its *canonical* arguments: bound to the signature
with defaults applied, so ``f(1)``, ``f(x=1)`` and ``f(1, y=2)`` (when 2 is ``y``'s default)
are the same request. A method's ``self`` or ``cls`` is not an argument, nor are the
parameters named in ``ignore``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cassettes_core._errors import ConfigError
from cassettes_core._request import LLMRequest
from cassettes_core.tools._policy import ReplayPolicy
from cassettes_core.tools._values import check_storable, plain_argument

TOOL_PROVIDER = "tool"
_BOUND_FIRST = ("self", "cls")

Serialize = Callable[[Any], Any]


@dataclass(frozen=True)
class ToolSpec:
    """Everything the wrapper needs to know of one tool, fixed at decoration time."""

    name: str
    policy: ReplayPolicy
    signature: inspect.Signature
    skip_first: bool
    ignore: frozenset[str]
    serialize: Serialize | None
    deserialize: Serialize | None

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
        full = name or (f"{module}.{qualname}" if module and module != "__main__" else qualname)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"@tool cannot read the signature of {full}: {exc}") from None
        names = list(signature.parameters)
        skip_first = bool(names) and names[0] in _BOUND_FIRST and _in_class_body(qualname)
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
        return cls(full, policy, signature, skip_first, ignored, serialize, deserialize)

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


def _in_class_body(qualname: str) -> bool:
    """``A.f`` and ``test.<locals>.A.f`` are in a class body; ``f`` and ``g.<locals>.f`` not."""
    parts = qualname.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"
