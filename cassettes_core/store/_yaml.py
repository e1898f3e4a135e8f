"""YAML in and out: safe loading only, C-accelerated where libyaml is present.

Strings with line breaks or longer than a line become block scalars, so that a reviewer reads a
recorded conversation in a pull request as text, not as one escaped line.

Loading yields JSON data only: an unquoted date stays a string, ``!!binary``, ``!!set`` and the
other non-JSON tags are refused, as are NaN and Infinity, and aliases (``*ref``), which a
hostile file could nest into a "billion laughs" that takes forever to digest. A key given twice
in one mapping (a bad merge), a merge key (``<<``), a tagged scalar
that is not what its tag says (``!!int abc``), an integer longer than Python reads
(:data:`MAX_INT_DIGITS`) and nesting deeper than :data:`MAX_DEPTH` are refused too, each as a
:class:`yaml.MarkedYAMLError` that names the line, never as a ``ValueError`` or a later
``RecursionError``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from cassettes_core.digest import MAX_DEPTH, MAX_INT_DIGITS

_FastLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A cheap sign that a file may hold an anchor: `&name` after a space, bracket or dash.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s&;]")
_NOT_JSON = (
    "tag:yaml.org,2002:binary",
    "tag:yaml.org,2002:set",
    "tag:yaml.org,2002:omap",
    "tag:yaml.org,2002:pairs",
)

# Hex, octal, binary and base 60 read past that limit, but could never be written back as text.
_INT_CEILING = 10**MAX_INT_DIGITS


def _error(problem: str, node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


def _as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _checked_float(loader: yaml.SafeLoader, node: yaml.Node) -> float:
    try:
        value = float(yaml.SafeLoader.construct_yaml_float(loader, node))  # type: ignore[arg-type]
    except (ValueError, IndexError):
        raise _error(f"{_scalar(node)!r} is not a number (tag {node.tag})", node) from None
    if not math.isfinite(value):
        raise _error("NaN and Infinity have no place in a cassette", node)
    return value


def _checked_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    try:
        value = int(yaml.SafeLoader.construct_yaml_int(loader, node))  # type: ignore[arg-type]
    except (ValueError, IndexError):
        text = _scalar(node)
        if len(text) > MAX_INT_DIGITS:
            problem = f"an integer of {len(text)} digits; at most {MAX_INT_DIGITS} are read"
        else:
            problem = f"{text[:40]!r} is not an integer (tag {node.tag})"
        raise _error(problem, node) from None
    if -_INT_CEILING < value < _INT_CEILING:
        return value
    problem = f"an integer of more than {MAX_INT_DIGITS} digits; at most {MAX_INT_DIGITS} are read"
    raise _error(problem, node)


def _checked_bool(loader: yaml.SafeLoader, node: yaml.Node) -> bool:
    try:
        return bool(yaml.SafeLoader.construct_yaml_bool(loader, node))  # type: ignore[arg-type]
    except KeyError:
        raise _error(f"{_scalar(node)[:40]!r} is not true or false", node) from None


def _scalar(node: yaml.Node) -> str:
    value = node.value
    return value if isinstance(value, str) else f"<{type(node).__name__}>"


def _refuse(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise _error(f"the tag {node.tag} is not JSON data", node)


class _StrictConstruction(yaml.constructor.SafeConstructor):
    """JSON-only construction rules, mixed into the fast and the pure-Python loaders."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_depth(node)
        return super().construct_document(node)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        # Replaces the merge step (one pass over the keys either way): merges are refused.
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _error("merge keys (<<) are not allowed in cassettes", key_node)

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)  # type: ignore[arg-type]
        if isinstance(node, yaml.MappingNode) and len(mapping) != len(node.value):
            _raise_duplicate(node)
        return mapping


def _raise_duplicate(node: yaml.MappingNode) -> None:
    """Name the key given twice (only called when the mapping came out shorter)."""
    seen: dict[tuple[str, Any], int] = {}
    for key_node, _ in node.value:
        key = (key_node.tag, key_node.value if isinstance(key_node, yaml.ScalarNode) else None)
        if key in seen and isinstance(key_node, yaml.ScalarNode):
            raise _error(
                f"the key {str(key_node.value)[:60]!r} is given twice in one mapping (first on "
                f"line {seen[key]}); a bad merge? keep one of them",
                key_node,
            )
        seen[key] = key_node.start_mark.line + 1
    raise _error("a key is given twice in one mapping", node)


def _check_depth(root: yaml.Node) -> None:
    # Iterative, so the check itself cannot overflow the stack it protects.
    pending: list[tuple[yaml.Node, int]] = [(root, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, yaml.MappingNode):
            children = [value for _, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            continue
        if depth > MAX_DEPTH:
            raise _error(f"data nested deeper than {MAX_DEPTH} levels", node)
        pending.extend((child, depth + 1) for child in children)


def _json_only(loader: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    strict: type[yaml.SafeLoader] = type(
        f"Strict{loader.__name__}", (_StrictConstruction, loader), {}
    )
    strict.add_constructor("tag:yaml.org,2002:timestamp", _as_text)
    strict.add_constructor("tag:yaml.org,2002:float", _checked_float)
    strict.add_constructor("tag:yaml.org,2002:int", _checked_int)
    strict.add_constructor("tag:yaml.org,2002:bool", _checked_bool)
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
    # After a block scalar that keeps its final line breaks (``|+``, text ending in "\n\n")
    # the emitter ends the document with "...": the store puts texts one after another (head,
    # interactions, the next append), and text after that mark is a second document.
    return text[:-4] if text.endswith("\n...\n") else text


def load(text: str) -> Any:
    """Parse a cassette's text into JSON data (see the module docstring for what is refused)."""
    # The substring test runs at C speed; the regex (no literal prefix) scans char by char.
    maybe_anchor = "&" in text and _MAYBE_ANCHOR.search(text) is not None
    loader = _SlowLoader if maybe_anchor else SafeLoader
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, never the full one


def load_plain(text: str) -> Any:
    """``text`` read as plain safe YAML (aliases, merge keys, any safe tag), never a cassette.

    Only to tell another tool's YAML (a compose file, a CI workflow) from a damaged cassette;
    raises :class:`ValueError` for text that is not YAML even read this way.
    """
    try:
        return yaml.load(text, Loader=_FastLoader)  # noqa: S506 - a safe loader, never the full one
    except (yaml.YAMLError, ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        raise ValueError(f"not YAML: {exc}") from None


def first_comment_line(text: str) -> int | None:
    """The line (1-based) of the first YAML comment in ``text``, if any."""
    if "#" not in text:
        return None
    end = 0
    for token in yaml.scan(text, Loader=_FastLoader):
        start = token.start_mark.index
        gap = text[end:start]
        if "#" in gap:
            return text.count("\n", 0, end + gap.index("#")) + 1
        end = max(end, token.end_mark.index)
    tail = text[end:]
    return text.count("\n", 0, end + tail.index("#")) + 1 if "#" in tail else None


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
