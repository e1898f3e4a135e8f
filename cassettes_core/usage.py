"""Token usage of a recorded interaction, read from the answer as the provider sent it.

Where an endpoint reports usage is a fact of the provider catalog, read by
:func:`cassettes_core.catalog.tokens` (each endpoint's
:class:`~cassettes_core.catalog.TokenFields`, then the usage object's shape). Interactions
without usage (errors, streams recorded without it) count as zero tokens. The pytest plugin's
summary ("replay saved … tokens") counts with :func:`usage_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cassettes_core import catalog

if TYPE_CHECKING:
    from cassettes_core._model import Interaction

__all__ = ["Usage", "usage_of"]


@dataclass(frozen=True)
class Usage:
    """The tokens one interaction used: its model, input and output counts."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


def usage_of(interaction: Interaction) -> Usage:
    """The tokens ``interaction`` used, read where its endpoint's catalog entry says."""
    model = interaction.request.model or "unknown model"
    if interaction.response is not None:
        return Usage(model, *catalog.tokens(interaction.provider, interaction.response.body))
    if interaction.stream is None:
        return Usage(model)
    events = [event.data for event in interaction.stream]
    return Usage(model, *catalog.tokens(interaction.provider, events=events))
