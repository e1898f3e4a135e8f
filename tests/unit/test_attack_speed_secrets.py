"""Attacks on the secret guard's speed changes: the one-pass needle search (pyahocorasick)
must find exactly what one ``str.find`` per needle found, and the environment remembered
between scans must follow every change to it."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from cassettes_core.secrets import SecretGuard, _formats
from cassettes_core.secrets._formats import credential_environment
from tests.helpers.fake_secrets import rand
from tests.integration.test_secret_corpus import (
    base_interaction,
)


def _fresh() -> dict[str, str]:
    saved = _formats._cache
    _formats._cache = None
    try:
        return dict(credential_environment())
    finally:
        _formats._cache = saved


def test_the_remembered_environment_follows_every_kind_of_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = rand(24), rand(24)  # the same length: a change only a compare of values sees
    interaction = base_interaction()
    interaction["request"]["messages"][0]["content"] = f"a {first} and a {second}"

    def refused() -> bool:
        kinds = [f.kind for f in SecretGuard().scan(interaction)]
        return any("BILLING_API_TOKEN" in k or "OTHER_SECRET" in k for k in kinds)

    steps: list[Callable[[], object]] = [
        lambda: monkeypatch.setenv("BILLING_API_TOKEN", first),
        lambda: os.environ.__setitem__("BILLING_API_TOKEN", second),
        lambda: os.environ.pop("BILLING_API_TOKEN"),
        lambda: os.environb.__setitem__(b"BILLING_API_TOKEN", first.encode()),
        lambda: os.environ.update(BILLING_API_TOKEN=second),
        lambda: monkeypatch.delenv("BILLING_API_TOKEN"),
        lambda: os.environ.setdefault("OTHER_SECRET", first),
        lambda: os.environ.pop("OTHER_SECRET"),
    ]
    expected = [False, True, True, False, True, True, False, True, False]
    monkeypatch.delenv("BILLING_API_TOKEN", raising=False)
    monkeypatch.delenv("OTHER_SECRET", raising=False)
    seen = [refused()]
    for step in steps:
        step()
        assert credential_environment() == _fresh()
        seen.append(refused())
    assert seen == expected
