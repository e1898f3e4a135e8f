"""Under CI, an unmarked call through groq, mistralai, ollama or cohere is refused before any
connection, whatever base URL the client was given (its SDK names it a provider call), and
the refusal reaches the test as itself: groq, which retries every exception, does not retry it.

A local Ollama is refused too: a test that needs the models of the machine it runs on is not
reproducible in CI. Record it once (``@pytest.mark.cassette``) or allow the host explicitly.
"""

from __future__ import annotations

import contextlib
import socket

import pytest

from tests.helpers.data import table
from tests.helpers.inner import run_inner
from tests.helpers.sink import Sink

CALLS: dict[str, str] = table("isolation_sdk_clients")  # SDK -> the module calling the URL

TEST = """
import pytest

from {module} import call


@pytest.mark.parametrize("url", {urls!r})
def test_it(url):
    try:
        call(url)
    except BaseException as exc:
        names = [cls.__name__ for cls in type(exc).__mro__]
        print("RAISED", names[0], "LiveCallRefusedError" in names)
        raise
"""


def test_an_unmarked_call_is_refused_at_once(pytester: pytest.Pytester, ci: Sink) -> None:
    """Each SDK's call to a loopback base URL is refused as itself: no connection, no retry
    (groq does not wrap it in APIConnectionError). ollama.Client() with no host
    (localhost:11434) under CI is refused too, not a ConnectionError."""
    for sdk, code in CALLS.items():
        urls = [ci.url, None] if sdk == "ollama" else [ci.url]
        pytester.makepyfile(**{f"call_{sdk}": code})
        pytester.makepyfile(**{f"test_{sdk}": TEST.format(module=f"call_{sdk}", urls=urls)})
    result = run_inner(pytester, "-s")
    result.assert_outcomes(failed=len(CALLS) + 1)
    assert ci.accepted == 0
    raised = [line.split("RAISED", 1)[1].split() for line in result.outlines if "RAISED" in line]
    assert raised == [["LiveCallRefusedError", "True"]] * (len(CALLS) + 1)
    result.stdout.fnmatch_lines(["*provider-cassettes: live calls refused*"])
    result.stdout.fnmatch_lines(["*11434*test_ollama.py::test_it[[]None[]]*"])


RAW = """
import os
import json
import urllib.request

import pytest
import requests
import urllib3

URL = os.environ["TARGET"] + "/api/chat"
BODY = {"model": "m", "messages": [], "stream": False}


def test_requests():
    requests.post(URL, json=BODY, timeout=2)


def test_urllib3():
    urllib3.PoolManager(retries=False, timeout=2).request("POST", URL, json=BODY)


def test_urllib():
    data = json.dumps(BODY).encode()
    urllib.request.urlopen(urllib.request.Request(URL, data=data, method="POST"), timeout=2)
"""


@pytest.mark.parametrize("where", ["default-port", "ollama-host", "own-service"], ids=str)
def test_raw_clients_to_a_local_ollama_are_refused_but_your_own_api_chat_is_not(
    pytester: pytest.Pytester, ci: Sink, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """requests, urllib3 and urllib carry no SDK headers: their POST /api/chat is Ollama's
    when it goes to localhost:11434 or where OLLAMA_HOST says (refused, no connection); on
    another port it is your own service's, and passes."""
    pytester.makepyfile(test_raw=RAW)
    if where == "default-port":
        try:
            listener = socket.create_server(("127.0.0.1", 11434))
        except OSError:
            pytest.skip("port 11434 is taken on this machine (an Ollama?)")
        with listener:
            listener.setblocking(False)
            monkeypatch.setenv("TARGET", "http://localhost:11434")
            result = run_inner(pytester)
            with contextlib.suppress(BlockingIOError):
                listener.accept()
                pytest.fail("a connection reached localhost:11434")
        result.assert_outcomes(failed=3)
        result.stdout.fnmatch_lines(["*provider-cassettes: live calls refused*"])
        return
    with Sink() as own:  # a loopback service no provider variable names
        monkeypatch.setenv("TARGET", own.url)
        if where == "ollama-host":
            monkeypatch.setenv("OLLAMA_HOST", own.url)
        result = run_inner(pytester)
        accepted = own.accepted
    if where == "ollama-host":
        result.assert_outcomes(failed=3)
        assert accepted == 0
    else:
        result.assert_outcomes(passed=3)
        assert accepted == 3
