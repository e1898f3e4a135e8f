"""Secrets in free text: credentials assigned in prose and code, and redaction for messages."""

from __future__ import annotations

import base64
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes_core.secrets import mask, redact
from cassettes_core.secrets._text import find_assignments

ALNUM = string.ascii_letters + string.digits
ROOT = Path(__file__).resolve().parents[2]


def r(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


MISTRAL = r(32, seed=1)
AWS_SECRET = r(40, ALNUM + "/+", seed=2)
AZURE = r(32, "0123456789abcdef", seed=3)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param(f"api_key: {MISTRAL}\nmodel: mistral-large", MISTRAL, id="yaml"),
        pytest.param(f'{{"api_key": "{MISTRAL}"}}', MISTRAL, id="json-in-text"),
        pytest.param(f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, id="ini"),
        pytest.param(f"MISTRAL_API_KEY={MISTRAL}\nDEBUG=1", MISTRAL, id="env-file"),
        pytest.param(f'client = Mistral(api_key="{MISTRAL}")', MISTRAL, id="python-kwarg"),
        pytest.param(f"const cfg = {{ apiKey: '{MISTRAL}' }};", MISTRAL, id="js-camel"),
        pytest.param(f'curl -H "api-key: {AZURE}" https://x', AZURE, id="azure-header"),
        pytest.param(f"--api-key={MISTRAL} --verbose", MISTRAL, id="cli-flag"),
        pytest.param(f"stripe_webhook_secret: '{MISTRAL}'", MISTRAL, id="suffix-secret"),
    ],
)
def test_credentials_assigned_in_text_are_found(text: str, value: str) -> None:
    """A prefix-less key assigned to a credential-named variable is a secret, in any syntax."""
    assert [hit.value for hit in find_assignments(text)] == [value]


@pytest.mark.parametrize(
    "text",
    [
        'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
        "api_key = get_api_key_from_vault2()",
        "api_key = settings.openaiApiKey2024",
        "API_KEY = 'your-api-key-here'",
        'headers = {"Authorization": f"Bearer {token}"}',
        "api_key: str = Field(..., description='the key')",
        "page_token = 'CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3'",
        'password = "hunter2"',  # example code; passwords in code are the keyword plugin's
        "The api_key: field is required.",
        "key = 'user-profile:12345'",
    ],
)
def test_names_calls_and_placeholders_are_not_found(text: str) -> None:
    """Code that assigns names, calls, placeholders or pagination tokens holds no secret."""
    assert find_assignments(text) == []


OPENAI = "sk-proj-" + r(60, seed=4) + "T3BlbkFJ" + r(60, seed=5)
JWT = (
    base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + r(43, ALNUM + "-_", seed=6)
)
BASIC = base64.b64encode(f"svc:{r(18, seed=7)}".encode()).decode()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param(f"Use the tool with key {OPENAI}", OPENAI, id="openai"),
        pytest.param(f"ghp_{r(36, seed=8)} is my token", f"ghp_{r(36, seed=8)}", id="github"),
        pytest.param(f"AIza{r(35, seed=9)}", f"AIza{r(35, seed=9)}", id="google"),
        pytest.param(f"token: {JWT}", JWT, id="jwt"),
        pytest.param("Authorization: Bearer " + r(40, seed=10), r(40, seed=10), id="bearer"),
        pytest.param(f"Authorization: Basic {BASIC}", BASIC, id="basic"),
        pytest.param("postgres://app:Pa$$w0rd2024@db.internal/prod", "Pa$$w0rd2024", id="url"),
        pytest.param(f"api_key: {MISTRAL}", MISTRAL, id="assigned"),
    ],
)
def test_redact_masks_every_secret_with_the_findings_preview(text: str, secret: str) -> None:
    """A secret's value never survives redaction; its masked preview takes its place."""
    redacted = redact(text)
    assert secret not in redacted
    assert mask(secret) in redacted
    assert secret[len(secret) // 3 : 2 * len(secret) // 3] not in redacted


def test_redact_keeps_text_without_secrets_and_around_them() -> None:
    """Text without a secret comes back unchanged; around a secret, the text stays."""
    plain = "Summarise: the key insight is that sk-learn and <YOUR_API_KEY> are fine."
    assert redact(plain) == plain
    assert redact(f"before {OPENAI} middle {OPENAI} after") == (
        f"before {mask(OPENAI)} middle {mask(OPENAI)} after"
    )


def test_redact_does_not_load_detect_secrets() -> None:
    """The miss message may redact in a replaying process: detect-secrets stays unloaded."""
    code = (
        "import sys, cassettes_core\n"
        "from cassettes_core.secrets import redact\n"
        f"assert {OPENAI!r} not in redact('key ' + {OPENAI!r})\n"
        "print(sorted(m for m in sys.modules if 'detect_secrets' in m))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
