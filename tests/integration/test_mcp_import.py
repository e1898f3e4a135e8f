"""The mcp SDK is patched when the user imports it, never imported by the core."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_library_does_not_import_mcp() -> None:
    """The core never needs the mcp SDK: it is patched if and when the user imports it."""
    code = "import sys, cassettes_core; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_mcp_imported_after_the_library_is_patched() -> None:
    code = (
        "import cassettes_core\n"
        "from mcp import ClientSession\n"
        "from mcp.client import sse, stdio\n"
        "print(getattr(ClientSession.__init__, '__cassettes_wrapped__', False),"
        " getattr(stdio._create_platform_compatible_process, '__cassettes_replay__', False),"
        " getattr(sse.sse_within_origin, '__cassettes_replay__', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_module_imported_again_is_patched_again() -> None:
    """pytester's in-process runs drop the modules they imported: a fresh copy of the SDK's
    session module is patched too."""
    code = (
        "import sys, cassettes_core\n"
        "import mcp.client.session as first\n"
        "del sys.modules['mcp.client.session']\n"
        "import mcp.client.session as second\n"
        "print(first is second,"
        " getattr(second.ClientSession.__init__, '__cassettes_wrapped__', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
