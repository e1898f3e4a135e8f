"""The in-memory cassette: interactions, the digest index and the play state.

The index is built once per load; a lookup is one dict access. Identical digests replay in
recorded order; with ``repeat_last`` the last one answers every further identical request.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes_core._model import Interaction
from cassettes_core._request import DEFAULT_POLICY, MatchPolicy
from cassettes_core.store._manifest import Manifest


@dataclass(frozen=True)
class Lookup:
    """The answer of a lookup, as data: the interaction to replay, or why there is none.

    ``recorded`` is how many interactions hold the digest, ``asked`` how many times it has been
    asked for now (this ask included).
    """

    interaction: Interaction | None
    recorded: int
    asked: int
    # Recordings of this digest in the other shape (a stream asked for, a complete answer held).
    other_shape: int = 0


class Cassette:
    """Recorded interactions of one cassette file and what has been played from them."""

    def __init__(
        self,
        path: Path | str,
        interactions: Iterable[Interaction] = (),
        *,
        manifest: Manifest | None = None,
        policy: MatchPolicy = DEFAULT_POLICY,
        repeat_last: bool = False,
    ) -> None:
        self.path = path if isinstance(path, Path) else Path(path)
        self.manifest = manifest
        self.policy = policy
        self.repeat_last = repeat_last
        self._interactions: list[Interaction] = []
        self._index: dict[str, list[Interaction]] = {}
        self._asked: dict[str, int] = {}
        self._played: set[int] = set()
        self._new: list[Interaction] = []
        self._lock = threading.Lock()
        # Recorded order is seq order, whatever order a hand-edited file lists them in.
        for interaction in sorted(interactions, key=lambda i: i.seq):
            self._insert(interaction)

    # -- contents ---------------------------------------------------------------------------

    @property
    def interactions(self) -> Sequence[Interaction]:
        return tuple(self._interactions)

    @property
    def recorded(self) -> Sequence[Interaction]:
        """Interactions recorded by this session (not yet or already written)."""
        return tuple(self._new)

    def __len__(self) -> int:
        return len(self._interactions)

    def key_of(self, interaction: Interaction) -> str:
        """The index key: the stored digest, or the digest under a non-default policy."""
        if self.policy.is_default or interaction.redacted:
            # A redacted request cannot be re-split: it matches by the digest it was sent with.
            return interaction.digest
        return self.policy.split(interaction.request).digest()

    def _insert(self, interaction: Interaction) -> None:
        self._interactions.append(interaction)
        self._index.setdefault(self.key_of(interaction), []).append(interaction)

    # -- play -------------------------------------------------------------------------------

    def lookup(self, digest: str, *, stream: bool | None = None) -> Lookup:
        """Take the next recorded interaction for ``digest`` (recorded order).

        With ``stream`` only recordings of that shape answer (a recorded failure answers
        both): a complete answer cannot replay a request that now streams, nor the reverse.
        """
        with self._lock:
            every = self._index.get(digest, [])
            candidates = every if stream is None else [i for i in every if _fits(i, stream)]
            key = digest if stream is None else f"{digest}:{'stream' if stream else 'complete'}"
            asked = self._asked.get(key, 0) + 1
            self._asked[key] = asked
            if asked <= len(candidates):
                chosen: Interaction | None = candidates[asked - 1]
            elif candidates and self.repeat_last:
                chosen = candidates[-1]
            else:
                chosen = None
            if chosen is not None:
                self._played.add(chosen.seq)
            return Lookup(
                chosen,
                recorded=len(candidates),
                asked=asked,
                other_shape=len(every) - len(candidates),
            )

    def add(self, interaction: Interaction) -> None:
        """Add a freshly recorded interaction; it counts as played by the ask that made it."""
        with self._lock:
            self._insert(interaction)
            self._played.add(interaction.seq)
            self._new.append(interaction)

    def unused(self) -> list[Interaction]:
        """Recorded interactions no request has played."""
        return [i for i in self._interactions if i.seq not in self._played]

    @property
    def played_count(self) -> int:
        return len(self._played)


def _fits(interaction: Interaction, stream: bool) -> bool:
    if interaction.stream is not None:
        return stream
    if interaction.response is not None:
        return not stream
    return True  # a recorded failure happened before any answer: it fits either shape
