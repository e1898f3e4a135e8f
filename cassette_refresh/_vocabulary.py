"""What the classifier knows about the providers beyond the recording.

``BEHAVIOUR_PATHS`` are paths whose presence depends on what the model chose to do (a tool call,
logprobs): their appearing or vanishing is noted, never drift. ``KNOWN_VALUES`` are long-documented
enum values, by key name or by answer path, read from the catalog in force at each look-up (a
stream path is read as the answer path it stands
for, see :func:`answer_path`): seeing one live for the first time (``length`` where the recording
only had ``stop``) is behaviour, not drift. Values added to the APIs since mid-2024
(``pause_turn``, ``refusal``, ``thinking`` blocks …) are deliberately *not* listed: their first
sighting is what the drift check exists to report.

Stream events come in three kinds:

- *lifecycle* events frame every answer (``response.created``, ``message_start``,
  ``message_stop``, chat chunks): one that every recorded stream had and no live one has is drift;
- *content* events are about one output item or content block (text deltas, content parts,
  tool-call argument deltas): whether they occur depends on what the model produced. They are
  recognised by their payload, which addresses an item (``index``, ``output_index``,
  ``content_index``, ``item_id``), or by name (the endpoints' ``content_events``);
- *keep-alive* events (the endpoints' ``keepalive_events``, Anthropic's ``ping``) come in any
  number, including none, and are never compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from cassette_refresh._skeleton import EVENT_PATH
from cassettes_core import catalog

# The providers' vocabulary is a fact of the catalog (each endpoint's ``Drift``), read whole from
# the catalog in force when it is used (an endpoint registered after import counts); the
# constants below are the built-in endpoints', kept for what imports them.

# Keys whose presence in an event's payload says the event is about one output item or block.
ITEM_ADDRESS_KEYS: frozenset[str] = frozenset(
    {"index", "output_index", "content_index", "item_id", "summary_index"}
)


@dataclass(frozen=True)
class Vocabulary:
    """What a catalog's endpoints say about their answers, in the forms the classifier reads."""

    behaviour_paths: frozenset[str]
    behaviour_events: frozenset[str]
    known_values: Mapping[str, frozenset[str]]
    stream_keys: tuple[tuple[re.Pattern[str], str | None, str], ...]


@lru_cache(maxsize=8)
def vocabulary_of(entries: catalog.Catalog) -> Vocabulary:
    """``entries``' vocabulary (computed once per catalog: a catalog never changes)."""
    drift = entries.drift()
    return Vocabulary(
        # Paths whose presence depends on what the model chose to do, not on the wire format.
        behaviour_paths=drift.behaviour_paths,
        # Content events by name, for streams whose payloads do not address an item.
        behaviour_events=drift.content_events,
        # Long-documented values: seeing one live for the first time is behaviour, not drift.
        known_values=catalog.FrozenMap(
            {
                **drift.known_values,
                EVENT_PATH: drift.lifecycle_events | drift.content_events | drift.keepalive_events,
            }
        ),
        # A stream path → the answer path it stands for: (event pattern, payload key, answer
        # path). Lifecycle events carry the whole answer (``response``, ``message``) or update
        # it; item events carry one output item, content part or content block; a chat chunk is
        # the answer's envelope.
        stream_keys=tuple(
            (re.compile(event), key, target) for event, key, target in drift.stream_paths
        ),
    )


def vocabulary() -> Vocabulary:
    """The vocabulary of the catalog in force (:func:`cassettes_core.catalog.current`)."""
    return vocabulary_of(catalog.current())


class _KnownValues(Mapping[str, frozenset[str]]):
    """:data:`KNOWN_VALUES`: read from the catalog in force at each look-up."""

    def __getitem__(self, key: str) -> frozenset[str]:
        return vocabulary().known_values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(vocabulary().known_values)

    def __len__(self) -> int:
        return len(vocabulary().known_values)

    def __repr__(self) -> str:
        return repr(dict(self))


_BUILT_IN = vocabulary_of(catalog.DEFAULT_CATALOG)
# The built-in endpoints' behaviour paths (``vocabulary()``: the catalog's in force).
BEHAVIOUR_PATHS: frozenset[str] = _BUILT_IN.behaviour_paths
# Long-documented values, of the catalog in force whenever it is read (a live mapping).
KNOWN_VALUES: Mapping[str, frozenset[str]] = _KnownValues()
_STREAM_PATH = re.compile(r"stream\[([^\]]+)\]\.(.+)")


def answer_path(path: str) -> str:
    """The answer path a stream path stands for; any other path unchanged.

    ``stream[response.completed].response.service_tier`` and ``stream[chunk].service_tier`` are
    ``service_tier``; ``stream[response.output_item.added].item.type`` is ``output[].type``;
    ``stream[message_start].message.usage.x`` is ``usage.x``. Paths inside other events
    (``stream[content_block_delta].delta.type``) and event types themselves stay as they are.
    """
    match = _STREAM_PATH.fullmatch(path)
    if match is None:
        return path
    event, rest = match.groups()
    for pattern, key, target in vocabulary().stream_keys:
        if not pattern.fullmatch(event):
            continue
        if key is None:
            return rest
        if rest == key and target:
            return target
        if rest.startswith(f"{key}."):
            inner = rest[len(key) + 1 :]
            return f"{target}.{inner}" if target else inner
    return path
