"""`Emulator`: the public handle on the loopback provider (start, stop, inject, drift)."""

from __future__ import annotations

import secrets
import threading
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

from cassettes_core.catalog import DEFAULT_CATALOG
from cassettes_core.testing.emulator._server import PREFIXES, EmulatorHTTPServer
from cassettes_core.testing.emulator._state import EmulatorState, Injection


class Emulator:
    """A loopback stand-in for the providers' HTTP APIs, for demos and tests.

    Serves, on ``127.0.0.1`` (port 0 picks a free one) from a daemon thread:

    - ``openai.chat``: OpenAI chat, JSON or SSE (``stream_options.include_usage``);
    - ``openai.responses``: OpenAI Responses API, JSON or SSE with named events;
    - ``openai.embeddings``: deterministic vectors, ``float`` or ``base64`` encoded;
    - ``anthropic.messages``: Anthropic Messages, JSON or SSE;
    - ``gemini.generate``, ``gemini.stream``, ``gemini.embed``: the Gemini API at
      ``/{any version}/models/{model}:generateContent`` (and ``:streamGenerateContent``,
      ``:batchEmbedContents``), key in ``x-goog-api-key`` or ``?key=``
      (``genai.Client(api_key=emu.api_key, http_options={"base_url": emu.url})``);
    - ``groq.chat`` (with ``x_groq``), ``mistral.chat`` (under ``/mistral``), and OpenAI's chat
      for the rest of the OpenAI-compatible family;
    - ``ollama.chat``, ``ollama.generate``, ``ollama.embed``: JSON or NDJSON streams;
    - ``cohere.chat`` (JSON or SSE with event names) and ``cohere.embed``;

    each at its catalog endpoint's ``route`` (``cassettes_core.catalog``; Gemini at any model);
    ``base_url(family)`` is what that family's SDK takes.

    The real SDKs talk to it unchanged::

        with Emulator() as emu:
            client = openai.OpenAI(base_url=emu.openai_base_url, api_key=emu.api_key)
            client = anthropic.Anthropic(base_url=emu.anthropic_base_url, api_key=emu.api_key)

    Answers are a pure function of the semantic request (model, messages or input, system,
    tools): the text quotes the last user message and a digest of the request; offered tools
    are called (first tool, arguments filled from the user text) until a tool result comes
    back, then the answer mentions that result. Ids, timestamps and headers are fresh each call.
    OpenAI routes need ``Authorization: Bearer <api_key>``; Anthropic accepts ``x-api-key``
    or the bearer form; anything else gets the provider's 401 error JSON.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        port: int = 0,
        stream_delay_s: float = 0.0,
        host: str = "127.0.0.1",
    ) -> None:
        # A fake key made at run time: never a real provider's prefix, so never a leak.
        self._api_key = api_key if api_key is not None else "emu-" + secrets.token_hex(8)
        self._port = port
        self._host = host  # loopback unless asked: it answers anyone who sends its key
        # Seconds to wait after each SSE event; public, and may be changed while running.
        self.stream_delay_s = stream_delay_s
        self._state = EmulatorState()
        self._server: EmulatorHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> Self:
        """Bind the port and start serving in a daemon thread; returns self."""
        if self._server is not None:
            raise RuntimeError("the emulator is already running")
        server = EmulatorHTTPServer(
            self._port,
            state=self._state,
            api_key=self._api_key,
            stream_delay=lambda: self.stream_delay_s,
            host=self._host,
        )
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() returns within one poll
            name=f"cassettes-emulator-{server.server_address[1]}",
            daemon=True,
        )
        self._server = server
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake sleeping handlers and close open connections (idempotent)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._server = self._thread = None
        server.stopping.set()
        server.shutdown()
        server.server_close()
        server.drop_connections()
        thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._server is not None else "stopped"
        return f"<Emulator {where} hits={self.hits}>"

    # -- addresses --------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the running emulator (the address it is bound to)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; call start() or use `with`")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """What ``openai.OpenAI(base_url=...)`` takes: the URL plus the API's base path."""
        return self.base_url("openai")

    @property
    def anthropic_base_url(self) -> str:
        """What ``anthropic.Anthropic(base_url=...)`` takes: the bare URL."""
        return self.base_url("anthropic")

    def base_url(self, family: str) -> str:
        """The emulator's URL plus the base path of ``family``'s endpoints in the catalog
        (what that provider's SDK takes as ``base_url``)."""
        members = [e for e in DEFAULT_CATALOG if e.family == family]
        # The family's own API first (Ollama's native one, not its OpenAI-compatible /v1).
        members.sort(key=lambda e: (e.sdk or e.family) == "openai" and family != "openai")
        for endpoint in members:
            base = urlsplit(endpoint.base_url).path.rstrip("/")
            return self.url + PREFIXES.get(family, "") + base
        raise ValueError(f"the provider catalog has no endpoint of {family!r}")

    @property
    def api_key(self) -> str:
        """The key clients must present (a random ``emu-…`` value unless one was given)."""
        return self._api_key

    # -- counters ---------------------------------------------------------------------
    @property
    def hits(self) -> int:
        """Provider calls received on the four routes, failures and 401s included."""
        return self._state.hits

    @property
    def hits_by_path(self) -> dict[str, int]:
        """Provider calls per route path (a catalog endpoint's ``route``) (a copy)."""
        return self._state.hits_by_path

    def reset(self) -> None:
        """Zero the counters, drop armed errors and timeouts, and clear drift."""
        self._state.reset()

    # -- failure injection --------------------------------------------------------------
    def inject_error(
        self,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: dict[str, object] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` authorised provider calls with HTTP `status`.

        The body defaults to the provider's own error JSON for that status (OpenAI's
        ``{"error": {...}}`` or Anthropic's ``{"type": "error", ...}``); `headers` are added
        to the provider's usual ones (e.g. ``{"retry-after": "0"}`` for a 429). Injections
        queue up in order with those of `inject_timeout`.
        """
        if not 400 <= status <= 599:
            raise ValueError(f"inject_error wants a 4xx or 5xx status, got {status}")
        self._state.arm(Injection(status=status, headers=headers, body=body), times)

    def inject_timeout(self, seconds: float, times: int = 1) -> None:
        """Make the next `times` provider calls wait `seconds` before answering normally.

        Long enough, the client's own timeout fires first; the wait ends early on `stop()`.
        """
        if seconds <= 0:
            raise ValueError(f"inject_timeout wants a positive delay, got {seconds}")
        self._state.arm(Injection(delay_s=seconds), times)

    @property
    def pending_injections(self) -> int:
        """Armed errors and timeouts not yet consumed by a call."""
        return self._state.pending_injections

    # -- shape drift --------------------------------------------------------------------
    def set_drift(self, *names: str) -> None:
        """Turn shape-drift switches on, for the drift checker's tests; they add up.

        ===================  =====================================================================
        switch               effect per endpoint (JSON answers and streams alike)
        ===================  =====================================================================
        ``field_added``      new top-level ``service_tier_v2: "standard"``: chat answer and every
                             chunk; responses object (JSON and lifecycle events); embeddings
                             answer; Anthropic message (JSON and ``message_start.message``)
        ``field_removed``    chat: ``system_fingerprint`` gone (answer and chunks); responses:
                             ``truncation`` gone; embeddings: ``usage`` gone; Anthropic:
                             ``stop_sequence`` gone (message and ``message_delta.delta``)
        ``type_changed``     chat: ``created`` is a string; responses: ``created_at`` is a
                             string; embeddings: ``usage.prompt_tokens`` is a string;
                             Anthropic: ``usage.input_tokens`` is a string
        ``enum_value_new``   chat: ``finish_reason`` is ``content_filter_v2``; responses: final
                             ``status`` is ``completed_v2``; embeddings: ``data[].object`` is
                             ``embedding_v2``; Anthropic: ``stop_reason`` is
                             ``content_filter_v2``
        ``stream_event_new`` chat: an extra chunk with ``object: "chat.completion.heartbeat"``
                             and empty ``choices``; responses: an extra
                             ``response.reasoning_summary.delta`` event; Anthropic: an extra
                             ``event: ping_v2`` frame; embeddings: no effect
        ===================  =====================================================================

        Gemini (``_gemini``): field_added adds ``serviceTierV2``, field_removed drops
        ``modelVersion``, type_changed makes ``usageMetadata.promptTokenCount`` a string,
        enum_value_new sets ``finishReason`` to ``STOP_V2``, stream_event_new adds a chunk with
        only ``promptFeedback``.

        The other families apply the same five switches to their own shapes (Bedrock: see
        ``_bedrock``): Groq and Mistral as ``openai.chat``; Ollama (``service_tier_v2``,
        ``load_duration`` gone, ``eval_count`` a string, ``done_reason`` ``stop_v2``, a
        ``heartbeat`` line); Cohere (``service_tier_v2``, ``usage.billed_units`` gone,
        ``usage.tokens.input_tokens`` a string, a ``_V2`` ``finish_reason``, a ``debug_v2`` event).
        Their modules say where.

        The official SDKs parse every variant. ``type_changed`` is the one they notice: where
        an SDK dumps its model (``to_dict()``, ``.parse()``, the ``.stream()`` helpers) pydantic
        emits a serializer ``UserWarning``, as it would on real type drift; plain ``create``
        calls and raw HTTP stay silent.
        """
        self._state.set_drift(names)

    def clear_drift(self) -> None:
        """Turn every drift switch off."""
        self._state.clear_drift()

    @property
    def drift(self) -> frozenset[str]:
        """The drift switches currently on."""
        return self._state.drift
