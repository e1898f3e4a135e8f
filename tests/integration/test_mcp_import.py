"""The mcp SDK is patched from the first interception on, never imported by the core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CODE = """
import sys
import cassettes_core
from cassettes_core.isolation import PatchOnImport
hooks = [f for f in sys.meta_path if isinstance(f, PatchOnImport)]
print('mcp' in sys.modules, len(hooks))
from mcp import ClientSession
print(getattr(ClientSession.__init__, '__cassettes_wrapped__', False))
with cassettes_core.intercept(cassettes_core.Recorder(sys.argv[1], mode='passthrough')):
    pass
from mcp.client import sse, stdio
print(getattr(ClientSession.__init__, '__cassettes_wrapped__', False),
      getattr(stdio._create_platform_compatible_process, '__cassettes_replay__', False),
      getattr(sse.sse_within_origin, '__cassettes_replay__', False))
import mcp.client.session as first
del sys.modules['mcp.client.session']
import mcp.client.session as second
print(first is second, getattr(second.ClientSession.__init__, '__cassettes_wrapped__', False))
"""


def test_mcp_is_patched_from_the_first_interception_on(tmp_path: Path) -> None:
    """Importing the library imports no mcp and installs no hook; the first interception
    patches what is imported and what is imported later, and a module imported again
    (pytester's in-process runs drop the modules they imported) is patched again."""
    argv = [sys.executable, "-c", CODE, str(tmp_path / "none.yaml")]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:4] == [
        "False 0",
        "False",
        "True True True",
        "False True",
    ]
