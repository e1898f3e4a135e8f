"""The ``--write`` rules: which cassettes may be re-recorded, and which must stay as they are.

A rewrite must leave a cassette that the next test run replays without a miss, and must not lose
anything a person put there. So a file is left byte for byte as it was when:

- its answers show no structural drift (unless ``--force-write``): value churn is not worth a
  diff in review;
- it is a conversation chain (:mod:`cassette_refresh._chains`): a later request quotes an answer
  the rewrite would replace, and the test, building that request from the new answer, would
  send one the cassette does not hold. Only running the test re-records it consistently;
- re-rendering it would lose something: a YAML comment, a key the library does not write, a
  value written in a form the library would not write back.

Interactions marked ``redacted: true`` (a ``before_record`` hook edited them) keep their recorded
answer: the live answer to the stored, redacted request is not what the test was given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cassette_refresh._chains import find_links
from cassettes_core import CassetteError, Interaction
from cassettes_core.store import (
    BOOKKEEPING_KEYS,
    Manifest,
    first_comment_line,
    load_yaml,
    render,
)

CASSETTE_DIR = "cassettes"
# The mark a ``record`` run leaves at the top of a file it starts over (the store's ``run:``):
# bookkeeping for the next record run, which a plain rewrite drops, as the store's own does.
RUN_MARK_KEY = "run"
RUN_MARK_FIELDS = {"id": str, "process": str, "started": float}


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


def _is_run_mark(value: Any) -> bool:
    """Whether ``value`` is a record run's mark exactly as the library writes one."""
    if not isinstance(value, Mapping) or set(value) != set(RUN_MARK_FIELDS):
        return False
    return all(
        isinstance(value[name], kind) or (kind is float and type(value[name]) is int)
        for name, kind in RUN_MARK_FIELDS.items()
    )


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
    # A rewrite may write the current format version, and drops the store's bookkeeping: its
    # checksum, and a record run's mark when it is exactly the library's (else a hand edit).
    for key in ("version", *BOOKKEEPING_KEYS):
        if key != RUN_MARK_KEY or _is_run_mark(stored.get(key)):
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
