"""The sleeps an SDK's retry loop asks for, recorded, so a test can prove replay did not back
off without timing a loaded machine."""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import pytest


class SleepLog:
    """Stands in for the ``time`` module inside one SDK module: every ``sleep`` is kept (and
    still slept), everything else is the real module's."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        time.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def log_sleeps(monkeypatch: pytest.MonkeyPatch, sdk_base_client: ModuleType) -> SleepLog:
    """Record the sleeps of ``openai._base_client`` or ``anthropic._base_client``."""
    log = SleepLog()
    monkeypatch.setattr(sdk_base_client, "time", log)
    return log
