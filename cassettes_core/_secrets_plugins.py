"""detect-secrets, in process, with file-scan semantics and a cheap prefilter.

Each string is scanned as detect-secrets scans a file: line by line, each line rendered as
``key: "value"`` so that the quoted-string entropy plugin and the keyword plugin see what they
expect, and so that the id filter recognises ``id``-like keys. The plugins run without eager
search (``scan_line`` would flag ``hello world``), and their findings pass detect-secrets' own
heuristic filters.

What we change, and why:

* Plugins are instances we own, called through ``analyze_string``; detect-secrets' global
  settings are neither read nor changed (thread-safe, and no network verification even if the
  host process configured one).
* Every plugin has a *gate*: a substring or a cheap pattern that any line it could match must
  contain (a run of 16 token characters for fixed formats and entropy, ``eyJ`` for JWTs, a
  denylisted word for the keyword plugin …). Only lines that pass a plugin's gate meet the
  plugin, so prose and code cost a few substring searches. Gates are necessary conditions of
  the plugins' own patterns: they change the cost, not the result. Lines longer than 4 KB are cut
  into windows around the gate hits.
* Left out: ``HexHighEntropyString`` (every sha256, trace id and request id is hex; hex keys are
  found in auth positions instead) and ``IPPublicDetector`` (an address is not a credential).
* ``is_indirect_reference`` (a line filter whose regex costs milliseconds on a long line) only
  dismisses keyword findings, where it belongs, instead of blinding every plugin on the line;
  the ``pragma: allowlist secret`` comment is not honoured, since a model's answer could carry it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache, lru_cache
from typing import Any

from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_likely_id_string,
    is_not_alphanumeric_string,
    is_potential_uuid,
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HighEntropyStringsPlugin,
)
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    DENYLIST,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from cassettes_core._secrets_batch import Batch
from cassettes_core._secrets_llm import is_known_id, is_long_token, is_opaque_blob, is_opaque_field
from cassettes_core._secrets_shapes import is_example_password

# Left out on purpose (see the module docstring); a test checks that every plugin detect-secrets
# ships is either gated below or named here, so an upgrade cannot add one silently.
EXCLUDED_PLUGINS = frozenset({"HexHighEntropyString", "IPPublicDetector"})

_MAX_LINE = 4096
_WINDOW = 320
_MIN_KEYWORD_SECRET = 6

Span = tuple[int, int]
Gate = Callable[[Batch], Iterator[Span]]

# A run of token characters long enough for every prefix-less fixed-length format and for the
# entropy plugin (a Shannon entropy above 4.5 needs at least 23 characters).
_RUN = re.compile(r"[A-Za-z0-9+/=_.\-]{16,}")
_DENYLIST = re.compile("|".join(DENYLIST), re.IGNORECASE)
# Every DENYLIST word holds one of these; a hit is confirmed with the DENYLIST pattern nearby.
KEYWORD_NEEDLES = ("key", "pass", "pwd", "secret", "contrase")


def _regex(pattern: str) -> Gate:
    compiled = re.compile(pattern)

    def gate(batch: Batch) -> Iterator[Span]:
        for match in compiled.finditer(batch.text):
            yield match.span()

    return gate


def _literal(*needles: str, ignorecase: bool = False) -> Gate:
    def gate(batch: Batch) -> Iterator[Span]:
        for needle in needles:
            for position in batch.find_all(needle, ignorecase=ignorecase):
                yield position, position + len(needle)

    return gate


def _keyword(batch: Batch) -> Iterator[Span]:
    lower = batch.lower
    for needle in KEYWORD_NEEDLES:
        for position in batch.find_all(needle, ignorecase=True):
            # DENYLIST words are at most 15 characters: the word holding this needle is near.
            match = _DENYLIST.search(lower, max(0, position - 12), position + len(needle) + 12)
            if match is not None:
                yield match.span()


def _any(*gates: Gate) -> Gate:
    def gate(batch: Batch) -> Iterator[Span]:
        for each in gates:
            yield from each(batch)

    return gate


_RUN_GATE = _regex(_RUN.pattern)

# Each plugin behind a gate that every line it can match passes, read off its own patterns:
# a literal its patterns all contain, or else the run of token characters its secret needs.
_PLUGINS: tuple[tuple[type[Any], Gate], ...] = (
    (ArtifactoryDetector, _regex(r"AKC|AP[0-9A-F]")),
    (
        AWSKeyDetector,
        _any(_literal("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), _literal("aws", ignorecase=True)),
    ),
    (AzureStorageKeyDetector, _literal("AccountKey=")),
    (BasicAuthDetector, _literal("://")),
    (CloudantDetector, _RUN_GATE),
    (DiscordBotTokenDetector, _RUN_GATE),
    (GitHubTokenDetector, _literal("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (
        GitLabTokenDetector,
        _literal(
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "GR1348941",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
        ),
    ),
    (Base64HighEntropyString, _RUN_GATE),
    (IbmCloudIamDetector, _RUN_GATE),
    (IbmCosHmacDetector, _RUN_GATE),
    (JwtTokenDetector, _literal("eyJ")),
    (KeywordDetector, _keyword),
    (MailchimpDetector, _literal("-us")),
    (NpmDetector, _literal("_authToken")),
    (OpenAIDetector, _literal("T3BlbkFJ")),
    (PrivateKeyDetector, _literal("PRIVATE KEY", "PuTTY-User-Key-File-2")),
    (PypiTokenDetector, _literal("pypi-AgE")),
    (SendGridDetector, _literal("SG.")),
    (SlackDetector, _literal("xox", "hooks.slack.com", ignorecase=True)),
    (SoftlayerDetector, _RUN_GATE),
    (SquareOAuthDetector, _literal("sq0csp-")),
    (StripeDetector, _literal("k_live_")),
    (TelegramBotTokenDetector, _RUN_GATE),
    (TwilioKeyDetector, _RUN_GATE),
)


def gated_plugins() -> dict[str, Gate]:
    """The detect-secrets plugin classes the guard runs, by name, with their gates (for tests)."""
    return {cls.__name__: gate for cls, gate in _PLUGINS}


class PluginScanner:
    """The detect-secrets plugins, each behind its gate, plus the filters and our LLM rules."""

    def __init__(self) -> None:
        # Plugins sharing a gate object share one pass of it over the text.
        self._groups: list[tuple[Gate, list[Any]]] = []
        for cls, gate in _PLUGINS:
            for known, members in self._groups:
                if known is gate:
                    members.append(cls())
                    break
            else:
                self._groups.append((gate, [cls()]))
        self._keyword = next(
            p for _, ps in self._groups for p in ps if isinstance(p, KeywordDetector)
        )

    def scan(self, batch: Batch, keys: Sequence[str | None]) -> dict[int, list[tuple[str, str]]]:
        """``(kind, secret)`` for each string of ``batch`` in which detect-secrets finds one.

        ``keys[i]`` is the field name of string ``i`` (``None``: do not scan it).
        """
        # Plugins are collected by id: BasePlugin.__eq__ serialises both sides to compare.
        work: dict[tuple[int, Span], dict[int, Any]] = {}
        scannable: dict[int, bool] = {}
        for gate, members in self._groups:
            for index, span in _lines_hit(batch, gate(batch), keys, scannable):
                work.setdefault((index, span), {}).update((id(p), p) for p in members)
        for index, key in enumerate(keys):
            # The keyword plugin reads the key as part of the line ("password: …").
            if key and _is_keyword(key) and _scannable(batch, keys, index, scannable):
                for span in _every_line(batch.values[index]):
                    work.setdefault((index, span), {})[id(self._keyword)] = self._keyword
        found: dict[int, list[tuple[str, str]]] = {}
        for (index, (start, end)), plugins in work.items():
            key = keys[index] or ""
            line = f'{key}: "{batch.values[index][start:end]}"'
            hits = found.setdefault(index, [])
            for plugin in plugins.values():
                for secret in _analyze(plugin, line, key):
                    item = (str(plugin.secret_type), secret)
                    if item not in hits:
                        hits.append(item)
        return {index: hits for index, hits in found.items() if hits}


def _scannable(batch: Batch, keys: Sequence[str | None], index: int, memo: dict[int, bool]) -> bool:
    if index not in memo:
        memo[index] = keys[index] is not None and not is_opaque_blob(batch.values[index])
    return memo[index]


@lru_cache(maxsize=4096)
def _is_keyword(key: str) -> bool:
    return _DENYLIST.search(key) is not None


def _every_line(text: str) -> Iterator[Span]:
    start = 0
    while True:
        end = text.find("\n", start)
        if end == -1:
            yield from _windows(start, len(text), start, len(text))
            return
        yield from _windows(start, end, start, end)
        start = end + 1


def _windows(line_start: int, line_end: int, hit_start: int, hit_end: int) -> Iterator[Span]:
    if line_end - line_start <= _MAX_LINE:
        yield line_start, line_end
        return
    # A line over 4 KB (minified JSON in a string) is read in windows around the hits.
    position = hit_start
    while position < hit_end or position == hit_start:
        yield max(line_start, position - _WINDOW), min(line_end, position + _WINDOW)
        position += _WINDOW
        if position >= line_end:
            return


def _lines_hit(
    batch: Batch, spans: Iterator[Span], keys: Sequence[str | None], memo: dict[int, bool]
) -> Iterator[tuple[int, Span]]:
    """``(string index, line span in it)`` around each gate hit, each once."""
    emitted: set[tuple[int, Span]] = set()
    for hit_start, hit_end in spans:
        index, offset = batch.locate(hit_start)
        if not _scannable(batch, keys, index, memo):
            continue
        text = batch.values[index]
        end_offset = min(len(text), offset + (hit_end - hit_start))
        line_start = text.rfind("\n", 0, offset) + 1
        line_end = text.find("\n", offset)
        line_end = len(text) if line_end == -1 else line_end
        for span in _windows(line_start, line_end, offset, end_offset):
            if (index, span) not in emitted:
                emitted.add((index, span))
                yield index, span


def _analyze(plugin: Any, line: str, key: str) -> Iterator[str]:
    # The file-scan path of each plugin's analyze_line (without PotentialSecret and settings),
    # then the filters.
    if isinstance(plugin, KeywordDetector):
        matches = plugin.analyze_string(
            line, denylist_regex_to_group=QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        )
    elif isinstance(plugin, HighEntropyStringsPlugin):
        matches = (
            candidate
            for candidate in plugin.analyze_string(line)
            # n characters have an entropy of at most log2(n): n <= 2**limit never passes.
            if len(candidate) > 2**plugin.entropy_limit
        )
    else:
        matches = plugin.analyze_string(line)
    for secret in matches:
        if not secret or _dismissed(plugin, secret, line, key):
            continue
        # The entropy comes last, as the dearest check: a count per character of the charset.
        if (
            isinstance(plugin, HighEntropyStringsPlugin)
            and plugin.calculate_shannon_entropy(secret) <= plugin.entropy_limit
        ):
            continue
        yield secret


def _dismissed(plugin: Any, secret: str, line: str, key: str) -> bool:
    # detect-secrets' default heuristic filters, then what we know about LLM payloads.
    if isinstance(plugin, HighEntropyStringsPlugin) and (
        is_long_token(secret) or is_opaque_field(key) or is_known_id(secret)
    ):
        return True
    if (
        is_sequential_string(secret)
        or is_potential_uuid(secret)
        or is_likely_id_string(secret, line, plugin)
        or is_templated_secret(secret)
        or is_prefixed_with_dollar_sign(secret)
        or is_not_alphanumeric_string(secret)
    ):
        return True
    if isinstance(plugin, KeywordDetector):
        return (
            len(secret) < _MIN_KEYWORD_SECRET
            or is_example_password(secret)  # also placeholders
            or is_indirect_reference(line)
        )
    if isinstance(plugin, BasicAuthDetector):
        return is_example_password(secret)
    return False


@cache
def plugin_scanner() -> PluginScanner:
    """The process-wide scanner (plugins are stateless; building them costs an import)."""
    return PluginScanner()
