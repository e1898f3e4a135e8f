"""The loopback provider emulator: a stand-in for the providers' APIs, for demos and tests.

    from cassettes_core.testing.emulator import Emulator

    with Emulator() as emu:
        client = openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key)

Stdlib only, so it runs without any provider SDK.
`python -m cassettes_core.testing.emulator` runs one (`--help`; docs/reference/emulator.md).
"""

from __future__ import annotations

from cassettes_core.testing.emulator._embeddings import DEFAULT_DIMENSIONS
from cassettes_core.testing.emulator._emulator import Emulator
from cassettes_core.testing.emulator._server import HANDLERS
from cassettes_core.testing.emulator._state import DRIFT_SWITCHES

__all__ = ["DEFAULT_DIMENSIONS", "DRIFT_SWITCHES", "HANDLERS", "Emulator"]
