"""Attacks on the secret guard's speed changes: the one-pass needle search (pyahocorasick)
must find exactly what one ``str.find`` per needle found, and the environment remembered
between scans must follow every change to it."""

from __future__ import annotations

import copy
import os
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cassettes_core.secrets import SecretGuard, _batch, _env
from cassettes_core.secrets._env import credential_environment
from tests.helpers.fake_secrets import rand
from tests.integration.test_secret_corpus import (
    FRAGMENTS,
    OWN_KINDS,
    PLACES,
    PLUGIN_KINDS,
    TEXT_KINDS,
    base_interaction,
)

KINDS = {**OWN_KINDS, **PLUGIN_KINDS, **TEXT_KINDS}
# Beside a secret: multi-byte and non-BMP characters, the one whose lower case is longer
# (İ), line breaks; and anchors inside other anchors ("sk-" in "pcsk_", "xox" in "xoxb").
NEIGHBOURS = ["", "İ", "İİ", "😀", "\U0010fffd", "é", "\n", " ", "pcsk_", "xoxb-", "sk-", "=", "ſ"]


def _findings(interaction: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (f.seq, f.path, f.kind, f.preview) for f in SecretGuard().scan(copy.deepcopy(interaction))
    ]


def _both(interaction: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    with_pass = _findings(interaction)
    assert _batch._AUTOMATA  # the one pass ran
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "ahocorasick", None)  # the import raises ImportError
        patch.setattr(_batch, "_AUTOMATA", {})
        each_needle = _findings(interaction)
    assert with_pass == each_needle


def _interactions(seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for kind, make in KINDS.items():
        secret = make(rng)
        for place in PLACES.values():
            interaction, _ = place(secret)
            yield interaction
        # Many strings of one interaction, the secret at their first and last character.
        interaction = base_interaction()
        left, right = rng.choice(NEIGHBOURS), rng.choice(NEIGHBOURS)
        interaction["request"]["messages"] = [
            {"role": "user", "content": text}
            for text in (secret, left + secret, secret + right, f"{left}{secret}{right}", kind)
        ] + [{"role": "user", "content": rng.choice(NEIGHBOURS)} for _ in range(5)]
        yield interaction


@pytest.mark.parametrize("seed", range(2))
def test_the_guard_finds_the_same_with_and_without_the_one_pass(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ahocorasick")
    checked = 0
    for interaction in _interactions(seed):
        _both(interaction, monkeypatch)
        checked += 1
    assert checked > 300


def test_realistic_payloads_are_judged_the_same_with_and_without_the_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ahocorasick")
    for fragment in FRAGMENTS:
        _both(fragment.values[0], monkeypatch)


def test_a_huge_answer_with_secrets_at_its_ends_is_judged_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ahocorasick")
    rng = random.Random(7)
    secrets = [make(rng) for make in KINDS.values()]
    filler = "İ😀 word, the sk- pcsk_ xox token: key= " * 800  # 32 KB of near misses
    interaction = base_interaction()
    interaction["response"]["body"]["choices"][0]["message"]["content"] = (
        secrets[0] + filler + "\n".join(secrets) + filler + secrets[-1]
    )
    findings = _findings(interaction)
    assert len(findings) >= len(OWN_KINDS)
    _both(interaction, monkeypatch)


def _fresh() -> dict[str, str]:
    saved = _env._cache
    _env._cache = None
    try:
        return dict(credential_environment())
    finally:
        _env._cache = saved


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
