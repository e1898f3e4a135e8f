"""Integers past Python's 4,300-digit limit are refused at load, however they are written.

A decimal integer that long cannot even be read; one written in hex, octal, binary or YAML's
base 60 (``1:59:59``) reads fine but cannot be turned back into text, so it would fail later,
as a foreign ``ValueError``, in the digest, the scan, a rehash or a replayed error message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes_core import CassetteFormatError, load_cassette
from cassettes_core.cli import main
from cassettes_core.store import MAX_INT_DIGITS, Manifest, render
from tests.helpers.factories import interaction

GOOD = render(Manifest.current(), [interaction(1), interaction(2, "second")])
ERROR_ANSWER = (
    "  response:\n    status: 200\n    headers:\n      content-type: application/json\n"
    "    body:\n      choices:\n      - index: 0\n        message:\n          role: assistant\n"
    "          content: answer 2\n"
)

# Each of these is an integer of more than 4,300 decimal digits.
HUGE = {
    "hex": "0x" + "f" * 4000,
    "negative-hex": "-0x" + "f" * 4000,
    "octal": "0" + "7" * 5000,
    "binary": "0b" + "1" * 15000,
    "base-60": "1" + ":59" * 2500,
    "decimal-underscores": "1" + "_0" * 4300,
}
# Where in a cassette an integer may stand.
PLACES = {
    "semantic-field": ("    model: gpt-4o\n", "    model: {}\n"),
    "param": ("temperature: 0.2", "temperature: {}"),
    "body": ("- index: 0", "- index: {}"),
    "status": ("status: 200", "status: {}"),
    "seq": ("- seq: 2\n", "- seq: {}\n"),
    "duration": ("duration_ms: 12", "duration_ms: {}"),
    "error-status": (ERROR_ANSWER, "  error:\n    kind: http_status\n    status: {}\n"),
    "stream-data": (ERROR_ANSWER, "  stream:\n  - data: {{n: {}}}\n"),
    "manifest": ("  python:", "  build: {}\n  python:"),
    "header": ("content-type: application/json", "x-n: {}"),
}


def _with(place: str, number: str) -> str:
    old, new = PLACES[place]
    assert old in GOOD, old
    return GOOD.replace(old, new.format(number), 1)


CASES = [
    pytest.param(_with(place, number), n % 7 == 0, id=f"{place}-{form}")
    for n, (place, (form, number)) in enumerate(
        (place, item) for place in PLACES for item in HUGE.items()
    )
]


@pytest.mark.parametrize(("text", "commands"), CASES)
def test_a_huge_integer_in_any_base_is_a_format_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, commands: bool
) -> None:
    """Loading names the file, the line and the limit; on a sample of the cases `cassettes
    scan` and `cassettes rehash` exit 2 with an ERROR line, the file untouched."""
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    assert str(path) in str(caught.value)
    assert f"at most {MAX_INT_DIGITS}" in str(caught.value)
    assert caught.value.location
    assert "line" in caught.value.location
    for command in ("scan", "rehash") if commands else ():
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ERROR: cassette ")
        assert "Traceback" not in err
        assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("number", "past"),
    [
        ("9" * MAX_INT_DIGITS, "1" + "0" * MAX_INT_DIGITS),
        ("-" + "9" * MAX_INT_DIGITS, None),
        (hex(10**MAX_INT_DIGITS - 1), hex(10**MAX_INT_DIGITS)),
        ("1" + "_0" * (MAX_INT_DIGITS - 1), None),
    ],
    ids=["decimal", "negative", "hex", "underscores"],
)
def test_an_integer_of_exactly_the_limit_loads_and_one_digit_more_is_refused(
    tmp_path: Path, number: str, past: str | None
) -> None:
    """The README's limit holds at its boundary: 4,300 digits load, in any base."""
    path = tmp_path / "c.yaml"
    path.write_text(_with("body", number), encoding="utf-8")
    loaded = load_cassette(path)
    assert loaded is not None
    body = loaded.interactions[0].response.body  # type: ignore[union-attr]
    assert len(str(abs(body["choices"][0]["index"]))) == MAX_INT_DIGITS
    assert main(["scan", str(path)]) == 0
    assert main(["rehash", str(path)]) == 0
    assert load_cassette(path) is not None
    if past is not None:
        path.write_text(_with("body", past), encoding="utf-8")
        with pytest.raises(CassetteFormatError, match=f"at most {MAX_INT_DIGITS}"):
            load_cassette(path)


@pytest.mark.parametrize("status", ["0", "-5", "99", "1000", "99999999999999999999"])
@pytest.mark.parametrize("place", ["status", "error-status"])
def test_a_status_that_is_no_http_status_is_a_format_error(
    tmp_path: Path, place: str, status: str
) -> None:
    """HTTP statuses have three digits: anything else was edited by hand and would replay as
    an answer no server sends."""
    path = tmp_path / "c.yaml"
    path.write_text(_with(place, status), encoding="utf-8")
    with pytest.raises(CassetteFormatError, match="HTTP status"):
        load_cassette(path)


@pytest.mark.parametrize("status", ["100", "599", "999"])
def test_three_digit_statuses_load(tmp_path: Path, status: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(_with("error-status", status), encoding="utf-8")
    assert load_cassette(path) is not None
