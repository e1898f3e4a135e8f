"""YAML in and out: safe loading only, C-accelerated where libyaml is present.

Strings with line breaks or longer than a line become block scalars, so that a reviewer reads a
recorded conversation in a pull request as text, not as one escaped line.

Loading yields JSON data only: an unquoted date stays a string, ``!!binary``, ``!!set`` and the
other non-JSON tags are refused, as are NaN and Infinity, and aliases (``*ref``), which a
hostile file could nest into a "billion laughs" that takes forever to digest.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

_FastLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A cheap sign that a file may hold an anchor: `&name` after a space, bracket or dash.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s&;]")
_NOT_JSON = (
    "tag:yaml.org,2002:binary",
    "tag:yaml.org,2002:set",
    "tag:yaml.org,2002:omap",
    "tag:yaml.org,2002:pairs",
)


def _as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _finite_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    value = yaml.SafeLoader.construct_yaml_float(loader, node)  # type: ignore[arg-type]
    if not math.isfinite(value):
        raise yaml.constructor.ConstructorError(
            None, None, "NaN and Infinity have no place in a cassette", node.start_mark
        )
    return float(value)


def _refuse(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"the tag {node.tag} is not JSON data", node.start_mark
    )


def _json_only(loader: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    strict: type[yaml.SafeLoader] = type(f"Strict{loader.__name__}", (loader,), {})
    strict.add_constructor("tag:yaml.org,2002:timestamp", _as_text)
    strict.add_constructor("tag:yaml.org,2002:float", _finite_float)
    for tag in _NOT_JSON:
        strict.add_constructor(tag, _refuse)
    return strict


class _NoAliasComposer(yaml.SafeLoader):
    """The pure-Python loader, refusing aliases; used only for files that may hold one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "aliases (*ref) are not allowed in cassettes", event.start_mark
            )
        return super().compose_node(parent, index)


SafeLoader = _json_only(_FastLoader)
_SlowLoader = _json_only(_NoAliasComposer)
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_BLOCK_OVER = 100


class CassetteDumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """The safe dumper with block scalars for long text and no anchors."""

    def ignore_aliases(self, data: object) -> bool:
        # Anchors (&id001) make a cassette hard to review and to edit; repeat the data.
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value or len(value) > _BLOCK_OVER:
        # The emitter falls back to a quoted scalar where a block cannot hold the text.
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


CassetteDumper.add_representer(str, _represent_str)


def dump(document: Any) -> str:
    text: str = yaml.dump(
        document,
        Dumper=CassetteDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=_BLOCK_OVER + 20,
    )
    return text


def load(text: str) -> Any:
    """Parse a cassette's text into JSON data (see the module docstring for what is refused)."""
    loader = _SlowLoader if _MAYBE_ANCHOR.search(text) else SafeLoader
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, never the full one


def line_of_item(text: str, key: str, index: int) -> int | None:
    """The 1-based line where ``document[key][index]`` starts; for error messages only."""
    try:
        root = yaml.compose(text, Loader=SafeLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    for key_node, value_node in root.value:
        if (
            getattr(key_node, "value", None) == key
            and isinstance(value_node, yaml.SequenceNode)
            and 0 <= index < len(value_node.value)
        ):
            return int(value_node.value[index].start_mark.line) + 1
    return None
