"""The side-by-side results as a Markdown table, with the ratios the targets are written in."""

from __future__ import annotations

from typing import Any


def _get(row: dict[str, Any], *keys: str) -> Any:
    value: Any = row
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _s(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or b <= 0 else f"{a / b:.2f}×"


def _w1_total(row: dict[str, Any], which: str = "replay") -> float | None:
    """Load + every call; a sampled run (vcrpy) is extrapolated from its per-call mean."""
    replay = row.get(which) or {}
    if "error" in replay or "load_s" not in replay:
        return None
    per_call = replay["mean_ms"] / 1000
    return float(replay["load_s"] + per_call * row["n"])


def _limit(row: dict[str, Any], ours: dict[str, Any] | None) -> float | None:
    floor = row.get("floor") or {}
    limits = (ours or row).get("limits") or {}
    if "mean_ms" not in floor or "json_decode_s" not in limits:
        return None
    return float(floor["mean_ms"] / 1000 * row["n"] + limits["json_decode_s"])


def w1(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "### W1 big cassette (load + replay in a fresh process)",
        "",
        "| N | tool | load s | calls s | load + calls s | median ms | p95 ms | peak MB | ÷ limit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ours = next((r for r in rows if r["tool"] == "ours" and r["n"] == row["n"]), None)
        limit = _limit(row, ours)
        variants = [("replay", row["tool"])]
        if "replay_warm" in row:
            variants = [("replay", "ours, cache empty"), ("replay_warm", "ours, cache filled")]
        for key, label in variants:
            replay = row.get(key) or {}
            if "error" in replay:
                out.append(f"| {row['n']:,} | {label} | failed: {replay['error'][:80]} |||||||")
                continue
            total = _w1_total(row, key)
            sampled = f" (sampled {replay['calls']})" if replay.get("calls") != row["n"] else ""
            out.append(
                f"| {row['n']:,} | {label}{sampled} | {_s(replay.get('load_s'))} | "
                f"{_s(replay.get('calls_s'))} | {_s(total)} | {_s(replay.get('median_ms'))} | "
                f"{_s(replay.get('p95_ms'))} | {_s(replay.get('peak_mb'), 0)} | "
                f"{_ratio(total, limit)} |"
            )
        if ours is row:
            limits = row.get("limits") or {}
            out.append(
                f"| {row['n']:,} | limit: in-memory SDK + JSON decode | "
                f"{_s(limits.get('json_decode_s'), 4)} | — | {_s(limit)} | "
                f"{_s(_get(row, 'floor', 'median_ms'))} | — | — | 1.00× |"
            )
            out.append(
                f"| {row['n']:,} | read + blake3 of the file ({_s(limits.get('mb'), 1)} MB) | "
                f"{_s(limits.get('read_hash_s'), 4)} | | | | | | |"
            )
    return out


def w2(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "### W2 suite (CI=true replay, one cassette per test)",
        "",
        "| tool | tests | wall s | pytest s | floor wall s | above floor s | ÷ floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        floor = row["floor"]
        variants = [("replay", row["tool"])]
        if "replay_uncached" in row:
            variants = [("replay", "ours, cache filled"), ("replay_uncached", "ours, no cache")]
        for key, label in variants:
            replay = row[key]
            above = replay["wall_s"] - floor["wall_s"]
            status = "" if replay["ok"] else f" (failed: {replay['tail'][:60]})"
            out.append(
                f"| {label}{status} | {row['tests']} | {_s(replay['wall_s'], 2)} | "
                f"{_s(replay['pytest_s'], 2)} | {_s(floor['wall_s'], 2)} | {_s(above, 2)} | "
                f"{_ratio(replay['wall_s'], floor['wall_s'])} |"
            )
    return out


def per_interaction_ms(row: dict[str, Any]) -> float | None:
    live, recorded = row.get("live") or {}, row.get("record") or {}
    if "total_s" not in live or "total_s" not in recorded:
        return None
    return float((recorded["total_s"] - live["total_s"]) / row["n"] * 1000)


def w3(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "### W3 record (cost per recorded interaction: record run minus the same calls live; "
        "the median of 3 such pairs, their range in brackets)",
        "",
        "| N | answer | tool | live s | record s | ms per interaction | of which: secret guard "
        "| fsync |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cost = per_interaction_ms(row)
        error = _get(row, "record", "error")
        note = f" failed: {error[:60]}" if error else ""
        out.append(
            f"| {row['n']:,} | {row['answer']:,} B | {row['tool']}{note} | "
            f"{_s(_get(row, 'live', 'total_s'), 2)} | {_s(_get(row, 'record', 'total_s'), 2)} | "
            f"{_s(cost, 3)}{_spread(row)} | {_s(_promise_ms(row, 'guard_s'), 3)} | "
            f"{_s(_promise_ms(row, 'fsync_s'), 3)} |"
        )
    return out


def _spread(row: dict[str, Any]) -> str:
    """The range of the runs the median was taken from, if there were
    several."""
    runs = [run for run in row.get("runs_ms") or () if isinstance(run, int | float)]
    return f" ({min(runs):.2f}–{max(runs):.2f})" if len(runs) > 1 else ""


def _promise_ms(row: dict[str, Any], key: str) -> float | None:
    """What one of our promises cost per interaction (``None`` for a peer: it has none)."""
    spent = _get(row, "record", key)
    if row["tool"] != "ours" or not isinstance(spent, int | float):
        return None
    return float(spent / row["n"] * 1000)


def _find(rows: list[dict[str, Any]], tool: str, **where: Any) -> dict[str, Any] | None:
    for row in rows:
        if row["tool"] == tool and all(row.get(k) == v for k, v in where.items()):
            return row
    return None


def targets(results: dict[str, Any]) -> list[str]:
    """The issue's targets, each as the ratio measured in this run."""
    rows1, rows2, rows3 = results["w1"], results["w2"], results["w3"]
    out = ["### Targets, as measured in this run", ""]
    for n in sorted({row["n"] for row in rows1}):
        ours = _find(rows1, "ours", n=n)
        if ours is None:
            continue
        warm, cold = _w1_total(ours, "replay_warm"), _w1_total(ours, "replay")
        limit = _limit(ours, ours)
        out.append(
            f"- W1 N={n:,} load + calls ÷ limit: {_ratio(warm, limit)} (cache filled), "
            f"{_ratio(cold, limit)} (cache empty)"
        )
        for peer in ("cassetter", "vcrpy"):
            row = _find(rows1, peer, n=n)
            if row is not None:
                theirs = _w1_total(row)
                out.append(
                    f"  - {peer} ÷ ours (cache filled): {_ratio(theirs, warm)} "
                    f"(÷ the limit: {_ratio(theirs, limit)}, the most any tool could reach)"
                )
        limits = ours.get("limits") or {}
        out.append(
            f"  - load alone (cache filled) ÷ JSON decode of the same data: "
            f"{_ratio(limits.get('load_cached_s'), limits.get('json_decode_s'))}"
        )
    first, last = _find(rows1, "ours", n=1000), _find(rows1, "ours", n=5000)
    if first and last:
        a, b = _get(first, "replay_warm", "median_ms"), _get(last, "replay_warm", "median_ms")
        out.append(f"- W1 per-call median, N=5,000 ÷ N=1,000: {_ratio(b, a)}")
    above: dict[str, float] = {}
    for row in rows2:
        above[row["tool"]] = row["replay"]["wall_s"] - row["floor"]["wall_s"]
    if "ours" in above:
        for peer in ("cassetter", "vcrpy"):
            if peer in above:
                ratio = _ratio(above["ours"], above[peer])
                out.append(f"- W2 time above the floor, ours ÷ {peer}: {ratio}")
    sizes = sorted({row["n"] for row in rows3 if row["answer"] == 2000})
    small, big = (
        (
            _find(rows3, "ours", n=sizes[0], answer=2000),
            _find(rows3, "ours", n=sizes[-1], answer=2000),
        )
        if sizes
        else (None, None)
    )
    if small and big:
        out.append(
            f"- W3 cost per interaction, N={sizes[-1]:,} ÷ N={sizes[0]:,}: "
            f"{_ratio(per_interaction_ms(big), per_interaction_ms(small))}"
        )
    ours3, theirs3 = (
        _find(rows3, "ours", n=1000, answer=2000),
        _find(rows3, "cassetter", n=1000, answer=2000),
    )
    if ours3 and theirs3:
        ours_ms, theirs_ms = per_interaction_ms(ours3), per_interaction_ms(theirs3)
        promises = [_promise_ms(ours3, key) for key in ("guard_s", "fsync_s")]
        out.append(
            f"- W3 at N=1,000, ours ÷ cassetter: {_s(ours_ms)} ms ÷ {_s(theirs_ms)} ms "
            f"({_ratio(ours_ms, theirs_ms)})"
        )
        if ours_ms is not None and None not in promises:
            rest = ours_ms - sum(p for p in promises if p is not None)
            out.append(
                f"  - ours without the two promises cassetter does not keep (the secret "
                f"guard's scan, the fsync): {_s(rest)} ms ({_ratio(rest, theirs_ms)})"
            )
    return out


def markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]
    lines = [
        f"## Side by side{' (quick)' if results['quick'] else ''}",
        "",
        f"Python {machine['python']} on {machine['platform']}, {machine['cpus']} CPUs, "
        f"load average {machine['load_average']}; "
        + "; ".join(machine["tools"].values())
        + f". Whole run: {results.get('seconds', 0):.0f} s.",
        "",
        *w1(results["w1"]),
        "",
        *w2(results["w2"]),
        "",
        *w3(results["w3"]),
        "",
        *targets(results),
        "",
    ]
    return "\n".join(lines)
