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
        replay, floor = row["replay"], row["floor"]
        above = replay["wall_s"] - floor["wall_s"]
        status = "" if replay["ok"] else f" (failed: {replay['tail'][:60]})"
        out.append(
            f"| {row['tool']}{status} | {row['tests']} | {_s(replay['wall_s'], 2)} | "
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
        "### W3 record (cost per recorded interaction: record run minus the same calls live)",
        "",
        "| N | answer | tool | live s | record s | ms per interaction |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cost = per_interaction_ms(row)
        error = _get(row, "record", "error")
        note = f" failed: {error[:60]}" if error else ""
        out.append(
            f"| {row['n']:,} | {row['answer']:,} B | {row['tool']}{note} | "
            f"{_s(_get(row, 'live', 'total_s'), 2)} | {_s(_get(row, 'record', 'total_s'), 2)} | "
            f"{_s(cost, 3)} |"
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
    ]
    return "\n".join(lines)
