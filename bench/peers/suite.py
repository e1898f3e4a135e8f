"""W2: the same generated pytest suite for every tool, one cassette per test.

Each test makes ``CALLS`` distinct chat calls through the openai SDK. Only the marker and the
client helper differ: ours (``@pytest.mark.cassette``), pytest-recording and cassetter
(``@pytest.mark.vcr``, their ``vcr_config`` with body / ``json_body`` matching), and the floor
(no marker, no plugin: the SDK answered by a canned in-memory transport).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

CALLS = 3
PER_FILE = 30

_MARKERS = {
    "ours": "@pytest.mark.cassette",
    "vcrpy": "@pytest.mark.vcr",
    "cassetter": "@pytest.mark.vcr",
}
# The plugin a floor run leaves out (so the floor pays for none).
PLUGINS = {"ours": "cassettes", "vcrpy": "recording", "cassetter": "cassetter"}

_CONFTEST = {
    "ours": "",
    "vcrpy": """
        import pytest

        @pytest.fixture(scope="module")
        def vcr_config():
            return {"match_on": ["method", "uri", "body"]}
    """,
    "cassetter": """
        import pytest

        @pytest.fixture(scope="module")
        def vcr_config():
            return {"match_on": ["method", "uri", "json_body"]}
    """,
}


def write(folder: Path, tool: str, tests: int, *, floor: bool) -> Path:
    """Write the suite for ``tool`` (``floor``: its in-memory variant) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    workload = Path(__file__).with_name("workload.py").read_text(encoding="utf-8")
    (folder / "bench_workload.py").write_text(workload, encoding="utf-8")
    make = "canned_client" if floor else "client"
    (folder / "conftest.py").write_text(
        textwrap.dedent(_CONFTEST[tool] if not floor else ""), encoding="utf-8"
    )
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n", "utf-8")
    marker = "" if floor else _MARKERS[tool]
    for start in range(0, tests, PER_FILE):
        lines = [
            "import pytest",
            "from bench_workload import body, canned_client, client",
            "",
            f"sdk = {make}({tool!r})  # one client per module, as suites usually keep one",
            "",
        ]
        for n in range(start, min(start + PER_FILE, tests)):
            lines += [
                "",
                marker,
                f"def test_{n}():",
                f"    for k in range({CALLS}):",
                f"        answer = sdk.chat.completions.create(**body({n} * {CALLS} + k))",
                "        assert answer.choices[0].message.content",
            ]
        text = "\n".join(lines) + "\n"
        (folder / f"test_suite_{start // PER_FILE:02d}.py").write_text(text, encoding="utf-8")
    return folder


_SECONDS = re.compile(r" in ([0-9.]+)s")


def pytest_seconds(output: str) -> float | None:
    """pytest's own time from its last summary line (``… passed in 1.23s``)."""
    found = _SECONDS.findall(output)
    return float(found[-1]) if found else None
