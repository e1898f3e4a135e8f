"""W2 A/B: this checkout against an older copy of the code and cassetter, in one alternating run.

    .venv/bin/python bench/ab_w2.py [--base DIR] [--rounds 5] [--tests 300] [--cpu]

The suite of ``bench_peers.w2`` (one small cassette per test, replayed with ``CI=true``) is
recorded once for each variant, then every round runs, alternating: each tool's floor (the
SDK answered by a canned in-memory transport, no plugin), a second floor whose client is built
as the tools' clients are (``openai.OpenAI()``, its SSL context included, then the canned
transport put in), and each variant. ``--base DIR`` is a copy of ``cassettes_core``,
``pytest_plugin`` and ``cassette_refresh`` of another commit (``git archive <rev> cassettes_core
pytest_plugin cassette_refresh | tar -x -C DIR``), put first on ``PYTHONPATH``. Printed: each
variant's median wall (``--cpu``: the children's CPU time, steadier on a shared machine) above
each floor, paired per round, and ours ÷ cassetter. Not part of ``make bench``: a tool for
before/after measurements.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from peers import envs, suite  # noqa: E402

from cassettes_core.testing.emulator import Emulator  # noqa: E402

_CANNED = (
    "    canned: Any = http.Client(transport=transport)\n"
    "    return openai.OpenAI(http_client=canned, max_retries=0)"
)
_BUILT_AS_THE_TOOLS = (
    "    sdk = client(tool)  # built as the tools' clients are (SSL context included)\n"
    "    sdk._client._transport = transport\n"
    "    return sdk"
)


def _env(url: str, key: str, folder: Path, name: str, code: str | None) -> dict[str, str]:
    drop = {"CI", "CASSETTE_MODE", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPYCACHEPREFIX"] = str(folder / f"pycache-{name}")
    env.update(OPENAI_BASE_URL=url, OPENAI_API_KEY=key, CASSETTE_CACHE_DIR=str(folder / name))
    if code is not None:
        env["PYTHONPATH"] = code
    return env


def _run(tool: str, cwd: Path, env: dict[str, str], extra: list[str], *, cpu: bool) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [str(envs.python_of(tool)), "-m", "pytest", "-q", "-p", "no:randomly", *extra],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{tool} in {cwd} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return used if cpu else wall


def _floor_with_client(folder: Path, tool: str, tests: int) -> Path:
    project = suite.write(folder, tool, tests, floor=True)
    workload = project / "bench_workload.py"
    text = workload.read_text(encoding="utf-8")
    if _CANNED not in text:  # the floor builds its client as the tools do already
        return project
    workload.write_text(text.replace(_CANNED, _BUILT_AS_THE_TOOLS), encoding="utf-8")
    return project


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base", type=Path, help="an older copy of the code (see above)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--cpu", action="store_true", help="children's CPU time, not wall")
    args = parser.parse_args(argv)
    variants: dict[str, tuple[str, str | None]] = {"new": ("ours", str(ROOT))}
    if args.base is not None:
        variants["base"] = ("ours", str(args.base.resolve()))
    variants["cassetter"] = ("cassetter", None)
    folder = Path(tempfile.mkdtemp(prefix="ab-w2-"))
    runs: dict[str, list[float]] = {name: [] for name in variants}
    floors: dict[str, list[float]] = {}
    with Emulator() as emu:
        projects = {}
        for name, (tool, code) in variants.items():
            env = _env(emu.openai_base_url, emu.api_key, folder, name, code)
            project = suite.write(folder / f"p-{name}", tool, args.tests, floor=False)
            record = ["--cassette-mode=record"] if tool == "ours" else ["--record-mode=once"]
            _run(tool, project, env, record, cpu=False)
            replay = [] if tool == "ours" else ["--record-mode=none"]
            projects[name] = (tool, project, {**env, "CI": "true"}, replay)
        floor_runs = {}
        for tool in sorted({tool for tool, _ in variants.values()}):
            env = {**_env(emu.openai_base_url, emu.api_key, folder, f"floor-{tool}", None)}
            env["CI"] = "true"
            off = ["-p", f"no:{suite.PLUGINS[tool]}"]
            plain = suite.write(folder / f"floor-{tool}", tool, args.tests, floor=True)
            built = _floor_with_client(folder / f"floor-ssl-{tool}", tool, args.tests)
            floor_runs[f"floor-{tool}"] = (tool, plain, env, off)
            floor_runs[f"floor-ssl-{tool}"] = (tool, built, env, off)
        everything = {**floor_runs, **projects}
        for tool, project, env, extra in everything.values():  # bytecode, load cache
            _run(tool, project, env, extra, cpu=args.cpu)
        for index in range(args.rounds):
            for name, (tool, project, env, extra) in everything.items():
                taken = _run(tool, project, env, extra, cpu=args.cpu)
                (floors.setdefault(name, []) if name in floor_runs else runs[name]).append(taken)
            shown = " ".join(f"{n}={v[-1]:.3f}" for n, v in (*runs.items(), *floors.items()))
            print(f"round {index}: {shown}", flush=True)
    above: dict[tuple[str, str], float] = {}
    for name, (tool, *_rest) in variants.items():
        for which in (f"floor-{tool}", f"floor-ssl-{tool}"):
            pairs = zip(runs[name], floors[which], strict=True)
            above[name, which] = statistics.median(run - floor for run, floor in pairs)
            print(
                f"{name:10s} median {statistics.median(runs[name]):.3f}, {which} "
                f"{statistics.median(floors[which]):.3f}: {above[name, which]:.3f} above it"
            )
    for name, (tool, _code) in variants.items():
        if tool == "ours" and "cassetter" in variants:
            ratio = above[name, "floor-ours"] / above["cassetter", "floor-cassetter"]
            client_built = above[name, "floor-ssl-ours"] / above["cassetter", "floor-ssl-cassetter"]
            print(
                f"{name} ÷ cassetter above the floor: {ratio:.2f} "
                f"(client-built floor {client_built:.2f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
