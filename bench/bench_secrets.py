"""Secret-guard cost per interaction, beside a naive per-field detect-secrets scan.

Run: ``.venv/bin/python bench/bench_secrets.py`` (``--quick`` skips the naive scans of 1 MB).

Bodies are realistic chat JSON: a system prompt, user questions, assistant answers with prose
and code, tool calls and results, ids, usage, and a base64 embedding. Both scanners read the
same interaction in the same run. The naive scan renders every string leaf line by line as
``key: "line"`` and runs detect-secrets' file scan over it with all plugins and default filters.

Then three shapes that stress the guard's fixed costs, about 1 MB each: code-heavy messages
(distinct source files of the standard library), a stream of 20 000 one-word deltas, and 50 000
small objects (100 000 short strings).

Recall is checked on the same bodies with secrets of every kind detect-secrets knows injected
into prose, JSON fields and a header: the guard must find every one the naive scan finds.

Last, the worst inputs we could construct for each detector (``--adversarial-only`` runs just
these): text built to make a pattern restart or backtrack at every position — many PEM
``-----BEGIN`` without an END, runs of the base64 and hex alphabets, thousands of ``key=``
prefixes, ``eyJ`` runs without dots, zero-width-laden and look-alike text, deep and
duplicate-keyed JSON, interleaved streams, near-misses of the environment's credentials. Each
is measured at 24 KB and 96 KB: a linear scan costs the same per KB at both sizes. Targets:
0.5 ms/KB on ordinary bodies, 5 ms/KB on the worst input.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import random
import statistics
import string
import struct
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detect_secrets.core.scan import _process_line_based_plugins
from detect_secrets.settings import default_settings

from cassettes_core.secrets import SecretGuard

ALNUM = string.ascii_letters + string.digits
WORDS = [
    *("the", "model", "returns", "a", "list", "of", "tokens", "and", "each", "request", "is"),
    *("billed", "by", "usage", "so", "we", "cache", "replies", "for", "tests", "that", "run"),
    *("offline", "deterministic", "cassette", "provider", "stream", "event", "message"),
    *("function", "call", "argument", "schema", "response", "latency", "budget", "retry"),
    *("backoff", "timeout", "server", "client", "digest", "payload", "header", "status"),
    *("rate", "limit", "quota", "answer", "question", "context", "window", "prompt"),
    *("completion", "embedding", "vector", "search", "index", "document", "chunk", "summary"),
]
CODE = [
    "import json",
    "from dataclasses import dataclass",
    "",
    "@dataclass(frozen=True)",
    "class Order:",
    "    order_id: str",
    "    amount_cents: int",
    "",
    "def total(orders: list[Order]) -> int:",
    "    return sum(order.amount_cents for order in orders)",
    "",
    "def load(path: str) -> list[Order]:",
    "    with open(path, encoding='utf-8') as handle:",
    "        rows = json.load(handle)",
    "    return [Order(row['order_id'], int(row['amount_cents'])) for row in rows]",
    "",
    "if __name__ == '__main__':",
    "    print(total(load('orders.json')))",
]


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def answer(rng: random.Random) -> str:
    parts = [prose(rng, rng.randint(2, 5))]
    if rng.random() < 0.6:
        parts.append("```python\n" + "\n".join(CODE[: rng.randint(6, len(CODE))]) + "\n```")
    parts.append(prose(rng, rng.randint(1, 3)))
    return "\n\n".join(parts)


def embedding(rng: random.Random, dims: int) -> str:
    floats = struct.pack(f"<{dims}f", *(rng.uniform(-1, 1) for _ in range(dims)))
    return base64.b64encode(floats).decode()


def make_interaction(target: int, rng: random.Random) -> dict[str, Any]:
    """A chat interaction whose JSON is about ``target`` bytes."""
    dims = 32 if target < 20_000 else 1536  # a small embedding in a small body
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prose(rng, 1 if target < 20_000 else 3)},
    ]
    interaction: dict[str, Any] = {
        "seq": 1,
        "digest": rand(rng, 64, "0123456789abcdef"),
        "provider": "openai.chat",
        "endpoint": "/v1/chat/completions",
        "request": {"model": "gpt-4o", "messages": messages, "params": {"temperature": 0.2}},
        "response": {
            "status": 200,
            "headers": {
                "content-type": "application/json",
                "x-request-id": "req_" + rand(rng, 32, "0123456789abcdef"),
                "openai-processing-ms": "834",
            },
            "body": {
                "id": "chatcmpl-" + rand(rng, 29),
                "object": "chat.completion",
                "created": 1764410400,
                "model": "gpt-4o-2024-08-06",
                "system_fingerprint": "fp_" + rand(rng, 10, "0123456789abcdef"),
                "choices": [],
                "usage": {"prompt_tokens": 812, "completion_tokens": 164, "total_tokens": 976},
                "data": [{"object": "embedding", "index": 0, "embedding": embedding(rng, dims)}],
            },
        },
        "duration_ms": 834,
    }
    while len(json.dumps(interaction)) < target * 0.97:
        turn = rng.random()
        if turn < 0.35:
            messages.append({"role": "user", "content": prose(rng, rng.randint(1, 4))})
        elif turn < 0.8:
            messages.append({"role": "assistant", "content": answer(rng)})
        else:
            call_id = "call_" + rand(rng, 24)
            arguments = {"query": prose(rng, 1), "limit": rng.randint(1, 20)}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "search", "arguments": json.dumps(arguments)},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": prose(rng, 3)})
        if len(json.dumps(interaction)) > target * 0.97:
            break
    interaction["response"]["body"]["choices"] = [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": answer(rng)},
        }
    ]
    return interaction


# ------------------------------------------------------------------ shapes


def code_heavy(target: int) -> dict[str, Any]:
    """Messages holding whole source files (the standard library's, in name order)."""
    root = Path(os.__file__).parent
    messages: list[dict[str, Any]] = []
    size = 0
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")[:30_000]
        messages.append({"role": "user", "content": f"Review this file:\n```python\n{text}\n```"})
        size += len(text)
        if size >= target:
            break
    return {"seq": 1, "request": {"model": "gpt-4o", "messages": messages}, "response": {}}


def many_deltas(rng: random.Random, count: int) -> dict[str, Any]:
    """A chat stream of one-word deltas, as OpenAI sends them."""
    events = [
        {"data": {"choices": [{"index": 0, "delta": {"content": rng.choice(WORDS) + " "}}]}}
        for _ in range(count)
    ]
    return {"seq": 1, "stream": events}


def many_small(count: int) -> dict[str, Any]:
    """A response with many small objects (a list endpoint): short strings by the thousand."""
    data = [{"id": f"x{i}", "tag": "ab"} for i in range(count)]
    return {"seq": 1, "response": {"status": 200, "body": {"data": data}}}


# ------------------------------------------------------------------ the naive scan


def leaves(node: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield key, node
    elif isinstance(node, dict):
        for name, child in node.items():
            yield from leaves(child, str(name))
    elif isinstance(node, list):
        for child in node:
            yield from leaves(child, key)


def naive_scan(interaction: dict[str, Any]) -> int:
    """Findings of a per-field detect-secrets file scan (call inside default_settings)."""
    found = 0
    for key, value in leaves(interaction):
        lines = [(n, f'{key}: "{line}"') for n, line in enumerate(value.split("\n"), start=1)]
        found += sum(1 for _ in _process_line_based_plugins(lines, filename="cassette.yaml"))
    return found


def ours_scan(interaction: dict[str, Any]) -> int:
    return len(SecretGuard().scan(interaction))


# ------------------------------------------------------------------ recall


def secrets_detect_secrets_knows(rng: random.Random) -> dict[str, str]:
    """One format-valid fake value per detect-secrets plugin, made up at run time."""
    jwt_head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    jwt_body = base64.urlsafe_b64encode(b'{"sub":"1234567890"}').decode().rstrip("=")
    return {
        "AWS": "AKIA" + rand(rng, 16, string.ascii_uppercase + string.digits),
        "GitHub": "ghp_" + rand(rng, 36),
        "GitLab": "glpat-" + rand(rng, 20),
        "Slack": "xoxb-" + rand(rng, 11, string.digits) + "-" + rand(rng, 24).lower(),
        "Stripe": "sk_live_" + rand(rng, 24),
        "JWT": f"{jwt_head}.{jwt_body}.{rand(rng, 43, ALNUM + '-_')}",
        # A key has a body; a header alone is talk about keys (neither finds it in prose).
        "private key": "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(rand(rng, 64, ALNUM + "+/") for _ in range(4))
        + "\n-----END RSA PRIVATE KEY-----",
        "basic auth": f"https://deploy:{rand(rng, 14)}@git.example.com/repo.git",
        "OpenAI": "sk-" + rand(rng, 20) + "T3BlbkFJ" + rand(rng, 20),
        "SendGrid": "SG." + rand(rng, 22) + "." + rand(rng, 43),
        "Twilio": "SK" + rand(rng, 32, string.ascii_lowercase + string.digits),
        "Telegram": rand(rng, 9, string.digits) + ":" + rand(rng, 35),
        "Mailchimp": rand(rng, 32, string.ascii_lowercase + string.digits) + "-us12",
        "Square": "sq0csp-" + rand(rng, 43),
        "PyPI": "pypi-AgEIcHlwaS5vcmc" + rand(rng, 72),
        "Azure storage": "AccountKey=" + rand(rng, 86) + "==",
        "Discord": "M" + rand(rng, 23) + "." + rand(rng, 6) + "." + rand(rng, 27),
        "keyword": 'db_password = "' + rand(rng, 14) + '"',
        "entropy": rand(rng, 40),
    }


def llm_era_keys(rng: random.Random) -> dict[str, str]:
    """Keys of the LLM era, which detect-secrets 1.5 does not know by format."""
    urlsafe = ALNUM + "-_"
    return {
        "OpenAI project": f"sk-proj-{rand(rng, 74, urlsafe)}T3BlbkFJ{rand(rng, 74, urlsafe)}",
        "Anthropic": f"sk-ant-api03-{rand(rng, 93, urlsafe)}AA",
        "Google AI": "AIza" + rand(rng, 35, urlsafe),
        "Hugging Face": "hf_" + rand(rng, 34),
        "Groq": "gsk_" + rand(rng, 52),
        "xAI": "xai-" + rand(rng, 80),
        "GitHub fine-grained": f"github_pat_{rand(rng, 22)}_{rand(rng, 59)}",
        "Stripe test": "sk_test_" + rand(rng, 24),
        "Mistral (assigned)": "MISTRAL_API_KEY=" + rand(rng, 32),
        "AWS secret (assigned)": "aws_secret_access_key = " + rand(rng, 40, ALNUM + "/+"),
        "password in URL": f"postgres://app:Pa$${rand(rng, 10)}@db.internal/prod",
    }


def placements(secret: str) -> list[Callable[[dict[str, Any]], None]]:
    def in_prose(i: dict[str, Any]) -> None:
        i["request"]["messages"].append({"role": "user", "content": f"please use {secret} now"})

    def in_field(i: dict[str, Any]) -> None:
        i["response"]["body"]["debug"] = {"value": secret}

    def in_header(i: dict[str, Any]) -> None:
        i["response"]["headers"]["x-debug"] = secret

    return [in_prose, in_field, in_header]


def recall(interaction: dict[str, Any], kinds: dict[str, str]) -> tuple[int, int, int, list[str]]:
    """(probes, found by naive, found by the guard, what the guard missed that naive found)."""
    total = naive_hits = our_hits = 0
    misses: list[str] = []
    with default_settings():
        baseline = naive_scan(interaction)
    for name, secret in kinds.items():
        for place in placements(secret):
            probe = copy.deepcopy(interaction)
            place(probe)
            with default_settings():
                naive = naive_scan(probe) > baseline
            ours = ours_scan(probe) > 0
            total += 1
            naive_hits += naive
            our_hits += ours
            if naive and not ours:
                misses.append(f"{name} via {place.__name__}")
    return total, naive_hits, our_hits, misses


# ------------------------------------------------------------------ adversarial inputs

B64 = ALNUM + "+/"


def _text(text: str) -> dict[str, Any]:
    return {
        "seq": 1,
        "response": {"status": 200, "body": {"choices": [{"message": {"content": text}}]}},
    }


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def adversarial(rng: random.Random, size: int) -> list[tuple[str, str, dict[str, Any]]]:
    """``(detector, attack, interaction)``: inputs of about ``size`` characters built to make
    one detector's patterns do the most work."""
    zw = "\u200b"
    third = 24
    key_like = rand(rng, 3 * third)
    interleaved = [
        {
            "data": {
                "choices": [{"index": i % 4, "delta": {"content": key_like[i % 72 : i % 72 + 3]}}]
            }
        }
        for i in range(size // 40)
    ]
    cases: list[tuple[str, str, Any]] = [
        (
            "PEM",
            "BEGIN headers, no body",
            _text(_repeat("-----BEGIN RSA PRIVATE KEY-----\n", size)),
        ),
        (
            "PEM",
            "BEGIN + body line, no END",
            _text(_repeat("-----BEGIN PRIVATE KEY-----\n" + "A" * 40 + "\n", size)),
        ),
        (
            "PEM",
            "one BEGIN, header lines of spaces",
            _text(
                "-----BEGIN PRIVATE KEY-----\n" + _repeat("Proc-Type: " + "a " * 30 + "\n", size)
            ),
        ),
        ("PuTTY", "headers, no Private-Lines", _text(_repeat("PuTTY-User-Key-File-2: x\n", size))),
        (
            "PuTTY",
            "one header, a long line",
            _text("PuTTY-User-Key-File-2: " + _repeat("x a", size)),
        ),
        ("JWT", "eyJ run, no dots", _text(_repeat("eyJ", size))),
        ("JWT", "eyJ + run + one dot", _text(_repeat("eyJ" + "a" * 10 + ".", size))),
        ("sk- keys", "sk- run", _text(_repeat("sk-", size))),
        ("sk- keys", "prefix soup", _text(_repeat("sk-ant-hf_gsk_xai-ghp_AIza", size))),
        ("entropy", "base64 run", _text(rand(rng, size, B64))),
        ("entropy", "quoted base64 run", _text('"' + rand(rng, size, B64) + '"')),
        ("entropy", "hex run", _text(rand(rng, size, "0123456789abcdef"))),
        ("assignment", "key= prefixes", _text(_repeat("key=", size))),
        ("assignment", "api_key: prefixes", _text(_repeat("api_key: ", size))),
        ("assignment", "one word of 'key's", _text(_repeat("key", size))),
        ("assignment", "--api-key then a space", _text(_repeat("--api-key x ", size))),
        (
            "assignment",
            "<add key= value= openings",
            _text(_repeat('<add key="X_KEY" value=', size)),
        ),
        ("assignment", "<api_key> and <- openings", _text(_repeat("<api_key>x_key <- ", size))),
        ("assignment", "token + long words", _text(_repeat("token" + "a" * 60 + " ", size))),
        ("keyword", 'password = " openings', _text(_repeat('password = "', size))),
        ("keyword", "== comparisons", _text(_repeat("==", size))),
        ("URL password", ":// runs", _text(_repeat("https://", size))),
        ("URL password", "user: without @", _text(_repeat("a://" + "b" * 20 + ":", size))),
        ("bearer", "Bearer prefixes", _text(_repeat("Bearer ", size))),
        ("bearer", "one Bearer, a long token", _text("bearer " + "a" * size)),
        ("AWS", "AKIA run", _text(_repeat("AKIA", size))),
        ("AWS", "DNA with ACCA", _text(_repeat("ACCAGT", size))),
        (
            "normal form",
            "zero-width-laden key text",
            _text(_repeat(zw.join("sk-proj-abc") + " ", size)),
        ),
        (
            "normal form",
            "Cyrillic look-alikes",
            _text(_repeat("\u0455\u043a-\u0440r\u043e\u0458-", size)),
        ),
        (
            "normal form",
            "Unicode tag characters",
            _text("".join(chr(0xE0000 + ord(c)) for c in _repeat("key=abc ", size // 2))),
        ),
        (
            "normal form",
            "named entities and backslash escapes",
            _text(_repeat('&amp;&quot;\\"\\/sk-', size)),
        ),
        ("pairs", '"X_API_KEY", openings', _text(_repeat('"AZURE_OPENAI_API_KEY", ', size))),
        ("pairs", "name: then value: lines", _text(_repeat("- name: X_KEY\n  value: ab\n", size))),
        ("pairs", "table cells", _text(_repeat("| api_key | ", size))),
        ("pairs", "key, + long blank run", _text("api_key," + " " * size + "x")),
        (
            "pairs",
            "name/value objects",
            {
                "seq": 1,
                "request": {
                    "env": [
                        {"name": f"SERVICE_{n}_API_KEY", "value": "short"}
                        for n in range(size // 50)
                    ]
                },
            },
        ),
        (
            "many secrets",
            "distinct sk- keys, one line",
            _text(
                " ".join(
                    f"sk-proj-{rand(rng, 40)}T3BlbkFJ{rand(rng, 40)}" for _ in range(size // 96)
                )
            ),
        ),
        (
            "many secrets",
            "distinct quoted base64 tokens",
            _text(" ".join('"' + rand(rng, 30, B64) + '"' for _ in range(size // 33))),
        ),
        (
            "wrapped base64",
            "76-character lines (MIME, base64 CLI)",
            _text("\n".join(rand(rng, 76, B64) for _ in range(size // 77))),
        ),
        (
            "wrapped base64",
            "lines of varied width",
            _text("\n".join(rand(rng, rng.randint(40, 70), B64) for _ in range(size // 56))),
        ),
        ("JSON", "deep nesting in a string", _text("[" * (size // 2) + "]" * (size // 2))),
        ("JSON", "repeated keys", _text("{" + _repeat('"a":"sk-x",', size) + '"b":1}')),
        ("stream", "4 interleaved choices", {"seq": 1, "stream": interleaved}),
    ]
    return [(detector, attack, interaction) for detector, attack, interaction in cases]


def environment_near_misses(rng: random.Random, size: int) -> tuple[dict[str, str], dict[str, Any]]:
    """Ten credential variables, and a text full of their prefixes (never a whole value)."""
    values = {f"BENCH_SERVICE_{n}_TOKEN": rand(rng, 32) for n in range(10)}
    pieces = [value[:-1] + " " for value in values.values()]
    return values, _text(_repeat("".join(pieces), size))


def measure_adversarial(quick: bool) -> tuple[float, str]:
    """Print the guard's ms/KB on every adversarial input; return the worst and its name."""
    rng = random.Random(7)
    print(f"{'detector':>13} {'attack':<36} | {'ms/KB at 24 KB':>14} {'ms/KB at 96 KB':>14}")
    worst, worst_name = 0.0, ""
    rows: list[tuple[str, str, list[float]]] = []
    for size in (24_000, 96_000):
        cases = adversarial(rng, size)
        values, near_misses = environment_near_misses(rng, size)
        os.environ.update(values)
        try:
            cases.append(("environment", "near-misses of 10 values", near_misses))
            for index, (detector, attack, interaction) in enumerate(cases):
                kb = len(json.dumps(interaction)) / 1000
                ms, _ = timed(partial(ours_scan, interaction), 1 if quick else 3)
                if size == 24_000:
                    rows.append((detector, attack, [ms / kb]))
                else:
                    rows[index][2].append(ms / kb)
        finally:
            for name in values:
                del os.environ[name]
    for detector, attack, per_kb in rows:
        print(f"{detector:>13} {attack:<36} | " + " ".join(f"{v:14.3f}" for v in per_kb))
        if max(per_kb) > worst:
            worst, worst_name = max(per_kb), f"{detector}: {attack}"
    return worst, worst_name


# ------------------------------------------------------------------ main


def timed(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    runs = []
    result = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000, result


Row = tuple[str, float, int, float, float, int, int]


def measure(label: str, interaction: dict[str, Any], *, quick: bool) -> Row:
    """Guard and naive scan of one interaction, in this run: ms (median) and findings."""
    kb = len(json.dumps(interaction)) / 1000
    fields = sum(1 for _ in leaves(interaction))
    ours_ms, ours_found = timed(lambda: ours_scan(interaction), 9 if kb < 500 else 5)
    if quick and kb > 500:
        return label, kb, fields, ours_ms, float("nan"), ours_found, -1
    with default_settings():
        naive_ms, naive_found = timed(lambda: naive_scan(interaction), 5 if kb < 50 else 1)
    return label, kb, fields, ours_ms, naive_ms, ours_found, naive_found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the naive scans of 1 MB")
    parser.add_argument(
        "--adversarial-only", action="store_true", help="measure only the worst-case inputs"
    )
    args = parser.parse_args()
    rng = random.Random(20261129)
    SecretGuard().scan({})  # import and build the plugins outside the timings
    if args.adversarial_only:
        worst, name = measure_adversarial(args.quick)
        print(f"\nworst case: {worst:.3f} ms/KB ({name}); target 5 ms/KB")
        return 0
    rows = []
    for label, size in (("2 KB", 2_000), ("100 KB", 100_000), ("1 MB", 1_000_000)):
        rows.append(measure(label, make_interaction(size, rng), quick=args.quick))
    shapes = (
        ("code", code_heavy(1_000_000)),
        ("deltas", many_deltas(rng, 20_000)),
        ("small", many_small(50_000)),
    )
    for label, interaction in shapes:
        rows.append(measure(label, interaction, quick=args.quick))

    print(
        f"{'body':>7} {'KB':>7} {'fields':>6} | {'guard ms':>9} {'ms/KB':>7} | "
        f"{'naive ms':>9} {'ms/KB':>7} | {'speed-up':>8} | findings guard/naive"
    )
    for label, kb, fields, ours_ms, naive_ms, ours_found, naive_found in rows:
        print(
            f"{label:>7} {kb:7.1f} {fields:6d} | {ours_ms:9.2f} {ours_ms / kb:7.3f} | "
            f"{naive_ms:9.1f} {naive_ms / kb:7.3f} | {naive_ms / ours_ms:7.1f}x | "
            f"{ours_found}/{naive_found}"
        )

    # Recall on the small body (each probe is one naive scan; the body size does not matter).
    body = make_interaction(2_000, rng)
    failed = False
    print()
    for label, kinds in (
        ("detect-secrets kinds", secrets_detect_secrets_knows(rng)),
        ("LLM-era keys", llm_era_keys(rng)),
    ):
        total, naive_hits, our_hits, misses = recall(body, kinds)
        print(
            f"recall, {len(kinds)} {label} x 3 places (prose, JSON field, header): "
            f"naive {naive_hits}/{total}, guard {our_hits}/{total}"
        )
        if misses:
            print("  guard missed what naive found:", ", ".join(misses))
            failed = True

    print()
    worst, name = measure_adversarial(args.quick)
    ordinary = max(ours_ms / kb for _, kb, _, ours_ms, *_ in rows)
    print(
        f"\nordinary bodies: at most {ordinary:.3f} ms/KB (target 0.5); "
        f"worst adversarial input: {worst:.3f} ms/KB, {name} (target 5)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
