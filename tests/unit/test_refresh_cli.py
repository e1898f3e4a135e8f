"""The CLI's small parts: colour decision, secret masking, progress, the public surface."""

from __future__ import annotations

import io

import pytest

import cassette_refresh
from cassette_refresh.cli import Output, progress_line, use_colour


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stream", "env", "expected"),
    [
        pytest.param(_Terminal(), {}, True, id="tty"),
        pytest.param(_Terminal(), {"NO_COLOR": "1"}, False, id="no-color"),
        pytest.param(_Terminal(), {"TERM": "dumb"}, False, id="dumb-terminal"),
        pytest.param(io.StringIO(), {}, False, id="pipe"),
    ],
)
def test_colour_only_on_a_tty_without_no_color(
    stream: io.StringIO, env: dict[str, str], expected: bool
) -> None:
    """Colour on a terminal only, and never with NO_COLOR set."""
    assert use_colour(stream, env) is expected


@pytest.mark.parametrize(
    "variable", ["OPENAI_API_KEY", "GROQ_API_KEY", "CO_API_KEY", "AWS_SECRET_ACCESS_KEY"]
)
def test_output_masks_every_known_secret(variable: str) -> None:
    """Whatever is printed, the values of every provider's key variable and of the token are
    masked (a provider may echo the key in an error), as sent: stripped (a secret pasted with
    a newline)."""
    out, err = io.StringIO(), io.StringIO()
    env = {variable: "sk-test-123456", "GITHUB_TOKEN": "ghs_abcdef\n", "OTHER": "x"}
    output = Output(env, out, err)
    output.print("key sk-test-123456 token ghs_abcdef x\n")
    assert output.error(RuntimeError("failed with ghs_abcdef")) == 2
    assert out.getvalue() == "key *** token *** x\n"
    assert err.getvalue().startswith("ERROR: failed with ***\nTIP: ")


def test_progress_on_stderr_and_cleared_at_the_end() -> None:
    """Progress counts on stderr, and the line is cleared when the last call finishes."""
    out, err = io.StringIO(), io.StringIO()
    show = progress_line(Output({}, out, err), enabled=True)
    assert show is not None
    show(1, 2)
    show(2, 2)
    assert "re-issuing 1/2" in err.getvalue()
    assert err.getvalue().endswith("\r\033[K")
    assert out.getvalue() == ""
    assert progress_line(Output({}, out, err), enabled=False) is None


def test_public_surface_is_sorted_and_importable() -> None:
    """__all__ is sorted (constants first, as ruff's RUF022 orders it) and every name exists."""
    names = cassette_refresh.__all__
    assert list(names) == sorted(names, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(cassette_refresh, name) for name in names)


def test_an_error_clears_the_progress_line_first() -> None:
    """An error met mid-run does not land at the end of the progress line."""
    out, err = io.StringIO(), io.StringIO()
    output = Output({}, out, err)
    show = progress_line(output, enabled=True)
    assert show is not None
    show(1, 3)
    output.error("the live openai.chat API refused the credentials")
    text = err.getvalue()
    assert "re-issuing 1/3…\r\033[KERROR: the live openai.chat API" in text
    output.error("again")  # cleared once only
    assert err.getvalue().count("\r\033[KERROR") == 1
