"""Providers: the protocol, the scripted fake, and (lazily) the built-in HTTP providers."""

from __future__ import annotations

from cassettes_core.providers._protocol import Provider
from cassettes_core.providers.fake import FakeProvider

__all__ = ["FakeProvider", "Provider"]
