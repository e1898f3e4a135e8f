"""Token usage, as the plugin's summary counts it: read by the core (``cassettes_core.usage``)."""

from __future__ import annotations

from cassettes_core.usage import Usage, usage_of

__all__ = ["Usage", "usage_of"]
