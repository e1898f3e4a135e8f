"""httpx and httpx2 (and, by the guard, aiohttp, grpc and urllib3) are patched when they are
imported, not imported to be patched (issue 14), and restored; the mcp SDK from the first
interception on (never imported by the core, patched again when imported again).

Each case runs in a fresh interpreter, where nothing has imported either library yet.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

GUARD_THEN_IMPORT = """
import sys
from cassettes_core import LiveCallRefusedError
from cassettes_core.isolation import Guard, Policy, arm, disarm
from cassettes_core.transport import is_patched

before = {name: name in sys.modules for name in ("httpx", "httpx2")}
guard = Guard(Policy())
arm(guard)
assert is_patched()
assert not any(name in sys.modules for name in ("httpx", "httpx2", "aiohttp", "grpc"))
import httpx  # imported after arming: patched before `import` returns
import aiohttp, grpc, grpc.aio, urllib3
from urllib3.connectionpool import HTTPConnectionPool
patched = [aiohttp.BaseConnector.connect, grpc.insecure_channel, grpc.aio.secure_channel,
           HTTPConnectionPool.urlopen]
assert all(hasattr(f, "__wrapped__") for f in patched), patched

client = httpx.Client()  # its real transport: the guard refuses before any socket opens
assert hasattr(httpx.Client._transport_for_url, "__wrapped__")
assert hasattr(httpx.AsyncClient._transport_for_url, "__wrapped__")
try:
    client.get("https://api.openai.com/v1/models")
except LiveCallRefusedError:
    pass
else:
    raise SystemExit("a provider request went out through a late-imported httpx")
disarm(guard)
assert not hasattr(httpx.Client._transport_for_url, "__wrapped__")
assert not is_patched()
restored = [aiohttp.BaseConnector.connect, grpc.insecure_channel, grpc.aio.secure_channel,
            HTTPConnectionPool.urlopen]
assert [f.__wrapped__ for f in patched] == restored
assert not any(hasattr(f, "__wrapped__") for f in restored)
assert not any(type(f).__name__ == "PatchOnImport" and not f.every_time for f in sys.meta_path)
assert type(aiohttp.connector.__loader__).__name__ != "_PatchingLoader"
import httpx2  # imported after disarming: left alone
assert not hasattr(httpx2.Client._transport_for_url, "__wrapped__")
print("ok", before)
"""

INTERCEPT_THEN_IMPORT = """
import sys, tempfile, os
from cassettes_core import CassetteMissError, Recorder
from cassettes_core.transport import intercept
import httpx2

made_before = httpx2.Client()  # a client built before the cassette began
path = os.path.join(tempfile.mkdtemp(), "empty.yaml")
with intercept(Recorder(path, mode="replay")):
    assert "httpx" not in sys.modules, "httpx imported for us"
    import httpx
    for client in (made_before, httpx.Client()):
        try:
            client.post("https://api.openai.com/v1/chat/completions", json={"model": "m"})
        except CassetteMissError:
            pass  # answered by the cassette (it has no recording), never sent
        else:
            raise SystemExit(f"{client!r} reached the provider in replay")
assert not hasattr(httpx.Client._transport_for_url, "__wrapped__")
assert not hasattr(httpx2.Client._transport_for_url, "__wrapped__")
print("ok")
"""

IMPORT_WHILE_ANOTHER_THREAD_CHURNS = """
import os, sys, tempfile, threading
from cassettes_core import Recorder
from cassettes_core.transport import intercept, is_patched
import httpx2

path = os.path.join(tempfile.mkdtemp(), "c.yaml")
stop = threading.Event()
errors = []

def churn():
    try:
        while not stop.is_set():
            with intercept(Recorder(path, mode="replay")):
                pass
    except BaseException as exc:
        errors.append(exc)

worker = threading.Thread(target=churn)
worker.start()
import httpx  # while the other thread installs and restores the patches, over and over
stop.set()
worker.join(30)
assert not worker.is_alive(), "deadlock"
assert not errors, errors
with intercept(Recorder(path, mode="replay")):
    assert hasattr(httpx.Client._transport_for_url, "__wrapped__")
    assert hasattr(httpx2.Client._transport_for_url, "__wrapped__")
assert not hasattr(httpx.Client._transport_for_url, "__wrapped__")
assert not is_patched()
print("ok")
"""


MCP_FROM_THE_FIRST_INTERCEPTION_ON = """
import os, sys, tempfile
import cassettes_core
from cassettes_core.isolation import PatchOnImport
assert "mcp" not in sys.modules and not any(isinstance(f, PatchOnImport) for f in sys.meta_path)
from mcp import ClientSession
assert not hasattr(ClientSession.__init__, "__cassettes_wrapped__")
path = os.path.join(tempfile.mkdtemp(), "none.yaml")
with cassettes_core.intercept(cassettes_core.Recorder(path, mode="passthrough")):
    pass
from mcp.client import sse, stdio  # imported later: patched too
assert getattr(ClientSession.__init__, "__cassettes_wrapped__", False)
assert getattr(stdio._create_platform_compatible_process, "__cassettes_replay__", False)
assert getattr(sse.sse_within_origin, "__cassettes_replay__", False)
import mcp.client.session as first
del sys.modules["mcp.client.session"]  # as pytester's in-process runs drop what they imported
import mcp.client.session as second
assert first is not second and getattr(second.ClientSession.__init__, "__cassettes_wrapped__")
print("ok")
"""


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(GUARD_THEN_IMPORT, id="guard-armed-then-httpx-imported"),
        pytest.param(INTERCEPT_THEN_IMPORT, id="cassette-active-then-httpx-imported"),
        pytest.param(IMPORT_WHILE_ANOTHER_THREAD_CHURNS, id="httpx-imported-while-a-thread-churns"),
        pytest.param(
            MCP_FROM_THE_FIRST_INTERCEPTION_ON, id="mcp-patched-from-the-first-interception"
        ),
    ],
)
def test_a_library_imported_later_is_patched_on_import(script: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok"), done.stdout
