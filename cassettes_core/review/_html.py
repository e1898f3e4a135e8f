"""The timeline as one self-contained HTML page, for a pull request or a browser.

No scripts at all and nothing fetched: the page holds its CSS in one ``<style>`` element and
forbids everything else with a Content-Security-Policy (``default-src 'none'``), so even a
browser that found markup in it would load nothing and run nothing. Every string from the
cassette is HTML-escaped (``&``, ``<``, ``>``, both quotes), and the characters that could
reorder or hide text (bidi overrides and isolates, zero-width characters, control characters)
are shown as visible ``\\u202e``-style marks instead of acting on the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Sequence
from typing import Any

from cassettes_core._model import Interaction
from cassettes_core.catalog import Said
from cassettes_core.review._timeline import _UNSAFE, Entry, timeline, tokens_text

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f6f7f9;
color:#1d2330}
header.page{background:#1d2330;color:#fff;padding:14px 24px}
header.page h1{font-size:18px;margin:0 0 4px}
header.page p{margin:0;opacity:.8;font-size:13px}
main{max-width:980px;margin:0 auto;padding:16px}
article{background:#fff;border:1px solid #dde1e8;border-radius:8px;margin:0 0 16px;
padding:12px 16px}
article h2{font-size:14px;margin:0 0 8px;color:#4a5468;font-weight:600}
.turn{border-radius:8px;padding:8px 12px;margin:6px 0;white-space:pre-wrap;
overflow-wrap:anywhere}
.user{background:#e8f0fe;margin-right:15%}
.system{background:#f1f2f5;color:#4a5468;font-size:13px}
.answer{background:#eef7ee;margin-left:15%}
.tool{background:#fff6e0;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.result{background:#f1ecfb;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.error{background:#fdecea;color:#8a1c12;font-weight:600}
.label{display:block;font-size:11px;text-transform:uppercase;letter-spacing:.05em;
color:#6b7385;margin-bottom:2px;font-weight:600}
.ctl{background:#ffd7d7;color:#8a1c12;border-radius:3px;padding:0 2px;font-family:monospace}
details{margin-top:6px;font-size:13px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f7f9;padding:8px;
border-radius:6px;margin:4px 0}
.meta{color:#6b7385;font-size:12px}
"""


def escape(text: str) -> str:
    """``text`` safe anywhere in an element's content or a quoted attribute."""
    escaped = html.escape(text, quote=True)
    return _UNSAFE.sub(lambda m: f'<span class="ctl">\\u{ord(m.group()):04x}</span>', escaped)


def render_page(title: str, interactions: Sequence[Interaction], *, subtitle: str = "") -> str:
    """The whole page for ``interactions`` (in seq order)."""
    ordered = sorted(interactions, key=lambda i: i.seq)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'\">",
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        '<header class="page">',
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(subtitle)}</p>",
        "</header>",
        "<main>",
    ]
    for entry, interaction in zip(timeline(ordered), ordered, strict=True):
        parts.extend(_article(entry, interaction))
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def _article(entry: Entry, interaction: Interaction) -> Iterator[str]:
    yield f'<article id="seq-{entry.seq}">'
    head = [entry.provider, entry.model or "no model", tokens_text(entry)]
    head += [f"{entry.duration_ms} ms", f"digest {entry.digest[:12]}"]
    yield f"<h2>#{entry.seq} · {' · '.join(escape(h) for h in head)}</h2>"
    if entry.system and entry.system_is_new:
        yield _turn("system", "system", entry.system)
    yield from _said(entry.question, "user", "asked")
    if entry.outcome == "stream":
        yield f'<p class="meta">streamed: {entry.events} events, shown assembled</p>'
    if entry.outcome != "error" or entry.answer.text or entry.answer.tool_calls:
        yield from _said(entry.answer, "answer", "answer")
    if entry.error is not None:
        yield _turn("error", "error", entry.error)
    record = interaction.to_dict()
    yield _folded("request", record.get("request"))
    for key in ("response", "stream", "error"):
        if key in record:
            yield _folded(key, record[key])
    yield "</article>"


def _said(said: Said, css: str, label: str) -> Iterator[str]:
    for key, content in said.tool_results:
        yield _turn("result", "tool result", f"{key}: {content}" if key else content)
    if said.text:
        yield _turn(css, label if said.known else f"{label} (JSON)", said.text)
    for call in said.tool_calls:
        yield _turn("tool", "tool call", f"{call.name}({call.arguments})")


def _turn(css: str, label: str, text: str) -> str:
    return f'<div class="turn {css}"><span class="label">{escape(label)}</span>{escape(text)}</div>'


def _folded(label: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return f"<details><summary>{escape(label)}</summary><pre>{escape(text)}</pre></details>"
