"""The peers' own virtual environments, made once and reused.

vcrpy + pytest-recording and cassetter both register ``@pytest.mark.vcr`` and
``--record-mode``, so each lives in a virtual environment of its own under
``.venv/bench-peers/<tool>/`` (gitignored), with the same openai SDK and pytest as ours.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / ".venv" / "bench-peers"
PEERS: dict[str, tuple[str, ...]] = {
    # vcrpy patches only the legacy httpx package: the SDK gets an httpx.Client there.
    "vcrpy": ("vcrpy==9.4.2", "pytest-recording==0.14.1", "httpx=={httpx}"),
    "cassetter": ("cassetter==0.16.1",),
}


def requirements(tool: str) -> list[str]:
    versions = {name: metadata.version(name) for name in ("openai", "pytest", "httpx")}
    pinned = [spec.format(**versions) for spec in PEERS[tool]]
    return [*pinned, f"openai=={versions['openai']}", f"pytest=={versions['pytest']}"]


def python_of(tool: str) -> Path:
    """The interpreter of ``tool``'s environment (ours is the one running this)."""
    if tool == "ours":
        return Path(sys.executable)
    return HOME / tool / "bin" / "python"


def ensure(tool: str) -> Path:
    """Make ``tool``'s environment if it is missing or was made for other versions."""
    python = python_of(tool)
    if tool == "ours":
        return python
    wanted = "\n".join(requirements(tool)) + "\n"
    stamp = HOME / tool / ".requirements"
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    print(f"  making {HOME / tool} ({', '.join(requirements(tool))})", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(HOME / tool)], check=True)
    done = subprocess.run(
        [
            str(python),
            *("-m", "pip", "install", "--quiet", "--disable-pip-version-check"),
            *requirements(tool),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"could not install {tool}: {done.stderr[-2000:]}")
    stamp.write_text(wanted, encoding="utf-8")
    return python


def version_of(tool: str) -> str:
    if tool == "ours":
        return f"provider-cassettes {metadata.version('provider-cassettes')}"
    probe = {"vcrpy": ("vcrpy", "pytest-recording"), "cassetter": ("cassetter",)}[tool]
    code = (
        "import sys; from importlib import metadata as m; "
        "print(' + '.join(f'{n} ' + m.version(n) for n in sys.argv[1:]))"
    )
    done = subprocess.run(
        [str(python_of(tool)), "-c", code, *probe], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or tool
