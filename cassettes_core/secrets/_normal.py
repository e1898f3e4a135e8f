"""The form of a text that the detectors read: what a person would read, not what is stored.

A key can be written so that no pattern sees it and any reader still does: zero-width spaces or
soft hyphens between its characters, fullwidth or mathematical look-alikes of its letters,
Cyrillic letters that look Latin, combining marks, control characters, escapes, or the
invisible Unicode "tag" characters that spell ASCII out of sight. :func:`normalise` folds all
of that away: escapes decoded (``\\u0073``, ``\\x73``, ``&#115;``, ``&amp;``, ``\\/``),
compatibility decomposition (NFKD, which is NFKC's folding without recomposing, so that
accents come off as marks), then format and control characters, marks and blank letters
(Hangul fillers) removed, tags turned back into the ASCII they spell, and look-alikes mapped
to the Latin letter they imitate.
Line breaks and tabs stay, since they separate tokens.

The stored bytes are never changed: the guard scans this form *beside* the stored one and
reports at the stored string's place. :func:`normalise_mapped` also returns, for each character
of the normal form, the offset of the character it came from, so that a redaction can mask the
stored text where the normal form shows a key.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["needs_normalising", "normalise", "normalise_mapped"]

# Control characters an ASCII text may hold besides tab and line feed (carriage returns too:
# "sk-\r…" hides a key as well as a zero-width space does).
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# Letters of other scripts that look like Latin ones, and the dashes and quotes that look like
# ASCII punctuation (what NFKD leaves as it is).
_LOOK_ALIKES = {
    **dict.fromkeys("\u0430\u1ea1\u0105\u0251\u03b1", "a"),
    **dict.fromkeys("\u0410\u0391", "A"),
    **dict.fromkeys("\u0412\u0392", "B"),
    **dict.fromkeys("\u0441\u03f2", "c"),
    **dict.fromkeys("\u0421\u03f9", "C"),
    **dict.fromkeys("\u0501", "d"),
    **dict.fromkeys("\u0435\u04bd", "e"),
    **dict.fromkeys("\u0415\u0395", "E"),
    **dict.fromkeys("\u04bb", "h"),
    **dict.fromkeys("\u041d\u0397", "H"),
    **dict.fromkeys("\u0456\u03b9", "i"),
    **dict.fromkeys("\u0406\u0399\u04c0", "I"),
    **dict.fromkeys("\u0458", "j"),
    **dict.fromkeys("\u0408", "J"),
    **dict.fromkeys("\u03ba\u043a", "k"),
    **dict.fromkeys("\u041a\u039a", "K"),
    **dict.fromkeys("\u217c", "l"),
    **dict.fromkeys("\u041c\u039c", "M"),
    **dict.fromkeys("\u039dN", "N"),
    **dict.fromkeys("\u043e\u03bf\u03c3", "o"),
    **dict.fromkeys("\u041e\u039f", "O"),
    **dict.fromkeys("\u0440\u03c1", "p"),
    **dict.fromkeys("\u0420\u03a1", "P"),
    **dict.fromkeys("\u051b", "q"),
    **dict.fromkeys("\u0455", "s"),
    **dict.fromkeys("\u0405", "S"),
    **dict.fromkeys("\u0422\u03a4", "T"),
    **dict.fromkeys("\u03c5\u057d", "u"),
    **dict.fromkeys("\u03bd", "v"),
    **dict.fromkeys("\u051d", "w"),
    **dict.fromkeys("\u0445\u03c7", "x"),
    **dict.fromkeys("\u0425\u03a7", "X"),
    **dict.fromkeys("\u0443\u03b3", "y"),
    **dict.fromkeys("\u0423\u03a5", "Y"),
    **dict.fromkeys("\u0396Z", "Z"),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
}
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E  # Unicode tags that spell printable ASCII
_KEPT_CONTROLS = frozenset("\t\n")
# Letters and symbols that render as nothing or as blank space without being spaces: the Hangul
# fillers (default-ignorable, yet letters) and the blank Braille pattern.
_BLANK_LETTERS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800})


class _Fold(dict[int, str | None]):
    """``str.translate``'s table, filled on demand: each code point is classified once."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        folded: str | None
        if char in _LOOK_ALIKES:
            folded = _LOOK_ALIKES[char]
        elif _TAG_FIRST <= code <= _TAG_LAST:
            folded = chr(code - 0xE0000)
        elif char in _KEPT_CONTROLS:
            folded = char
        elif code in _BLANK_LETTERS:
            folded = None
        elif unicodedata.category(char) in {"Cf", "Cc", "Mn", "Me", "Zl", "Zp"}:
            folded = None  # invisible: zero-width, soft hyphen, BOM, bidi controls, marks
        else:
            folded = char
        self[code] = folded
        return folded


_FOLD = _Fold()


def needs_normalising(text: str) -> bool:
    """Whether :func:`normalise` could change ``text`` (cheap: one pass in C for ASCII)."""
    if not text.isascii() or _ASCII_HIDDEN.search(text) is not None:
        return True
    return ("\\" in text or "&" in text) and _ESCAPE.search(text) is not None


def normalise(text: str) -> str:
    """``text`` as the detectors read it: escapes (``\\u0073``, ``&#x73;``) decoded,
    look-alikes folded, invisible characters removed."""
    if ("\\" in text or "&" in text) and _ESCAPE.search(text) is not None:
        text = _ESCAPE.sub(_decoded, text)
    if text.isascii():
        return _ASCII_HIDDEN.sub("", text)
    return unicodedata.normalize("NFKD", text).translate(_FOLD)


def _decoded(escape: re.Match[str]) -> str:
    code = _code(escape.group(0))
    return chr(code) if code is not None else escape.group(0)


def _code(escape: str) -> int | None:
    # The code point an escape names (None past the last one, or for a surrogate).
    named = _NAMED.get(escape)
    if named is not None:
        return ord(named)
    if escape.startswith("&#"):
        digits = escape[2:-1]
        code = int(digits[1:], 16) if digits[:1] in {"x", "X"} else int(digits)
    else:
        code = int(escape[2:], 16)
    return code if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


def normalise_mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """:func:`normalise` character by character, with the span of ``text`` that each character
    of the normal form comes from.

    Escapes as ``repr`` writes them (``\\u200b``, ``\\x00``) count as the character they name,
    so that a message quoting a value through ``repr`` is read as the value itself.
    """
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    position = 0
    while position < len(text):
        char, width = _unit(text, position)
        for piece in normalise(char):
            out.append(piece)
            origin.append((position, position + width))
        position += width
    return "".join(out), origin


_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|/)"
    r"|&(?:#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6})|amp|quot|apos|lt|gt);"
)
# The escapes that stand for one character by name: JSON's escaped slash (base64 keys hold
# slashes), and HTML's named entities. (Not ``\\"`` and ``\\\\``: code is full of them, and
# reading each such file twice would double the guard's cost on code.)
_NAMED = {
    "\\/": "/",
    "&amp;": "&",
    "&quot;": '"',
    "&apos;": "'",
    "&lt;": "<",
    "&gt;": ">",
}


def _unit(text: str, position: int) -> tuple[str, int]:
    # One character of text, or one escape sequence standing for one.
    if text[position] in "\\&":
        escape = _ESCAPE.match(text, position)
        if escape is not None:
            code = _code(escape.group(0))
            if code is not None:
                return chr(code), escape.end() - position
    return text[position], 1
