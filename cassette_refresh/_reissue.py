"""One drift check's walk: which cassettes, re-issuing their requests live, comparing shapes.

Cassette files (found as ``cassettes scan`` finds them; a damaged cassette is never passed
over) → recorded answers → live calls through a :class:`ProviderReissuer` → a shape per (provider,
endpoint) and side → findings → a :class:`~cassette_refresh._report.CheckResult`. Nothing here
prints or writes. The built-in providers are the HTTP ones and :class:`BedrockProvider`.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import runpy
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cassette_refresh._report import CallProblem, CheckResult, EndpointResult
from cassette_refresh._shape import Answer, Rules, compare, shape_of, vocabulary
from cassettes_core import (
    CassetteError,
    CassetteFormatError,
    ConfigError,
    Interaction,
    LLMRequest,
    LLMResponse,
    ProviderError,
    StreamEvent,
    catalog,
)
from cassettes_core.providers import Provider
from cassettes_core.providers.http import HTTPProvider, http_module
from cassettes_core.store import load_plain_yaml, read_snapshot
from cassettes_core.transport import (
    EVENTSTREAM_CONTENT_TYPE,
    EventStreamParser,
    decode_aws_event,
    kept_headers,
    stored_body,
)


@dataclass(frozen=True)
class Recorded:
    """One recorded interaction and the file it came from."""

    path: Path
    interaction: Interaction

    @property
    def origin(self) -> str:
        return f"{self.path}#{self.interaction.seq}"

    @property
    def provider(self) -> str:
        return self.interaction.provider

    @property
    def endpoint(self) -> str:
        if self.interaction.endpoint:
            return self.interaction.endpoint
        endpoint = catalog.current().get(self.provider)
        return endpoint.route if endpoint is not None else ""

    @property
    def key(self) -> tuple[str, int]:
        return (str(self.path), self.interaction.seq)


def recorded_answer(interaction: Interaction) -> Answer | None:
    """The recorded answer for the shape check; ``None`` for a recorded error."""
    if interaction.stream is not None and interaction.error is None:
        return Answer(events=tuple((event.event, event.data) for event in interaction.stream))
    if interaction.response is not None:
        return Answer(body=interaction.response.body)
    return None


SUFFIXES = (".yaml", ".yml")
CASSETTE_KEYS = ("interactions", "version", "manifest")


@dataclass(frozen=True)
class Loaded:
    """What the files hold: the cassettes, their interactions, the YAML skipped as none."""

    files: tuple[Path, ...]
    recorded: tuple[Recorded, ...]
    skipped: tuple[CallProblem, ...] = ()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts) or relative.name.endswith(".tmp")


def _dangling(path: Path) -> bool:
    return path.is_symlink() and not path.exists()


def _find(paths: Iterable[Path | str]) -> tuple[list[Path], set[Path]]:
    """The cassette files named or found (recursively) under ``paths``, and those named; a
    file named twice is checked once, under the name it was first met by."""
    found: dict[Path, Path] = {}
    named: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if (
                    candidate.suffix.lower() in SUFFIXES
                    and not _hidden(candidate.relative_to(path))
                    and (candidate.is_file() or _dangling(candidate))
                ):
                    found.setdefault(candidate.resolve(), candidate)
        elif path.is_file():
            named.add(found.setdefault(path.resolve(), path))
        else:
            what = (
                "a symlink to a missing file"
                if _dangling(path)
                else "not a regular file (a device, FIFO or socket, or a link to one)"
                if path.exists()
                else "no such file or directory"
            )
            raise ConfigError(
                f"{path}: {what}\n"
                "TIP: pass cassette files or folders, e.g. `cassette-refresh check cassettes/`"
            )
    return list(found.values()), named


def load(paths: Iterable[Path | str]) -> Loaded:
    """Every interaction of the cassettes named or found under ``paths``; YAML found in a
    folder that is plainly not a cassette is skipped; CassetteFormatError on the first bad
    cassette."""
    found, named = _find(paths)
    files: list[Path] = []
    recorded: list[Recorded] = []
    skipped: list[CallProblem] = []
    for path in found:
        if _dangling(path):
            raise CassetteFormatError(
                path, f"is a symlink to {path.readlink()}, which does not exist"
            )
        try:
            snapshot = read_snapshot(path)
        except PermissionError as exc:
            raise CassetteFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
        except CassetteFormatError:
            why = None if path in named else _not_a_cassette(path)
            if why is None:
                raise
            skipped.append(CallProblem(str(path), "", "", why))
            continue
        if snapshot.manifest is None:
            raise CassetteFormatError(path, "was removed while the check started")
        files.append(path)
        recorded.extend(Recorded(path, interaction) for interaction in snapshot.interactions)
    return Loaded(tuple(files), tuple(recorded), tuple(skipped))


def _not_a_cassette(path: Path) -> str | None:
    """Why a YAML file is plainly not a cassette; ``None`` when it could be one."""
    try:
        document = load_plain_yaml(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, CassetteFormatError):
        return None  # unreadable or broken: it may well be a damaged cassette
    if not isinstance(document, Mapping):
        kind = "empty" if document is None else f"a {type(document).__name__}, not a mapping"
        return f"not a cassette (the YAML document is {kind})"
    if not any(key in document for key in CASSETTE_KEYS):
        return "not a cassette (a YAML mapping without `interactions`, `version` or `manifest`)"
    return None


def load_catalogs(modules: Sequence[str]) -> None:
    """Import each ``--catalog`` module (its ``catalog.register`` calls add its endpoints)."""
    for name in modules:
        try:
            if name.endswith(".py"):
                if not Path(name).is_file():
                    raise ConfigError(
                        f"--catalog {name}: no such file\nTIP: pass the .py file that calls "
                        "catalog.register, or its dotted module name."
                    )
                runpy.run_path(name)
            else:
                if os.getcwd() not in sys.path:
                    sys.path.insert(0, os.getcwd())  # as `python -m` would: your own modules
                importlib.import_module(name)
        except CassetteError:
            raise  # a ConfigError of catalog.register: it says what to do
        except ModuleNotFoundError as exc:
            if exc.name is None or not (name == exc.name or name.startswith(f"{exc.name}.")):
                raise _catalog_error(name, exc) from exc
            raise ConfigError(
                f"--catalog {name}: no module of that name can be imported from {os.getcwd()}\n"
                "TIP: pass the dotted name of the module that calls catalog.register, run from "
                "the folder it is importable from (or pass its file: --catalog path/to/file.py)."
            ) from None
        except Exception as exc:
            raise _catalog_error(name, exc) from exc


def _catalog_error(name: str, exc: BaseException) -> ConfigError:
    return ConfigError(
        f"--catalog {name}: importing it failed: {type(exc).__name__}: {exc}\n"
        "TIP: fix the module (run `python -c 'import MODULE'` to see the traceback), or leave "
        "--catalog out if the cassettes use only the built-in endpoints."
    )


RETRY_STATUSES: frozenset[int | None] = frozenset({429, 500, 502, 503, 504, 529})
RETRY_KINDS = frozenset({"timeout", "connection"})


@dataclass(frozen=True)
class LiveAnswer(Answer):
    """What the live provider answered: a JSON ``body``, or the parsed SSE ``events`` with
    ``event_ms``, each event's offset from the start of the call."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    duration_ms: int = 0
    event_ms: tuple[int, ...] | None = None


class StreamFailedError(ProviderError):
    """A live stream that started and then reported an error: retried, then "could not check"."""

    def __init__(self, provider: str, event: str, error: Any) -> None:
        self.event = event
        super().__init__("http_status", provider=provider, status=None, body=error)

    def __str__(self) -> str:
        who = self.provider or "provider"
        detail = self.body if isinstance(self.body, str) else repr(self.body)
        if len(detail) > 200:
            detail = detail[:199] + "…"
        return f"{who}: the stream failed part-way ({self.event}: {detail})"


def _error_of(data: Any) -> Any:
    if not isinstance(data, Mapping):
        return data
    response = data.get("response")
    for holder in (data, response if isinstance(response, Mapping) else {}):
        if holder.get("error") is not None:
            return holder["error"]
    return dict(data)


def stream_failure(events: Iterable[tuple[str | None, Any]]) -> tuple[str, Any] | None:
    """The first event saying the stream failed, as (its type, the error), else ``None``."""
    failed = vocabulary().failure_events  # the catalog's in force: registered endpoints' too
    for name, data in events:
        kind = data.get("type") if isinstance(data, Mapping) else None
        if name in failed or kind in failed:
            return str(name or kind), _error_of(data)
        if isinstance(data, Mapping) and isinstance(data.get("error"), Mapping):
            return str(name or "chunk"), data["error"]
    return None


def retry_delay(headers: Mapping[str, str], *, attempt: int, cap: float) -> float:
    """Seconds to wait before the next try: ``retry-after-ms``, ``retry-after``, else backoff."""
    lowered = {k.lower(): v for k, v in headers.items()}
    wait: float | None = None
    if "retry-after-ms" in lowered:
        try:
            wait = float(lowered["retry-after-ms"]) / 1000
        except ValueError:
            wait = None
    if wait is None and "retry-after" in lowered:
        value = lowered["retry-after"].strip()
        try:
            wait = float(value)
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError):
                wait = None
            else:
                wait = (when - datetime.now(UTC)).total_seconds()
    if wait is None:
        wait = 0.5 * 2**attempt
    return max(0.0, min(wait, cap))


class ProviderReissuer:
    """Sends recorded requests to the live providers: your own :class:`Provider` objects by
    name (``{"acme.grpc": AcmeProvider()}``), or the built-in ones (:func:`built_in_reissuer`).

    A stream is re-issued with ``astream``, anything else with ``acomplete``; 429/5xx, timeouts,
    refused connections and streams failing part-way are tried again after the advised wait.
    An answer that is not JSON or a stream without events (a proxy's page) is a failed call.
    """

    def __init__(
        self, providers: Mapping[str, Provider], *, retries: int = 3, max_retry_wait: float = 30.0
    ) -> None:
        self.providers = dict(providers)
        self.retries = retries
        self.max_retry_wait = max_retry_wait

    def supports(self, provider: str) -> bool:
        """Whether calls of ``provider`` can be re-issued (the others are skipped)."""
        return provider in self.providers

    async def reissue(self, request: LLMRequest, *, stream: bool = False) -> LiveAnswer:
        """Send ``request`` (its fields and recorded params, as first sent) again."""
        provider = self.providers.get(request.provider)
        if provider is None:
            raise ConfigError(f"no provider object given for {request.provider!r}")
        attempt = 0
        while True:
            try:
                return await self._send(provider, request, stream)
            except ProviderError as exc:
                retryable = (
                    exc.status in RETRY_STATUSES
                    or exc.kind in RETRY_KINDS
                    or isinstance(exc, StreamFailedError)
                )
                if not retryable or attempt >= self.retries:
                    raise
                wait = retry_delay(exc.headers, attempt=attempt, cap=self.max_retry_wait)
                await asyncio.sleep(wait)
                attempt += 1

    @staticmethod
    async def _send(provider: Provider, request: LLMRequest, stream: bool) -> LiveAnswer:
        started = time.monotonic()
        if stream:
            events: list[tuple[str | None, Any]] = []
            offsets: list[int] = []
            async for event in provider.astream(request):
                events.append((event.event, event.data))
                offsets.append(int((time.monotonic() - started) * 1000))
            took = int((time.monotonic() - started) * 1000)
            if not events:
                raise _unreadable(request.provider, 200, "an event stream without events")
            failed = stream_failure(events)
            if failed is not None:
                raise StreamFailedError(request.provider, *failed)
            return LiveAnswer(events=tuple(events), duration_ms=took, event_ms=tuple(offsets))
        answer = await provider.acomplete(request)
        took = int((time.monotonic() - started) * 1000)
        if isinstance(answer.body, str):
            raise _unreadable(request.provider, answer.status, f"not JSON: {answer.body[:200]}")
        return LiveAnswer(
            body=answer.body, status=answer.status, headers=dict(answer.headers), duration_ms=took
        )


def _unreadable(provider: str, status: int, what: str) -> ProviderError:
    return ProviderError("http_status", provider=provider, status=status, body=what)


_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def _with_scheme(value: str, default: str) -> str:
    """The base URL a variable gives, read as the provider's SDK reads it: a local server's
    variable (``OLLAMA_HOST``) may be ``host``, ``host:port`` or ``:port``, the scheme, host and
    port of the endpoint's own base filling what is left out, as the ollama SDK takes it. A
    hosted API's variable must be a URL (checked by the caller)."""
    if not value:
        return default
    if "://" in value:
        return value
    http = http_module()
    try:
        base = http.URL(default)
    except (http.InvalidURL, TypeError, ValueError):
        return value
    if base.host not in _LOOPBACK_HOSTS:
        return value
    place, slash, path = value.partition("/")
    if place.startswith("["):  # an IPv6 address, perhaps with a port after it
        address, _, rest = place.partition("]")
        host, port = address + "]", rest.removeprefix(":")
    else:
        host, _, port = place.rpartition(":") if ":" in place else (place, "", "")
    host = host or base.host
    port = port or str(base.port or "")
    netloc = f"{host}:{port}" if port else host
    return f"{base.scheme}://{netloc}{slash}{path}".rstrip("/")


def url_problem(url: str) -> str | None:
    """Why the HTTP client cannot use ``url`` as an API base; ``None`` when it can."""
    http = http_module()
    try:
        parsed = http.URL(url)
    except (http.InvalidURL, TypeError, ValueError) as exc:
        return str(exc)
    return None if parsed.scheme in {"http", "https"} and parsed.host else "not an http(s) URL"


def built_in_reissuer(
    names: Iterable[str],
    env: Mapping[str, str],
    *,
    timeout: float = 60.0,
    retries: int = 3,
    max_retry_wait: float = 30.0,
) -> ProviderReissuer:
    """A :class:`ProviderReissuer` over the built-in :class:`HTTPProvider` of each name.

    Keys and base URLs come from ``env`` alone (``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``…, as
    their :mod:`cassettes_core.catalog` endpoints name them; the public API when no base URL is
    set), checked here: a missing key is a :class:`ConfigError` naming the variable, before any
    call is made.
    """
    providers: dict[str, Provider] = {}
    for name in names:
        route = catalog.current().get(name)
        if route is not None and route.family == "bedrock":  # botocore signs: no key variable
            providers[name] = BedrockProvider(route, env=env, timeout=timeout)
            continue
        if route is None:
            raise ConfigError(
                f"no built-in way to reach provider {name!r} live: it is not in the catalog\n"
                "TIP: if your project registers it (catalog.register), pass the module that "
                "does: `cassette-refresh check --catalog MODULE ...`."
            )
        key = env.get(route.key_env, "").strip()
        if not key:
            raise ConfigError(
                f"{route.key_env} is not set: it is needed to re-issue the recorded {name} "
                f"requests\nTIP: export {route.key_env} (and {route.base_env} for a compatible "
                "server), or in CI pass it from the repository secrets."
            )
        base_url = _with_scheme(env.get(route.base_env, "").strip(), route.base_url)
        problem = url_problem(base_url)
        if problem is not None:
            raise ConfigError(
                f"{route.base_env}={base_url!r} is not a usable URL ({problem})\n"
                f"TIP: set {route.base_env} to the API's base, e.g. {route.base_url}, "
                "or unset it for the public API."
            )
        providers[name] = HTTPProvider(name, base_url=base_url, api_key=key, timeout=timeout)
    return ProviderReissuer(providers, retries=retries, max_retry_wait=max_retry_wait)


class BedrockProvider:
    """One Bedrock runtime endpoint of the catalog (``bedrock.converse`` …), signed with
    botocore."""

    def __init__(
        self, endpoint: catalog.Endpoint, *, env: Mapping[str, str], timeout: float
    ) -> None:
        self.name = endpoint.name
        self._route = endpoint.route
        self._base_env = endpoint.base_env  # AWS_ENDPOINT_URL_BEDROCK_RUNTIME, botocore's own
        self._timeout = timeout
        self._env = dict(env)
        self._session: Any = None

    def _botocore(self) -> Any:
        if self._session is None:
            try:
                import botocore.session
            except ImportError:
                raise ConfigError(
                    "re-issuing Bedrock calls needs botocore (it signs them): pip install boto3"
                ) from None
            self._session = botocore.session.get_session()
        return self._session

    def _region(self, model: str) -> str:
        if model.startswith("arn:"):
            parts = model.split(":")
            if len(parts) > 3 and parts[3]:
                return parts[3]
        region = (
            self._env.get("AWS_REGION")
            or self._env.get("AWS_DEFAULT_REGION")
            or self._botocore().get_config_variable("region")
        )
        if not region:
            raise ConfigError(
                "no AWS region to re-issue Bedrock calls in\n"
                "TIP: export AWS_REGION (for example us-east-1), or set one in your AWS profile."
            )
        return str(region)

    def _url(self, region: str, model: str) -> str:
        base = self._env.get(self._base_env) or self._env.get("AWS_ENDPOINT_URL")
        if not base:
            client = self._botocore().create_client("bedrock-runtime", region_name=region)
            base = client.meta.endpoint_url
        head, _, operation = self._route.rpartition("/")
        prefix = head.rsplit("/", 1)[0]  # the route's path up to the model
        return f"{str(base).rstrip('/')}{prefix}/{quote(model, safe='')}/{operation}"

    def _signed(self, request: LLMRequest, *, stream: bool) -> tuple[str, dict[str, str], bytes]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        body = dict(request.body())
        model = str(body.pop("model", "") or "")
        if not model:
            raise ConfigError(f"a recorded {self.name} request has no model to send it to")
        credentials = self._botocore().get_credentials()
        if credentials is None:
            raise ConfigError(
                "no AWS credentials found to re-issue Bedrock calls\n"
                "TIP: export AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), as "
                "boto3 would use them."
            )
        region = self._region(model)
        content = json.dumps(body, separators=(",", ":")).encode()
        accept = EVENTSTREAM_CONTENT_TYPE if stream else "application/json"
        prepared = AWSRequest(
            method="POST",
            url=self._url(region, model),
            data=content,
            headers={"content-type": "application/json", "accept": accept},
        )
        SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region).add_auth(prepared)
        return prepared.url, dict(prepared.headers.items()), content

    def _send(self, request: LLMRequest, *, stream: bool) -> Any:
        url, headers, content = self._signed(request, stream=stream)
        http = http_module()
        try:
            with http.Client(timeout=self._timeout) as client:
                answer = client.post(url, headers=headers, content=content)
        except http.TimeoutException as exc:
            raise ProviderError("timeout", str(exc), provider=self.name) from None
        except http.TransportError as exc:
            raise ProviderError("connection", str(exc), provider=self.name) from None
        if answer.status_code >= 300:
            body = stored_body(answer.content, answer.headers.get("content-type"), lossy=True)
            raise ProviderError(
                "http_status",
                provider=self.name,
                status=answer.status_code,
                body=body,
                headers=dict(answer.headers.items()),
            )
        return answer

    def complete(self, request: LLMRequest) -> LLMResponse:
        answer = self._send(request, stream=False)
        body = stored_body(answer.content, answer.headers.get("content-type"))
        # The headers a recording through boto3 keeps (a rewrite stores this answer).
        kept = kept_headers(answer.headers.items())
        return LLMResponse(body=body, status=answer.status_code, headers=kept)

    def stream(self, request: LLMRequest) -> Iterator[StreamEvent]:
        answer = self._send(request, stream=True)
        parser = EventStreamParser()
        frames = parser.feed(answer.content)
        parser.close()
        for frame in frames:
            yield decode_aws_event(frame)

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        return await asyncio.to_thread(self.complete, request)

    async def astream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        events = await asyncio.to_thread(lambda: list(self.stream(request)))
        for event in events:
            yield event


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
    recorded: Sequence[Recorded], *, supported: Callable[[str], bool]
) -> tuple[list[Recorded], list[CallProblem]]:
    """Which interactions can be re-issued; the others, with the reason they are skipped."""
    todo: list[Recorded] = []
    skipped: list[CallProblem] = []
    for item in recorded:
        reason = None
        answer = recorded_answer(item.interaction)
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
    """The providers the built-in re-issuer is to reach: those of the catalog with a call to
    re-issue."""
    known = catalog.current()
    return sorted({item.provider for item in plan(recorded, supported=known.__contains__)[0]})


async def reissue_all(
    todo: Sequence[Recorded],
    reissuer: ProviderReissuer,
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
                interaction = item.interaction
                stream = interaction.stream is not None
                answers[item.key] = await reissuer.reissue(interaction.request, stream=stream)
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
        answer = recorded_answer(item.interaction)
        if answer is None or item.key not in live:
            continue
        pair = (item, answer, live[item.key])
        groups.setdefault((item.provider, item.endpoint), []).append(pair)
    results: list[EndpointResult] = []
    for (provider, endpoint), pairs in sorted(groups.items()):
        rec = shape_of((p[1] for p in pairs), enum_keys=rules.enum_keys)
        now = shape_of((p[2] for p in pairs), enum_keys=rules.enum_keys)
        findings = compare(rec, now, provider=provider, endpoint=endpoint, rules=rules)
        cassettes = tuple(dict.fromkeys(str(p[0].path) for p in pairs))
        results.append(
            EndpointResult(provider, endpoint, rec.answers, now.answers, tuple(findings), cassettes)
        )
    return results


async def run_check(
    files: Sequence[Path],
    reissuer: ProviderReissuer,
    *,
    recorded: Sequence[Recorded] | None = None,
    rules: Rules | None = None,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> CheckRun:
    """Check ``files`` (cassette paths) against the live side behind ``reissuer``.

    ``recorded`` is what :func:`load` read from ``files``, when the caller has read it already.
    """
    rules = rules or Rules()
    if recorded is None:
        recorded = load(files).recorded
    todo, skipped = plan(recorded, supported=reissuer.supports)
    live, errors = await reissue_all(todo, reissuer, concurrency=concurrency, progress=progress)
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
