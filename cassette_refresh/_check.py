"""One drift check: load, re-issue with bounded concurrency, aggregate per endpoint, classify.

The walk is one-way: cassettes → recorded answers → live calls (through a :class:`Reissuer`) →
a shape per (provider, endpoint) and side → findings → a :class:`CheckResult`. Nothing here
prints or writes: the CLI renders the result and decides about ``--write``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cassette_refresh._cassettes import Recorded, live_answer, load_recorded
from cassette_refresh._classify import Rules, compare
from cassette_refresh._reissue import LiveAnswer, Reissuer, stream_failure, supports
from cassette_refresh._result import CallProblem, CheckResult, EndpointResult
from cassette_refresh._skeleton import Answer, ShapeBuilder
from cassettes_core import ConfigError, ProviderError, catalog

Progress = Callable[[int, int], None]
AUTH_STATUSES = frozenset({401, 403})


@dataclass(frozen=True)
class CheckRun:
    """A finished check: the result, and the live answers by (cassette path, seq)."""

    result: CheckResult
    live: dict[tuple[str, int], LiveAnswer] = field(default_factory=dict)
    drifted: frozenset[str] = frozenset()  # the cassettes whose own answers drifted
    digests: dict[tuple[str, int], str] = field(default_factory=dict)  # of the requests re-sent


def plan(
    recorded: Sequence[Recorded], *, supported: Callable[[str], bool] = supports
) -> tuple[list[Recorded], list[CallProblem]]:
    """Which interactions can be re-issued; the others, with the reason they are skipped."""
    todo: list[Recorded] = []
    skipped: list[CallProblem] = []
    for item in recorded:
        reason = None
        answer = item.answer()
        if answer is None:
            reason = "recorded an error (kept as it is: it exists to test retry handling)"
        elif answer.events is not None and stream_failure(answer.events) is not None:
            reason = "recorded a stream that failed part-way (kept as it is)"
        elif not supported(item.provider):
            reason = f"no live re-issuer for provider {item.provider!r}"
        elif not item.endpoint:
            reason = "no endpoint recorded"
        if reason:
            skipped.append(CallProblem(item.origin, item.provider, item.endpoint, reason))
        else:
            todo.append(item)
    return todo, skipped


def providers_needed(recorded: Sequence[Recorded]) -> list[str]:
    return sorted({item.provider for item in plan(recorded)[0]})


async def reissue_all(
    todo: Sequence[Recorded],
    reissuer: Reissuer,
    *,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> tuple[dict[tuple[str, int], LiveAnswer], list[CallProblem]]:
    """Send every call (at most ``concurrency`` at once); refused credentials stop everything."""
    gate = asyncio.Semaphore(max(1, concurrency))
    answers: dict[tuple[str, int], LiveAnswer] = {}
    errors: list[CallProblem] = []
    done = 0

    async def one(item: Recorded) -> None:
        nonlocal done
        async with gate:
            try:
                answers[item.key] = await reissuer.reissue(item.call())
            except ProviderError as exc:
                if exc.status in AUTH_STATUSES:
                    raise _refused(item, exc) from exc
                errors.append(CallProblem(item.origin, item.provider, item.endpoint, str(exc)))
            except ConfigError:
                raise
            except Exception as exc:  # a provider's own bug must not hide the other answers
                message = f"unexpected {type(exc).__name__}: {exc}"
                errors.append(CallProblem(item.origin, item.provider, item.endpoint, message))
        done += 1
        if progress is not None:
            progress(done, len(todo))

    tasks = [asyncio.ensure_future(one(item)) for item in todo]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    errors.sort(key=lambda problem: problem.origin)
    return answers, errors


def _refused(item: Recorded, exc: ProviderError) -> ConfigError:
    route = catalog.current().get(item.provider)
    variable = route.key_env if route else "the API key"
    return ConfigError(
        f"the live {item.provider} API refused the credentials (HTTP {exc.status}) "
        f"re-issuing {item.origin}\n"
        f"TIP: check that {variable} is valid and allowed to call {item.endpoint}."
    )


def classify(
    recorded: Sequence[Recorded],
    live: dict[tuple[str, int], LiveAnswer],
    *,
    rules: Rules,
) -> list[EndpointResult]:
    """Aggregate both sides per (provider, endpoint), over the pairs that have both answers."""
    groups: dict[tuple[str, str], list[tuple[Recorded, Answer, Answer]]] = {}
    for item in recorded:
        answer = item.answer()
        if answer is None or item.key not in live:
            continue
        pair = (item, answer, live_answer(item, live[item.key]))
        groups.setdefault((item.provider, item.endpoint), []).append(pair)
    results: list[EndpointResult] = []
    for (provider, endpoint), pairs in sorted(groups.items()):
        rec = ShapeBuilder(enum_keys=rules.enum_keys).add_all(p[1] for p in pairs).build()
        now = ShapeBuilder(enum_keys=rules.enum_keys).add_all(p[2] for p in pairs).build()
        findings = compare(rec, now, provider=provider, endpoint=endpoint, rules=rules)
        cassettes = tuple(dict.fromkeys(str(p[0].path) for p in pairs))
        results.append(
            EndpointResult(provider, endpoint, rec.answers, now.answers, tuple(findings), cassettes)
        )
    return results


async def run_check(
    files: Sequence[Path],
    reissuer: Reissuer,
    *,
    recorded: Sequence[Recorded] | None = None,
    rules: Rules | None = None,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> CheckRun:
    """Check ``files`` (cassette paths) against the live side behind ``reissuer``.

    ``recorded`` is what ``load_recorded(files)`` returns, when the caller has read it already.
    """
    rules = rules or Rules()
    if recorded is None:
        recorded = load_recorded(files)
    todo, skipped = plan(recorded, supported=reissuer.supports)
    try:
        live, errors = await reissue_all(todo, reissuer, concurrency=concurrency, progress=progress)
    finally:
        await reissuer.aclose()
    endpoints = classify(recorded, live, rules=rules)
    result = CheckResult(
        cassettes=tuple(str(path) for path in files),
        endpoints=tuple(endpoints),
        errors=tuple(errors),
        skipped=tuple(skipped),
    )
    drifted = drifted_files(recorded, live, endpoints, rules=rules)
    digests = {item.key: item.interaction.digest for item in todo}
    return CheckRun(result, live, frozenset(drifted), digests)


def drifted_files(
    recorded: Sequence[Recorded],
    live: dict[tuple[str, int], LiveAnswer],
    endpoints: Sequence[EndpointResult],
    *,
    rules: Rules,
) -> set[str]:
    """The cassettes whose own answers show a structural drift the whole check found.

    Each file's recorded answers are compared with its live ones; a finding counts when the
    check over all files found it too (so one file's model behaviour, a tool call recorded and
    text live, does not read as drift).
    """
    found = {finding.fingerprint for endpoint in endpoints for finding in endpoint.drift}
    if not found:
        return set()
    by_file: dict[str, list[Recorded]] = {}
    for item in recorded:
        by_file.setdefault(str(item.path), []).append(item)
    drifted: set[str] = set()
    for name, items in by_file.items():
        own = classify(items, live, rules=rules)
        if any(finding.fingerprint in found for result in own for finding in result.drift):
            drifted.add(name)
    return drifted
