"""detect-secrets, in process, with file-scan semantics, behind cheap gates.

Each string is read line by line, each line rendered as ``key: "value"`` as detect-secrets
renders a file; findings pass its heuristic filters, then our LLM rules. The plugins are our own
instances (its global settings are never read or changed). Each has a gate, a necessary
condition of its patterns found in all the strings at once: gates change the cost, never the
result. Base64 wrapped over many lines is one token when it is public or binary data. Left out:
``HexHighEntropyString`` (every hash is hex), ``IPPublicDetector``, ``PrivateKeyDetector`` (ours
asks for the key's body); ``pragma: allowlist secret`` is not honoured (a model could write it).
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
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from cassettes_core.secrets._formats import (
    BLOB_MIN,
    Batch,
    base64_bytes,
    is_alphabet,
    is_example_password,
    is_known_id,
    is_opaque_blob,
    is_opaque_field,
    is_prose,
    is_sequence_fragment,
    is_text,
    words,
)

# ---------------- base64 wrapped over many lines
# A line of base64 alone (indentation and a carriage return allowed), and a PEM header.
_LINE = re.compile(r"^[ \t]*+[A-Za-z0-9+/=_-]{4,4096}+[ \t]*+\r?$", re.MULTILINE)
_MIN_WIDTH = 40  # every line but the last is this long at least (the last may be short)
_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,40}+)-----[ \t]*+\r?$")
_PUBLIC = """CERTIFICATE|TRUSTED CERTIFICATE|X509 CERTIFICATE|CERTIFICATE REQUEST|X509 CRL|
NEW CERTIFICATE REQUEST|PUBLIC KEY|RSA PUBLIC KEY|SSH2 PUBLIC KEY|PGP PUBLIC KEY BLOCK|
PGP SIGNATURE|PKCS7|CMS|DH PARAMETERS|EC PARAMETERS"""
_PUBLIC_LABELS = frozenset(_PUBLIC.replace("\n", "").split("|"))
_MIN_LINES = 2
# Longer than any key, as a token on one line must be for the entropy plugins to pass it (an
# HMAC secret wrapped over two lines is still a secret).
_MAX_DECODED = 1 << 20
_KEY_MAGIC = (b"0", b"openssh-key-v1")  # DER starts with 0x30 ("0"): PKCS#1, PKCS#8, SEC1


def harmless_blocks(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are wrapped base64 of public or binary data."""
    blocks: list[tuple[int, int]] = []
    lines = list(_LINE.finditer(text))
    first = 0
    while first < len(lines):
        last = first
        width = len(lines[first].group().strip())
        if width < _MIN_WIDTH:
            first += 1
            continue
        while (
            last + 1 < len(lines)
            and lines[last + 1].start() == lines[last].end() + 1
            and len(lines[last].group().strip()) == width
            and len(lines[last + 1].group().strip()) <= width
        ):
            last += 1
        start, end = lines[first].start(), lines[last].end()
        long_enough = last - first + 1 >= _MIN_LINES and end - start > BLOB_MIN
        if long_enough and _harmless(text, start, end):
            blocks.append((start, end))
        first = last + 1
    return blocks


def _harmless(text: str, start: int, end: int) -> bool:
    before = text.rfind("\n", 0, max(start - 1, 0))
    header = _BEGIN.search(text, before + 1, max(start - 1, 0)) if start else None
    if header is not None:
        return header.group(1) in _PUBLIC_LABELS
    body = "".join(text[start:end].split())
    data = base64_bytes(body) if len(body) <= _MAX_DECODED * 4 // 3 else None
    return data is not None and not data.startswith(_KEY_MAGIC) and not is_text(data)


# ---------------- gates: what a line must hold before a plugin reads it
Span = tuple[int, int]
Keys = Sequence[str | None]
Gate = Callable[[Batch, Keys], Iterator[Span]]

_QUOTES = "\"'\n"


def literal(*needles: str, anycase: tuple[str, ...] = ()) -> Gate:
    """Any of ``needles``, or of ``anycase`` in any case (one substring search each: an
    alternation without a common literal start would make the engine try every position)."""

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        for needle, ignorecase in [(n, False) for n in needles] + [(n, True) for n in anycase]:
            for position in batch.find_all(needle, ignorecase=ignorecase):
                yield position, position + len(needle)

    return gate


def pattern(regex: str) -> Gate:
    """A regular expression with a literal start (the engine finds such a start fast)."""
    compiled = re.compile(regex)

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        for match in compiled.finditer(batch.text):
            yield match.span()

    return gate


def run(min_length: int, regex: str | None = None, *, before: int = 0) -> Gate:
    """A run of at least ``min_length`` characters, holding ``regex`` (which may start up to
    ``before`` characters ahead of the run, outside the token alphabet)."""
    compiled = re.compile(regex) if regex is not None else None

    def gate(batch: Batch, keys: Keys) -> Iterator[Span]:
        text = batch.text
        for start, end in batch.runs:
            if end - start < min_length:
                continue
            if compiled is None or compiled.search(text, max(0, start - before), end):
                yield start, end

    return gate


def quoted_run(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the entropy plugin: a quoted string of 23 base64 characters or more.

    The plugin reads ``(['"])([charset]+)\\1`` in the line rendered as ``key: "line"`` (a
    line's ends are quotes too), and an entropy above 4.5 needs 23 characters. Such a string
    is a whole run, without dots, between quotes or line ends.
    """
    text = batch.text
    for start, end in batch.runs:
        if (
            end - start >= 23
            and (start == 0 or text[start - 1] in _QUOTES)
            and (end == len(text) or text[end] in _QUOTES)
            and "." not in text[start:end]
        ):
            yield start, end


_ASSIGNED_WORDS = re.compile(r"key|pass|pw|token|secret|cloudant|softlayer")


def assigned_run(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the plugins that read ``<prefix><key|pass|token…> = <run of 24+>`` (Cloudant, IBM,
    SoftLayer): a run of 24 characters in a line, or under a key, that names a credential."""
    lower = batch.lower
    lines: dict[int, bool] = {}
    for start, end in batch.runs:
        if end - start < 24:
            continue
        index, _ = batch.locate(start)
        line_start = lower.rfind("\n", 0, start) + 1
        named = lines.get(line_start)
        if named is None:
            line_end = lower.find("\n", start)
            line_end = len(lower) if line_end == -1 else line_end
            named = _ASSIGNED_WORDS.search(lower, line_start, line_end) is not None
            lines[line_start] = named
        key = keys[index]
        if named or (key and _ASSIGNED_WORDS.search(key)):
            yield start, end


# Every DENYLIST word holds one of these needles. The keyword plugin's patterns need, beside
# the word, an assignment or a comparison after it (``password = "…"``, ``api_key: '…'``) or a
# quote soon after it (``private_key "…";``), or a comparison before it (``"…" == password``).
KEYWORD_NEEDLES = ("key", "pass", "pwd", "secret", "contrase")
_OPERATORS = ("==", "!=", "=!", "!!")  # [!=]{2,3} holds one of these
# The word a needle starts runs on possessively: ``key\w*`` could only give characters back to
# ``\S``, which would take them again, so the gate is the same without backtracking.
_WORD_RUN = re.compile(r"\w*+")
_AFTER = re.compile(r"""[\]'"]{0,2}\s*[:=!]|\S{0,50}?\s*['"`]""")
_KEYWORD_BEFORE = re.compile(r"[!=]?\s*\w*?(?:" + "|".join(DENYLIST) + ")")


def keyword(batch: Batch, keys: Keys) -> Iterator[Span]:
    """For the keyword plugin: a DENYLIST word beside an assignment, a comparison or a quote."""
    lower = batch.lower
    for needle in KEYWORD_NEEDLES:
        # Every needle inside one word leads to the same end of the word: the first one stands
        # for the others, so that a word of a thousand "key"s is read once, not a thousand times.
        covered = 0
        for position in batch.find_all(needle, ignorecase=True):
            if position < covered:
                continue
            word = _WORD_RUN.match(lower, position + len(needle))
            covered = word.end() if word is not None else position + len(needle)
            after = _AFTER.match(lower, covered)
            if after is not None:
                yield position, after.end()
    for operator in _OPERATORS:
        for position in batch.find_all(operator):
            before = _KEYWORD_BEFORE.match(lower, position + 2)
            if before is not None:
                yield before.span()


# ---------------- the plugins
# Left out on purpose (see the module docstring); a test checks that every plugin detect-secrets
# ships is either gated below or named here, so an upgrade cannot add one silently.
EXCLUDED_PLUGINS = frozenset({"HexHighEntropyString", "IPPublicDetector", "PrivateKeyDetector"})

_MAX_LINE = 4096
_WINDOW = 320
_MIN_KEYWORD_SECRET = 6

_DENYLIST = re.compile("|".join(DENYLIST), re.IGNORECASE)


# Each plugin behind a gate that every line it can match passes, read off its own patterns:
# a literal its patterns all contain, or else the run of token characters its secret needs.
_ASSIGNED = assigned_run  # one gate object: the plugins behind it share its pass
_PLUGINS: tuple[tuple[type[Any], Gate], ...] = (
    (ArtifactoryDetector, pattern(r"AKC|AP[0-9A-F]")),
    (AWSKeyDetector, literal("A3T", "ABIA", "ACCA", "AKIA", "ASIA", anycase=("aws",))),
    (AzureStorageKeyDetector, literal("AccountKey=")),
    (BasicAuthDetector, literal("://")),
    (CloudantDetector, _ASSIGNED),
    (DiscordBotTokenDetector, run(58, r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.")),
    (GitHubTokenDetector, literal("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (
        GitLabTokenDetector,
        literal(
            *words(
                "glpat- gldt- glft- glsoat- glrt- GR1348941 glcbt- glimt- glptt- glagent- gloas-"
            )
        ),
    ),
    (Base64HighEntropyString, quoted_run),
    (IbmCloudIamDetector, _ASSIGNED),
    (IbmCosHmacDetector, _ASSIGNED),
    (JwtTokenDetector, literal("eyJ")),
    (KeywordDetector, keyword),
    (MailchimpDetector, literal("-us")),
    (NpmDetector, literal("_authToken")),
    (OpenAIDetector, literal("T3BlbkFJ")),
    (PypiTokenDetector, literal("pypi-AgE")),
    (SendGridDetector, literal("SG.")),
    (SlackDetector, literal(anycase=("xox", "hooks.slack.com"))),
    (SoftlayerDetector, _ASSIGNED),
    (SquareOAuthDetector, literal("sq0csp-")),
    (StripeDetector, literal("k_live_")),
    (TelegramBotTokenDetector, run(35, r"\d{8,10}:[0-9A-Za-z_-]{35}", before=11)),
    (TwilioKeyDetector, run(34, r"(?:AC|SK)[a-z0-9]{32}")),
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
        """``(kind, secret)`` for each string of ``batch`` in which detect-secrets finds one."""
        found: dict[int, list[tuple[str, str]]] = {}
        known: dict[int, set[tuple[str, str]]] = {}  # the same, as sets (a line read twice)
        wrapped: dict[int, list[tuple[int, int]]] = {}
        for (index, (start, end)), plugins in self.route(batch, keys).items():
            key = keys[index] or ""
            line = f'{key}: "{batch.values[index][start:end]}"'
            hits = found.setdefault(index, [])
            seen = known.setdefault(index, set())
            for plugin in plugins:
                if isinstance(plugin, _CHANCE_MATCHES) and _in_wrapped_block(
                    batch.values[index], start, end, wrapped.setdefault(index, [])
                ):
                    continue  # a line of a wrapped image or certificate: one long token
                for secret in _analyze(plugin, line, key):
                    item = (str(plugin.secret_type), secret)
                    if item not in seen:
                        seen.add(item)
                        hits.append(item)
        return {index: hits for index, hits in found.items() if hits}

    def route(self, batch: Batch, keys: Sequence[str | None]) -> dict[tuple[int, Span], list[Any]]:
        """The plugins that read each line: ``(string index, line span)`` → plugins."""
        # Plugins are collected by id: BasePlugin.__eq__ serialises both sides to compare.
        work: dict[tuple[int, Span], dict[int, Any]] = {}
        scannable: dict[int, bool] = {}
        for gate, members in self._groups:
            for index, span in _lines_hit(batch, gate(batch, keys), keys, scannable):
                work.setdefault((index, span), {}).update((id(p), p) for p in members)
        keywords = {key for key in set(keys) if key and _is_keyword(key)}
        for index, key in enumerate(keys) if keywords else ():
            # The keyword plugin reads the key as part of the line ("password: …").
            if key in keywords and _scannable(batch, keys, index, scannable):
                for span in _every_line(batch.values[index]):
                    work.setdefault((index, span), {})[id(self._keyword)] = self._keyword
        return {line: list(plugins.values()) for line, plugins in work.items()}


# Plugins that random data can satisfy by chance: entropy, and Artifactory's ``AP[0-9A-F]…`` /
# ``AKC…`` (one random alphanumeric token of 11 characters or more in some 14,000 matches it:
# a certificate line, or a provider-minted id or ``obfuscation`` padding).
_CHANCE_MATCHES = (HighEntropyStringsPlugin, ArtifactoryDetector)


def _in_wrapped_block(text: str, start: int, end: int, blocks: list[tuple[int, int]]) -> bool:
    # ``blocks`` caches the string's harmless blocks, found at the first line asked about
    # (an empty cache is filled, with a (-1, -1) marker when there are none).
    if "\n" not in text:
        return False
    if not blocks:
        blocks.extend(harmless_blocks(text) or [(-1, -1)])
    return any(first <= start and end <= last for first, last in blocks)


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
    # A line over 4 KB (minified JSON in a string) is read in windows around the hits. Windows
    # sit on a grid (cell k covers one window either side of it), so that hits every few
    # characters share windows: the plugins read each part of a line at most three times.
    first = (hit_start - line_start) // _WINDOW
    last = (max(hit_end, hit_start + 1) - 1 - line_start) // _WINDOW
    for cell in range(first, last + 1):
        start = line_start + cell * _WINDOW
        yield max(line_start, start - _WINDOW), min(line_end, start + 2 * _WINDOW)


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
        # The entropy comes last, as the dearest check.
        if (
            isinstance(plugin, HighEntropyStringsPlugin)
            and plugin.calculate_shannon_entropy(secret) <= plugin.entropy_limit
        ):
            continue
        yield secret


def _dismissed(plugin: Any, secret: str, line: str, key: str) -> bool:
    # detect-secrets' default heuristic filters, then what we know about LLM payloads.
    if isinstance(plugin, _CHANCE_MATCHES) and (
        # what a provider mints at random: ids, padding, fingerprints
        is_opaque_field(key)
        or is_known_id(secret)
        or _ID_FIELD.search(key) is not None
        or (
            isinstance(plugin, HighEntropyStringsPlugin)
            and (
                len(secret) > BLOB_MIN  # longer than any key without a prefix
                or is_alphabet(secret)
                or _INTEGRITY.fullmatch(secret) is not None
            )
        )
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
            or is_prose(secret)  # "Set in dashboard", "see vault"
            or is_indirect_reference(line)
        )
    if isinstance(plugin, BasicAuthDetector):
        return is_example_password(secret)
    if isinstance(plugin, AWSKeyDetector) and _AWS_KEY_ID.fullmatch(secret):
        return is_sequence_fragment(secret, line)
    return False


# A subresource-integrity or lock-file hash (``integrity="sha384-…"``): the digest of a public
# file, quoted whole by the entropy plugins.
_INTEGRITY = re.compile(r"sha(?:256|384|512)-[A-Za-z0-9+/]{43,86}={0,2}")
# A field (snake case) that holds an id: ``id``, ``response_id``, ``x_goog_request_id``.
_ID_FIELD = re.compile(r"(?:^|_)(?:my|user)?ids?$")
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")


@cache
def plugin_scanner() -> PluginScanner:
    """The process-wide scanner (plugins are stateless; building them costs an import)."""
    return PluginScanner()
