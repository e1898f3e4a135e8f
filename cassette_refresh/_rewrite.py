"""``--write``: re-recording cassettes with their live answers, and which must stay as they are.

A file is left byte for byte as it was when its answers show no structural drift (unless
``--force-write``), when it is a conversation chain (:mod:`cassette_refresh._chains`), or when
re-rendering it would lose a comment or a hand edit. Redacted interactions, and answers where
the live model made another choice, keep their recorded answer. Writes go through the secret
guard and the store's atomic writer, under the cassette's lock; the manifest is kept but for
``recorded_at``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cassette_refresh._chains import find_links
from cassette_refresh._reissue import CheckRun, LiveAnswer, recorded_answer
from cassette_refresh._report import CheckResult, KeptAnswer, Unwritten
from cassettes_core import (
    CassetteError,
    Interaction,
    LLMResponse,
    StreamEvent,
    UnsafeCassetteError,
)
from cassettes_core.catalog import refused, tools_called
from cassettes_core.store import (
    BOOKKEEPING_KEYS,
    Manifest,
    WriteGuard,
    atomic_write,
    first_comment_line,
    load_yaml,
    locked,
    read_snapshot,
    read_text,
    render,
)

CASSETTE_DIR = "cassettes"


class RewriteRefusedError(CassetteError):
    """``--write`` left a cassette as it was, because rewriting it would break or lose it."""

    def __init__(self, path: Path | str, reason: str, *, next_step: str) -> None:
        self.path = Path(path)
        self.reason = reason
        self.next_step = next_step
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"refused to rewrite {self.path}: {self.why()}"

    def why(self) -> str:
        """The reason and the next step, without the path (for reports that name it already)."""
        return f"{self.reason}. {self.next_step}"


def _test_of(path: Path) -> tuple[Path, str] | None:
    """(the project folder, the test's node id), read from the plugin's default layout:
    ``<project>/cassettes/<test module path>/<test name>.yaml``.

    When the test module is on disk but defines no such test (a cassette named in its marker),
    the node id is the module's; when it cannot be read here, the layout's guess stands.
    """
    parts = path.parts[:-1]
    if CASSETTE_DIR not in parts:
        return None
    start = len(parts) - parts[::-1].index(CASSETTE_DIR)
    module = parts[start:]
    if not module:
        return None
    root = Path(*parts[: start - 1])
    name, bracket, params = path.stem.partition("[")
    test = name.replace(".", "::") + bracket + params
    source = root / Path(*module[:-1]) / f"{module[-1]}.py"
    try:
        code = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return root, f"{'/'.join(module)}.py::{test}"  # not readable here: the layout's guess
    if f"def {name.rpartition('.')[2]}(" not in code:
        return root, f"{'/'.join(module)}.py"
    return root, f"{'/'.join(module)}.py::{test}"


def rerecord_command(path: Path) -> str:
    """The pytest command that re-records ``path`` (from the project folder), else a template."""
    found = _test_of(path)
    node = found[1] if found else f"<the test file>::<the test using {path.name}>"
    return f"pytest {node} --cassette-mode=record"


def rerecord_step(path: Path) -> str:
    """What to do instead of a rewrite: run the test, from the folder the layout points to."""
    found = _test_of(path)
    where = f" from {found[0]}" if found and str(found[0]) not in {"", "."} else ""
    return f"Re-record it by running its test{where}: `{rerecord_command(path)}`"


def chain_refusal(
    path: Path, interactions: Sequence[Interaction], rewritten: frozenset[int]
) -> RewriteRefusedError | None:
    """A refusal when a later request quotes an answer that would be rewritten."""
    links = find_links(interactions, sources=rewritten)
    if not links:
        return None
    more = f" (and {len(links) - 1} more)" if len(links) > 1 else ""
    return RewriteRefusedError(
        path,
        f"it is a conversation chain: {links[0].describe()}{more}, so a re-recorded answer "
        "would make the next run send a request the cassette does not hold",
        next_step=rerecord_step(path),
    )


def changed_since_check(
    path: Path,
    interactions: Sequence[Interaction],
    answers: Mapping[int, object],
    digests: Mapping[int, str],
) -> RewriteRefusedError | None:
    """A refusal when an interaction to rewrite holds another request than the one re-sent."""
    held = {interaction.seq: interaction.digest for interaction in interactions}
    moved = sorted(seq for seq in answers if seq in digests and held.get(seq) != digests[seq])
    if not moved:
        return None
    return RewriteRefusedError(
        path,
        f"it changed while the check ran (seq {moved[0]} no longer holds the request re-sent)",
        next_step="Run the check again",
    )


def _difference(kept: Any, again: Any, path: str) -> str | None:
    """The first path where ``again`` (a re-render) lost or changed what ``kept`` (the file)
    holds."""
    if isinstance(kept, Mapping) and isinstance(again, Mapping):
        for key, value in kept.items():
            here = f"{path}.{key}" if path else str(key)
            if key not in again:
                if value is None:  # an explicit null the library leaves out
                    continue
                return here
            where = _difference(value, again[key], here)
            if where is not None:
                return where
        return None  # keys only the re-render has are defaults it fills in, nothing lost
    if isinstance(kept, list) and isinstance(again, list) and len(kept) == len(again):
        for n, (one, other) in enumerate(zip(kept, again, strict=True)):
            where = _difference(one, other, f"{path}[{n}]")
            if where is not None:
                return where
        return None
    same = kept == again and type(kept) is type(again)
    return None if same else path or "the document"


def _readable(where: str, document: Mapping[str, Any]) -> str:
    """``interactions[2].response…`` as ``seq 3: response…``."""
    head, dot, rest = where.partition("].")
    if head.startswith("interactions[") and dot:
        index = int(head.removeprefix("interactions["))
        items = document.get("interactions") or []
        seq = items[index].get("seq") if index < len(items) else None
        return f"interaction seq {seq}: {rest}"
    return where


def edit_refusal(
    path: Path, text: str, manifest: Manifest, interactions: Sequence[Interaction]
) -> RewriteRefusedError | None:
    """A refusal when re-rendering the file from what it holds would lose something."""
    keep = "Keep it as it is, or move the edit into a before_record hook and re-run its test"
    line = first_comment_line(text)
    if line is not None:
        return RewriteRefusedError(
            path, f"it has a comment (line {line}) a rewrite would drop", next_step=keep
        )
    stored = load_yaml(text)
    again = load_yaml(render(manifest, interactions))
    # A rewrite may write the current format version, and drops the store's bookkeeping.
    for key in ("version", *BOOKKEEPING_KEYS):
        stored.pop(key, None)
        again.pop(key, None)
    where = _difference(stored, again, "")
    if where is None:
        return None
    return RewriteRefusedError(
        path,
        f"it was edited by hand ({_readable(where, stored)} is not what the library writes), "
        "and a rewrite would lose that",
        next_step=keep,
    )


def rerecorded(interaction: Interaction, live: LiveAnswer) -> Interaction:
    """``interaction`` with its answer replaced by the live one (request, seq, digest kept)."""
    stream, response = None, None
    if live.events is not None:
        timed = zip(live.events, live.event_ms or (), strict=True)
        stream = tuple(StreamEvent(data=data, event=name, t_ms=ms) for (name, data), ms in timed)
    else:
        response = LLMResponse(body=live.body, status=live.status, headers=dict(live.headers))
    return dataclasses.replace(
        interaction, response=response, stream=stream, error=None, duration_ms=live.duration_ms
    )


def write_back(
    path: Path,
    live: Mapping[int, LiveAnswer],
    *,
    guard: WriteGuard,
    digests: Mapping[int, str],
) -> tuple[bool, dict[int, str]]:
    """Re-record the interactions of ``path`` that have a live answer (by seq), re-read under
    its lock; ``digests`` are those of the requests re-sent. Returns whether the file was
    written and the seqs kept as recorded (with why); :class:`RewriteRefusedError` for a file
    that must stay as it is."""
    target = path.resolve()  # a symlinked cassette is written through to its target
    with locked(target):
        snapshot = read_snapshot(target)
        text = read_text(target)
        if snapshot.manifest is None or text is None:
            raise RewriteRefusedError(
                path, "it was removed while the check ran", next_step="Nothing was written"
            )
        moved = changed_since_check(path, snapshot.interactions, live, digests)
        if moved is not None:
            raise moved
        kept = _kept_as_recorded(snapshot.interactions, live)
        rewritten = frozenset(i.seq for i in snapshot.interactions if i.seq in live) - set(kept)
        if not rewritten:
            return False, kept
        refusal = chain_refusal(path, snapshot.interactions, rewritten) or edit_refusal(
            path, text, snapshot.manifest, snapshot.interactions
        )
        if refusal is not None:
            raise refusal
        interactions = [
            rerecorded(i, live[i.seq]) if i.seq in rewritten else i for i in snapshot.interactions
        ]
        guard.check([i.to_dict() for i in interactions], path=path)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        manifest = dataclasses.replace(snapshot.manifest, recorded_at=now)
        atomic_write(target, render(manifest, interactions))
    return True, kept


REDACTED = "redacted: a before_record hook edited its request"


def _choice(answer: Any) -> str:
    """What an answer chose: the tools it called, a refusal, or neither (it answered)."""
    names = tools_called(answer)
    made = [f"a call to {', '.join(sorted(names))}"] if names else []
    made += ["a refusal"] if refused(answer) else []
    return " and ".join(made) or "an answer without tool calls"


def another_choice(recorded: Any, live: Any) -> str | None:
    """Why ``live`` chose otherwise than ``recorded`` (the test was written against the
    recorded choice: the tools called, a refusal); ``None`` when they chose alike. Text beside
    a tool call and reasoning items are no choice."""
    before, after = _choice(recorded), _choice(live)
    if before == after:
        return None
    return (
        f"the live answer made another choice ({after}; recorded: {before}), which its test "
        "was not written for: re-record it by running its test if the new choice is right"
    )


def _kept_as_recorded(
    interactions: Sequence[Interaction], live: Mapping[int, LiveAnswer]
) -> dict[int, str]:
    """The interactions with a live answer that keep their recorded one, and why: redacted
    ones (the stored request is not the one answered), and those whose live answer made
    another choice than the recorded one (:func:`another_choice`)."""
    kept: dict[int, str] = {}
    for interaction in interactions:
        answer = live.get(interaction.seq)
        if answer is None:
            continue
        if interaction.redacted:
            kept[interaction.seq] = REDACTED
            continue
        recorded = recorded_answer(interaction)
        why = another_choice(recorded.data if recorded else None, answer.data)
        if why is not None:
            kept[interaction.seq] = why
    return kept


def write_all(
    files: Sequence[Path], run: CheckRun, result: CheckResult, *, guard: WriteGuard, force: bool
) -> CheckResult:
    """``result`` with what ``--write`` did: each file of ``files`` with live answers re-recorded
    if its own answers drifted (every one with ``force``), else listed as unchanged. Each file
    stands alone; the files left as they were are the ``error``, with a TIP."""
    written: list[str] = []
    refused: list[tuple[str, CassetteError | OSError]] = []
    kept: list[KeptAnswer] = []
    unchanged: list[str] = []
    for path in files:
        name = str(path)
        answers = {seq: answer for (file, seq), answer in run.live.items() if file == name}
        if not answers:
            continue
        if not force and name not in run.drifted:
            unchanged.append(name)
            continue
        digests = {seq: d for (file, seq), d in run.digests.items() if file == name}
        try:
            done, why = write_back(path, answers, guard=guard, digests=digests)
        except (CassetteError, OSError) as exc:
            refused.append((name, exc))
            continue
        kept += [KeptAnswer(name, seq, reason) for seq, reason in why.items()]
        if done:
            written.append(name)
    not_written = tuple(Unwritten(name, _reason(exc)) for name, exc in refused)
    result = dataclasses.replace(
        result,
        written=tuple(written),
        not_written=not_written,
        kept=tuple(kept),
        unchanged=tuple(unchanged),
    )
    if not refused:
        return result
    total = len(written) + len(refused)
    lines = [
        f"--write left {len(refused)} of {total} cassettes as they were "
        f"(re-recorded: {', '.join(written) or 'none'})"
    ]
    lines += [f"  {u.path}: {u.reason.replace(chr(10), chr(10) + '  ')}" for u in not_written]
    lines.append(_write_tip([exc for _, exc in refused]))
    error = "\n".join(lines)
    return dataclasses.replace(result, error=f"{result.error}\n{error}" if result.error else error)


def _write_tip(refusals: Sequence[BaseException]) -> str:
    """One TIP line: what to do about each kind of refusal met."""
    steps = []
    if any(isinstance(exc, RewriteRefusedError) for exc in refusals):
        steps.append(
            "re-record each conversation by running its test with --cassette-mode=record (the "
            "command is named above); keep hand-edited files as they are"
        )
    if any(isinstance(exc, UnsafeCassetteError) for exc in refusals):
        steps.append(
            "scrub each value in a before_record hook, or, if a value is known to be safe, let "
            "it through with --allow-secret VALUE"
        )
    if any(not isinstance(exc, RewriteRefusedError | UnsafeCassetteError) for exc in refusals):
        steps.append("check they can be written")
    text = "; ".join(steps)
    return f"TIP: those files are unchanged on disk. {text[:1].upper()}{text[1:]}."


def _reason(exc: BaseException) -> str:
    """Why a file was not written, without the library's own TIP (the command gives its own)."""
    if isinstance(exc, RewriteRefusedError):
        return f"refused to rewrite: {exc.why()}"
    text = str(exc.strerror) if isinstance(exc, OSError) and exc.strerror else str(exc)
    return "\n".join(line for line in text.splitlines() if not line.startswith("TIP:"))
