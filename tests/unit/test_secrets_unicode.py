"""What Unicode hides: a key laced with invisible or blank characters, or written in look-alike
letters, is refused in every place; honest non-ASCII text passes.

Every secret is a fake generated at run time; every refusal checks that no report prints the
value whole, in the stored form or in the normal form.
"""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core.secrets import fold, redact
from cassettes_core.secrets._text import fold_mapped, needs_folding
from tests.helpers.fake_secrets import (
    assert_masked,
    fullwidth,
    openai_key,
    reply,
    scan,
    text_in_response,
)

# Characters that render as nothing, or change nothing a reader sees: zero-width, soft hyphen,
# bidi and control characters, and letters that render as nothing (default-ignorable, yet not
# format characters: the Hangul fillers, the blank Braille pattern).
INVISIBLE = list("\u200b\u200c\u200d\u2060\ufeff\xad\u180e\u202e\x00\r\x1b")
BLANK_LETTERS = list("\u115f\u1160\u3164\uffa0\u2800")


@pytest.mark.parametrize(
    "char", INVISIBLE + BLANK_LETTERS, ids=[f"U+{ord(c):04X}" for c in INVISIBLE + BLANK_LETTERS]
)
def test_a_key_laced_with_invisible_characters_is_refused(char: str) -> None:
    """Between the key's characters, in a finding named for the key's format, and masked in
    a redaction too."""
    key = openai_key()
    laced = char.join(key)
    findings = scan(text_in_response(f"the key is {laced} ok"))
    assert [f.path for f in findings] == ["response.body.choices[0].message.content"]
    assert [f.kind for f in findings] == [
        "OpenAI project API key (hidden by look-alike, invisible or escaped characters)"
    ]
    assert_masked(findings, key, laced)
    assert "sk-p" not in redact(laced) or key not in fold(redact(laced))


def _cyrillic(text: str) -> str:
    return text.translate(
        str.maketrans("aceopxsk", "\u0430\u0441\u0435\u043e\u0440\u0445\u0455\u043a")
    )


def _bold(text: str) -> str:
    def one(c: str) -> str:
        if "a" <= c <= "z":
            return chr(0x1D41A + ord(c) - ord("a"))
        if "A" <= c <= "Z":
            return chr(0x1D400 + ord(c) - ord("A"))
        return c

    return "".join(one(c) for c in text)


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def _marks(text: str) -> str:
    return "\u0301".join(text)


@pytest.mark.parametrize(
    "disguise",
    [fullwidth, _cyrillic, _bold, _tags, _marks],
    ids=["fullwidth", "cyrillic", "math-bold", "unicode-tags", "combining-marks"],
)
def test_a_key_in_look_alike_characters_is_refused(disguise: Any) -> None:
    """Fullwidth, Cyrillic, mathematical letters, invisible tags, combining marks: folded."""
    key = openai_key()
    disguised = disguise(key)
    assert key not in disguised
    findings = scan(text_in_response(f"use {disguised} here"))
    assert findings
    assert_masked(findings, key, disguised)


def test_a_disguised_key_is_refused_in_headers_keys_and_queries() -> None:
    """The normal form is read in every place a string is stored."""
    key = openai_key()
    laced = "\u200b".join(key)
    assert scan({"seq": 1, "response": {"headers": {"x-echo": laced}}})
    assert scan({"seq": 1, "endpoint": "/v1/x?trace=" + fullwidth(key)})
    findings = scan({"seq": 1, "response": {"body": {laced: 1}}})
    assert findings
    assert_masked(findings, key, laced)


def test_normalising_keeps_ordinary_text_and_maps_back() -> None:
    """ASCII without control characters is left alone; the map points at the stored text."""
    assert not needs_folding("plain text\twith tabs\nand lines")
    assert fold("caf\u00e9 \uff21\u200bB") == "cafe AB"
    text = "a\u200bb\\u200bc"
    normal, origin = fold_mapped(text)
    assert normal == "abc"
    assert [text[start:end] for start, end in origin] == ["a", "b", "c"]


def test_honest_non_ascii_text_passes() -> None:
    """Prose in other scripts, accents, emoji, fullwidth punctuation, Hangul (composed and with
    a filler between words): nothing flagged."""
    text = (
        "Привет, как дела? Ответ: 42. Ελληνικά κείμενα. 日本語のテキスト、全角：ＡＢＣ１２３。"
        " Café, naïve, coöperate. \u200bZero-width joiners in emoji: "
        "\U0001f468\u200d\U0001f469\u200d\U0001f467."
    )
    assert scan(text_in_response(text)) == []
    assert scan(reply("안녕하세요, 오늘 서울의 날씨는 맑습니다.\u3164내일은 비가 옵니다.")) == []
