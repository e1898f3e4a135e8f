"""YAML in and out: safe loading only, C-accelerated where libyaml is present.

Strings with line breaks or longer than a line become block scalars, so that a reviewer reads a
recorded conversation in a pull request as text, not as one escaped line.
"""

from __future__ import annotations

from typing import Any

import yaml

SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 - SafeLoader (C or pure), never full


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
