"""What values look like: placeholders, example passwords, credentials, masked previews.

Documentation and code answers stand in for real keys with ``sk-...``, ``<YOUR_API_KEY>``,
``${API_KEY}`` or ``postgres:postgres@``; those are not secrets. A value in an auth position
(``api_key`` field, ``?key=`` parameter) is a credential when it has the shape of one. And every
finding is shown through :func:`mask`, which identifies a value to its owner without disclosing it.
"""

from __future__ import annotations

import itertools
import re

_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=:-]+")
_HEX = re.compile(r"[0-9a-fA-F]+")

# Placeholder shapes, each matched against the whole value (a real password may well hold a
# "$", a "{" or the word "here": only a value that *is* a template, a mask or a description of a
# key is a stand-in).
_TEMPLATE = re.compile(
    r"[A-Za-z0-9_.-]{0,16}"  # a prefix may stay literal: sk-<your key>, sk-proj-${KEY}
    r"(?:\$\{[^{}]*\}"  # ${VAR}, ${VAR:-default}
    r"|\$\([^()]*\)"  # $(command)
    r"|\{\{[^{}]*\}\}"  # {{ var }}, {{ secrets.KEY }}
    r"|\{[A-Za-z_][A-Za-z0-9_.\[\]'\"]*\}"  # {var}, {config.key} (format strings)
    r"|<[^<>]{1,80}>"  # <YOUR_API_KEY>, <redacted>
    r"|\[[A-Za-z][A-Za-z _-]{0,79}\])"  # [YOUR_KEY], [REDACTED]
    r"[A-Za-z0-9_.-]{0,16}"
)
_VARIABLE = re.compile(
    r"\$[A-Z_][A-Z0-9_]*"  # $API_KEY
    r"|\$[a-z_][a-z_]*"  # $token (a name without digits)
    r"|%[A-Za-z_][A-Za-z0-9_]*%"  # %API_KEY%
    r"|(?:process\.env|import\.meta\.env|os\.environ|env)[.\[][^\s]*"
)
# An elided value: sk-..., sk-proj-abc...xyz, sk-p…lxJ4 (our own previews).
_ELIDED = re.compile(r"[A-Za-z0-9_-]*(?:\.{3,}|…)[A-Za-z0-9_-]*")
# A masked value: xxxx, sk-xxxxxxxx, ****1234, AKIAXXXXXXXXXXXXXXXX, XXXX-XXXX-XXXX.
_MASKED = re.compile(
    r"(?:[A-Za-z0-9]{1,12}[-_.:])*(?:AKIA|ASIA)?[xX*•#]{3,}(?:[-_.][xX*•#]{3,})*[A-Za-z0-9]{0,4}"
)
# "your_api_key_here", "insert-token", "paste your key here": a description of a key.
_DESCRIBED = re.compile(
    r"(?:your|my|insert|enter|paste|replace|put|add|fill)(?:[-_ ]+[A-Za-z]+)+"
    r"|[A-Za-z]+(?:[-_ ]+[A-Za-z]+)*[-_ ]+(?:here|goes[-_ ]here)",
    re.IGNORECASE,
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORD_SPLIT = re.compile(r"[-_ .:/]+")
# Values made only of these words name or describe a credential; they do not hold one.
_VOCABULARY = """
    your my the a an here goes insert enter put paste replace change me changeme placeholder
    redacted removed hidden masked omitted scrubbed dummy fake sample example examples test
    testing demo todo tbd fixme not real notreal none null nil undefined empty unset unknown na
    string str text value values foo bar baz secret secrets password passwd pass pwd passphrase
    key keys api apikey token tokens access auth bearer basic client id private public
    credential credentials app user username admin db database service account new old default
    sk pk live prod dev staging openai anthropic mistral cohere google gemini azure aws github
    hf huggingface groq stripe slack
"""
_PLACEHOLDER_VOCABULARY = frozenset(_VOCABULARY.split())
_EXAMPLE_PASSWORDS = frozenset(
    {
        "password",
        "pass",
        "passwd",
        "pwd",
        "secret",
        "changeme",
        "test",
        "testing",
        "example",
        "guest",
        "admin",
        "root",
        "user",
        "postgres",
        "mysql",
        "redis",
        "mongo",
        "rabbitmq",
        "minio",
        "minioadmin",
        "sa",
        "default",
        "demo",
        "dev",
        "local",
        "123456",
        "12345678",
        "qwerty",
        "letmein",
    }
)


def is_placeholder(value: str) -> bool:
    """True for stand-ins that documentation and code use instead of a real secret.

    The whole value must have a placeholder's shape: a template (``${API_KEY}``, ``$TOKEN``,
    ``<your-key>``, ``{{ secrets.KEY }}``), a mask or an elision (``xxxx``, ``***``,
    ``sk-...``), a variable's name (``OPENAI_API_KEY``), or words that describe a key
    (``your_api_key_here``, ``changeme``, ``dummy-token``). A value that merely *contains* a
    ``$``, a brace or the word "here" (``Pa$$w0rd2024``, ``wherearemykeys42``) is not one.
    """
    text = value.strip()
    if not text or len(set(text.lower())) <= 2:
        return True
    if any(
        shape.fullmatch(text) is not None
        for shape in (_ENV_NAME, _TEMPLATE, _VARIABLE, _ELIDED, _MASKED, _DESCRIBED)
    ):
        return True
    words = _WORD_SPLIT.split(text.lower().strip("'\"`()[]{}<>"))
    return all(word in _PLACEHOLDER_VOCABULARY for word in words if word)


def is_prose(value: str) -> bool:
    """Whether ``value`` is words of prose ("Set in dashboard", "see vault"), not a token.

    Two or more words separated by spaces, each made of letters (with its punctuation).
    """
    words = value.split()
    return len(words) >= 2 and all(word.strip(_PUNCTUATION).isalpha() for word in words)


_PUNCTUATION = ".,;:!?'\"()"


def is_example_password(password: str, *, user: str = "") -> bool:
    """True for the passwords of examples: ``postgres:postgres@``, ``user:password@``, ``:***@``."""
    low = password.lower()
    return low == user.lower() or low in _EXAMPLE_PASSWORDS or is_placeholder(password)


_SCHEME = re.compile(r"(?:bearer|basic|token)\s+", re.IGNORECASE)


def strip_scheme(value: str) -> str:
    """``value`` without surrounding space and an auth scheme (``Bearer abc`` → ``abc``)."""
    text = value.strip()
    match = _SCHEME.match(text)
    return text[match.end() :].strip() if match else text


def looks_like_credential(value: str, *, password: bool = False, strict: bool = False) -> bool:
    """Whether a value in an auth position (``api_key``, ``?key=``) has the shape of a secret.

    Passwords: six characters or more that are not a placeholder. Tokens: sixteen or more token
    characters mixing letters and digits, or letters of random case (Mistral, Cohere and Azure
    keys have no prefix), or thirty-two or more hex digits. ``strict`` (for generic names such
    as ``key``) asks for twenty characters mixing upper case, lower case and digits, or the
    long hex string.
    """
    text = strip_scheme(value)
    if is_placeholder(text):
        return False
    if password:
        return len(text) >= 6
    if len(text) < 16 or _TOKEN_CHARS.fullmatch(text) is None:
        return False
    if len(text) >= 32 and _HEX.fullmatch(text):
        return True
    # A random key has no digit one time in a few hundred (a 32-character Mistral key: 0.4 %);
    # letters that are about half upper case are random too, where camelCase words are not.
    has_digit = any(c.isdigit() for c in text) or randomly_cased(text)
    if strict:
        return (
            len(text) >= 20
            and has_digit
            and any(c.islower() for c in text)
            and any(c.isupper() for c in text)
        )
    return has_digit and any(c.isalpha() for c in text)


def randomly_cased(text: str) -> bool:
    """Twenty-four letters or more, about half of them upper case: random, where camelCase
    words are not."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 24:
        return False
    upper = sum(c.isupper() for c in letters) / len(letters)
    return 0.3 <= upper <= 0.7


def mask(value: str) -> str:
    """A preview that identifies a value to its owner without disclosing it.

    At most four characters of each end, never more than a third of the value, and nothing at
    all of values shorter than six characters: ``sk-p…9xQz``.
    """
    text = " ".join(value.split())  # no line breaks or tabs in a one-line report
    n = len(text)
    keep = 4 if n >= 24 else 2 if n >= 12 else 1 if n >= 6 else 0
    if keep == 0:
        return f"…({n} chars)"
    return f"{text[:keep]}…{text[-keep:]}"


# The example keys of AWS's documentation (AKIAIOSFODNN7EXAMPLE and its secret): public values.
_DOCUMENTED_EXAMPLE = re.compile(
    r"(?:AKIA|ASIA)[A-Z0-9]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY|[A-Za-z0-9/+]{33}EXAMPLE"
)


def is_documented_example(value: str) -> bool:
    """Whether ``value`` is a key that vendors publish in their documentation as an example."""
    return _DOCUMENTED_EXAMPLE.fullmatch(value) is not None


def is_alphabet(value: str) -> bool:
    """Whether ``value`` is an alphabet written out (``ABCDEFGHIJKLMNOPQRSTUVWXYZ234567``, the
    base32 and base64 alphabets of code): mostly runs of consecutive characters."""
    steps = sum(1 for a, b in itertools.pairwise(value) if ord(b) == ord(a) + 1)
    return len(value) > 1 and steps >= 0.8 * (len(value) - 1)


_NUCLEOTIDES = frozenset("ACGTUN")
# The one-letter amino-acid codes: a key id's base32 body (A-Z, 2-7) is all of them, without a
# digit, one time in two thousand.
_AMINO_ACIDS = frozenset("ACDEFGHIKLMNPQRSTVWY")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]++")


def is_sequence_fragment(value: str, line: str = "") -> bool:
    """Whether an AWS-key-id-shaped value is a piece of a DNA, RNA or protein sequence.

    ``ACCA`` is an AWS prefix and a codon: a value of nucleotide letters only is a sequence, so
    is one whose body holds only amino-acid letters (a protein), and so is one found only inside
    a longer run of letters and digits (a key id is a token of its own).
    """
    if set(value) <= _NUCLEOTIDES or set(value[4:]) <= _AMINO_ACIDS:
        return True
    if not line:
        return False
    return all(
        len(run.group(0)) > len(value) for run in _ALNUM_RUN.finditer(line) if value in run.group(0)
    )
