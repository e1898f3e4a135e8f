"""Global interception: what it patches, when it binds, and that it leaves nothing behind."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

import cassettes_core
from cassettes_core import ConfigError, Recorder, load_cassette
from cassettes_core.transport import active_interception as active
from cassettes_core.transport import intercept, is_patched
from cassettes_core.transport.httpx2 import CassetteTransport

CLASSES = (httpx.Client, httpx.AsyncClient, httpx2.Client, httpx2.AsyncClient)
CHAT = "https://api.openai.test/v1/chat/completions"
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "choices": []}


def _body(content: str = "Hi") -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


def _originals() -> list[Any]:
    return [cls.__dict__["_transport_for_url"] for cls in CLASSES]


def _live(calls: list[str]) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(request.url.path)
        return httpx2.Response(200, json=ANSWER)

    return handler


def _count(path: Path) -> int:
    cassette = load_cassette(path)
    return 0 if cassette is None else len(cassette)


def test_one_method_per_client_class_is_patched_and_restored_exactly(tmp_path: Path) -> None:
    """Only _transport_for_url of the four client classes changes (and aiohttp's
    ``ClientSession._request``, botocore's ``Endpoint._send``), and the very same function
    objects are back after exit, also when the block is left by an exception; intercept is
    exported from the package root too."""
    import aiohttp
    import botocore.endpoint

    seams = [(aiohttp.ClientSession, "_request"), (botocore.endpoint.Endpoint, "_send")]
    before = _originals() + [cls.__dict__[name] for cls, name in seams]
    with intercept(Recorder(tmp_path / "c.yaml", mode="record")):
        during = _originals() + [cls.__dict__[name] for cls, name in seams]
        assert is_patched()
        assert all(now is not then for now, then in zip(during, before, strict=True))
        assert [now.__wrapped__ for now in during] == before
    after = _originals() + [cls.__dict__[name] for cls, name in seams]
    assert all(now is then for now, then in zip(after, before, strict=True))
    assert not is_patched()
    assert active() is None
    with pytest.raises(RuntimeError), intercept(Recorder(tmp_path / "c.yaml", mode="record")):
        raise RuntimeError
    assert _originals() == before[:4]
    assert not is_patched()
    assert cassettes_core.intercept is intercept


def test_clients_made_before_activation_record_and_replay(tmp_path: Path) -> None:
    """A client (here with a custom MockTransport) built before the switch is bound at send."""
    path = tmp_path / "c.yaml"
    calls: list[str] = []
    client = httpx2.Client(transport=httpx2.MockTransport(_live(calls)))
    with intercept(Recorder(path, mode="record")):
        assert client.post(CHAT, json=_body()).json() == ANSWER
    assert calls == ["/v1/chat/completions"]
    with intercept(Recorder(path, mode="replay")):
        assert client.post(CHAT, json={**_body(), "temperature": 1}).json() == ANSWER
    assert calls == ["/v1/chat/completions"]  # replay did not go live
    client.post(CHAT, json=_body())  # after exit, the client is untouched again
    assert len(calls) == 2
    client.close()


def test_innermost_wins_and_the_outer_is_back_after_it(tmp_path: Path) -> None:
    """Nested interceptions bind each request to the innermost one active when it is sent."""
    outer, inner = tmp_path / "outer.yaml", tmp_path / "inner.yaml"
    calls: list[str] = []
    with httpx2.Client(transport=httpx2.MockTransport(_live(calls))) as client:
        with intercept(Recorder(outer, mode="record")):
            with intercept(Recorder(inner, mode="record")):
                client.post(CHAT, json=_body("one"))
            client.post(CHAT, json=_body("two"))
        client.post(CHAT, json=_body("three"))
    assert (_count(outer), _count(inner), len(calls)) == (1, 1, 3)
    assert not is_patched()


def test_an_explicit_cassette_transport_wins(tmp_path: Path) -> None:
    """A client that already has a cassette transport keeps using its own recorder."""
    mine, switched = tmp_path / "mine.yaml", tmp_path / "switched.yaml"
    inner = httpx2.MockTransport(_live([]))
    transport = CassetteTransport(Recorder(mine, mode="record"), inner=inner)
    with httpx2.Client(transport=transport) as client, intercept(Recorder(switched, mode="record")):
        client.post(CHAT, json=_body())
    assert (_count(mine), _count(switched)) == (1, 0)


def test_out_of_order_exits_from_two_threads(tmp_path: Path) -> None:
    """An outer interception leaving before an inner one (other thread) keeps the inner active."""
    first = intercept(Recorder(tmp_path / "a.yaml", mode="record"))
    second = intercept(Recorder(tmp_path / "b.yaml", mode="record"))
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert active() is second
    assert is_patched()
    second.__exit__(None, None, None)
    assert active() is None
    assert not is_patched()


def test_concurrent_activations_leave_nothing_patched(tmp_path: Path) -> None:
    """Many threads entering and leaving at once end with the originals restored."""
    before = _originals()
    start = threading.Barrier(8)

    def churn(n: int) -> None:
        start.wait()
        for _ in range(25):
            with intercept(Recorder(tmp_path / f"{n}.yaml", mode="record")):
                pass

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(churn, range(8)))
    assert _originals() == before
    assert not is_patched()


@pytest.mark.asyncio
async def test_async_with_binds_async_clients(tmp_path: Path) -> None:
    """`async with intercept(...)` routes an AsyncClient's requests, then restores."""
    path = tmp_path / "c.yaml"
    calls: list[str] = []
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(_live(calls))) as client:
        async with intercept(Recorder(path, mode="record")):
            await client.post(CHAT, json=_body())
        async with intercept(Recorder(path, mode="replay")):
            assert (await client.post(CHAT, json=_body())).json() == ANSWER
    assert calls == ["/v1/chat/completions"]
    assert not is_patched()


def test_two_threads_each_record_to_their_own_cassette(tmp_path: Path) -> None:
    """Each thread's requests go to the interception it entered, even while the other
    thread's (entered later) is active too."""
    both_in = threading.Barrier(2)
    calls: list[str] = []
    client = httpx2.Client(transport=httpx2.MockTransport(_live(calls)))

    def work(name: str) -> None:
        with intercept(Recorder(tmp_path / f"{name}.yaml", mode="record")):
            both_in.wait()  # both interceptions are active now
            client.post(CHAT, json=_body(name))
            both_in.wait()  # neither leaves before the other has sent

    threads = [threading.Thread(target=work, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    for name in ("a", "b"):
        cassette = load_cassette(tmp_path / f"{name}.yaml")
        assert cassette is not None
        assert [i.request.fields["messages"][0]["content"] for i in cassette.interactions] == [name]
    assert not is_patched()


def test_a_thread_without_its_own_falls_back_to_the_innermost(tmp_path: Path) -> None:
    """A worker thread that entered nothing is bound to the innermost active interception
    (and its block_unmatched), and a paused one is out of force without being exited."""
    calls: list[str] = []
    outer, inner = Recorder(tmp_path / "o.yaml", mode="record"), Recorder(tmp_path / "i.yaml")
    with (
        httpx2.Client(transport=httpx2.MockTransport(_live(calls))) as client,
        intercept(outer) as outer_switch,
        intercept(inner, block_unmatched=True),
    ):
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(client.post, CHAT, json=_body("worker")).result()
            blocked = pool.submit(client.get, "https://example.test/")
            with pytest.raises(ConfigError, match=r"blocked GET https://example\.test/"):
                blocked.result()
        outer_switch.pause()  # out of force, though its block has not ended
        assert active() is not outer_switch
        outer_switch.resume()
        assert active() is outer_switch  # resumed: innermost again in this thread
    assert (_count(tmp_path / "i.yaml"), _count(tmp_path / "o.yaml")) == (1, 0)
    assert not is_patched()
