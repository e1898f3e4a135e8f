"""`cassettes show --html FILE`: one self-contained page, parsed always, rendered in chromium
when it is installed; an attacker's cassette renders as text."""

from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse
from cassettes_core.cli import main
from cassettes_core.store import Manifest, render
from cassettes_core.testing.emulator import Emulator
from tests.helpers.recorded import record_anthropic, record_openai

CHROMIUM = Path("/usr/bin/chromium")
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                 "source", "track", "wbr"})  # fmt: skip
ATTACKS = (
    "</div></pre><script>document.title='pwned'</script><div>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "javascript:alert(1)",
    '" onmouseover="alert(1)" x="',
    "<style>body{display:none}</style>",
    "safe \u202eevil\u202c text",
    "<!-- comment --> ]]> <![CDATA[ x ]]>",
)


class PageCheck(HTMLParser):
    """Every tag balanced; no script, no event handler, nothing fetched from anywhere."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("script", "iframe", "object", "embed", "link", "img", "base", "form"):
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}=")
            if name in ("src", "href", "action", "srcset", "background"):
                self.problems.append(f"{tag} {name}={value}")
            if value and "javascript:" in value.lower():
                self.problems.append(f"{tag} {name}={value}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_page(page: str) -> PageCheck:
    checker = PageCheck()
    checker.feed(page)
    checker.close()
    assert checker.problems == []
    assert checker.stack == []
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert "http://" not in page
    assert "https://" not in page
    return checker


@pytest.fixture(scope="module")
def recorded(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("recorded")
    return {
        "openai": record_openai(folder / "openai.yaml", emulator),
        "anthropic": record_anthropic(folder / "anthropic.yaml", emulator),
    }


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A cassette whose prompt, answer, tool call and error hold markup, scripts, javascript:
    URLs, attribute breakouts and a bidi override."""
    items = []
    for seq, attack in enumerate(ATTACKS, start=1):
        body = {"model": "m", "messages": [{"role": "user", "content": f"ask {attack}"}]}
        request = LLMRequest.from_body("openai.chat", body)
        call = {"function": {"name": f"tool{attack}", "arguments": attack}}
        message = {"role": "assistant", "content": f"say {attack}", "tool_calls": [call]}
        answer = {"choices": [{"message": message}]}
        response = LLMResponse(body=answer)
        items.append(Interaction(seq, request.digest(), request, response=response))
    path = tmp_path / "hostile.yaml"
    path.write_text(render(Manifest.current(), items), encoding="utf-8")
    return path


def test_page_of_a_recorded_conversation(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page holds every turn: the question, the answer, tool calls and results, the stream
    assembled, the error, tokens; and it is well-formed with no script and nothing external.
    --html - writes the page to standard output; --html DIR is an error."""
    page_path = tmp_path / "openai.html"
    assert main(["show", str(recorded["openai"]), "--html", str(page_path)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = page_path.read_text(encoding="utf-8")
    text = "".join(check_page(page).text)
    assert "Capital of France?" in text
    assert 'get_weather({"city":"Paris"})' in text
    assert "sunny, 21 C" in text
    assert "streamed: " in text
    assert "HTTP 429" in text
    assert "41 tokens (24 in, 17 out)" in text
    assert page.count("<article") == 6
    assert "Content-Security-Policy" in page
    assert main(["show", str(recorded["anthropic"]), "--html", "-"]) == 0
    text = "".join(check_page(capsys.readouterr().out).text)
    assert "tool resulttoolu_" in text
    assert "Weather in Lyon?" in text
    assert main(["show", str(recorded["openai"]), "--html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR: ")
    assert "\nTIP: " in err


def test_hostile_strings_are_text(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every attack string comes back, character for character, as the page's text; none of it
    becomes a tag or an attribute; the bidi override is shown as a mark."""
    assert main(["show", str(hostile), "--html", "-"]) == 0
    page = capsys.readouterr().out
    checker = check_page(page)
    text = "".join(checker.text)
    for attack in ATTACKS:
        shown = attack.replace("\u202e", "\\u202e").replace("\u202c", "\\u202c")
        assert f"ask {shown}" in text
        assert f"say {shown}" in text
    assert "\u202e" not in page
    assert set(checker.tags) <= {
        "html", "head", "meta", "title", "style", "body", "header", "h1", "p", "main",
        "article", "h2", "div", "span", "details", "summary", "pre",
    }  # fmt: skip


def _chromium(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed")
def test_hostile_page_in_a_real_browser(
    hostile: Path, recorded: dict[str, Path], tmp_path: Path
) -> None:
    """Headless chromium renders the hostile page: no script ran (the title is the cassette's,
    not 'pwned'), every attack string is in the DOM as text, and a screenshot renders."""
    page = tmp_path / "hostile.html"
    assert main(["show", str(hostile), "--html", str(page)]) == 0
    done = _chromium("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "pwned</title>" not in dom
    assert "<title>hostile.yaml</title>" in dom.replace(str(tmp_path) + "/", "")
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom
    rendered = PageCheck()
    rendered.feed(dom)
    assert rendered.problems == []  # no script, img or event handler in the live DOM
    shot = tmp_path / "shot.png"
    conversation = tmp_path / "openai.html"
    assert main(["show", str(recorded["openai"]), "--html", str(conversation)]) == 0
    size = "--window-size=1000,1400"
    done = _chromium(f"--screenshot={shot}", size, conversation.as_uri(), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
