"""Two recordings of the same tests, compared at the level a reviewer cares about (data).

Interactions are paired by digest (what was asked), and a digest asked several times by the
order of its recordings; requests left over are paired when they are equal but for churn (a
tool result answers a call whose id is fresh at every recording). A request only the new
recording holds is ``new``, one only the old recording holds is ``gone``, and a pair whose
answers differ in content is ``answered differently``, with the path-level differences of
the answers.

Re-recording changes things that are not content: this is *churn*, never reported. Churn is
the answer's headers, durations and stream timings, and, anywhere in an answer body, ids
(``id``, ``call_id``, ``tool_call_id``, ``request_id``, …), timestamps (``created``,
``created_at``, ``completed_at``, ``expires_at``), ``system_fingerprint``, and prompt-cache
counters (``cached_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``). A
stream is compared by what it says (assembled text, tool calls, how it ended), not by how the
provider cut it into events. The request's tuning (``params``) is not compared either: it is
not part of what was asked.

``diff --git REV`` compares the cassettes a git revision and the working tree disagree on.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cassettes_core import catalog
from cassettes_core._errors import ConfigError
from cassettes_core._model import Interaction
from cassettes_core.catalog import as_json
from cassettes_core.miss_report import FieldDiff

ChangeKind = Literal["new", "gone", "answered differently"]

CHURN_KEYS = frozenset(
    {
        "id",
        "call_id",
        "tool_call_id",
        "request_id",
        "response_id",
        "item_id",
        "created",
        "created_at",
        "completed_at",
        "expires_at",
        "system_fingerprint",
        "cached_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
)


@dataclass(frozen=True)
class Change:
    """One request that differs between recording ``a`` (old) and ``b`` (new)."""

    kind: ChangeKind
    provider: str
    model: str | None
    digest: str
    question: str
    seq_a: int | None = None
    seq_b: int | None = None
    diffs: tuple[FieldDiff, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "provider": self.provider,
            "model": self.model,
            "digest": self.digest,
            "asked": self.question,
            "seq_a": self.seq_a,
            "seq_b": self.seq_b,
            "differences": [
                {"path": d.path, "kind": d.kind, "a": d.recorded, "b": d.requested}
                for d in self.diffs
            ],
        }


@dataclass(frozen=True)
class Comparison:
    """Every change, and how many requests were answered the same."""

    changes: tuple[Change, ...]
    same: int

    def count(self, kind: ChangeKind) -> int:
        return sum(1 for change in self.changes if change.kind == kind)


def compare(a: Sequence[Interaction], b: Sequence[Interaction]) -> Comparison:
    """Recording ``a`` (old) against ``b`` (new)."""
    old = _by_digest(a)
    new = _by_digest(b)
    order = list(dict.fromkeys([*new, *old]))  # the new recording's order first
    pairs: list[tuple[Interaction, Interaction]] = []
    gone: list[Interaction] = []
    added: list[Interaction] = []
    for digest in order:
        before, after = old.get(digest, []), new.get(digest, [])
        pairs.extend(zip(before, after, strict=False))
        gone.extend(before[len(after) :])
        added.extend(after[len(before) :])
    # A tool result carries the id of the call it answers, fresh at every recording: requests
    # equal but for such ids are the same question, paired in order.
    by_key: dict[str, list[Interaction]] = {}
    for interaction in gone:
        by_key.setdefault(_churnless_key(interaction), []).append(interaction)
    unpaired: list[Interaction] = []
    for interaction in added:
        waiting = by_key.get(_churnless_key(interaction))
        if waiting:
            pairs.append((waiting.pop(0), interaction))
        else:
            unpaired.append(interaction)
    changes: list[Change] = []
    same = 0
    for x, y in sorted(pairs, key=lambda pair: pair[1].seq):
        diffs = tuple(path_diff(content_of(x), content_of(y)))
        if diffs:
            changes.append(
                _change("answered differently", y, seq_a=x.seq, seq_b=y.seq, diffs=diffs)
            )
        else:
            same += 1
    changes += [_change("new", y, seq_b=y.seq) for y in unpaired]
    left = sorted((i for waiting in by_key.values() for i in waiting), key=lambda i: i.seq)
    changes += [_change("gone", x, seq_a=x.seq) for x in left]
    return Comparison(tuple(changes), same)


def _churnless_key(interaction: Interaction) -> str:
    fields = without_churn(dict(interaction.request.fields))
    return json.dumps([interaction.provider, fields], sort_keys=True, default=str)


def _by_digest(interactions: Sequence[Interaction]) -> dict[str, list[Interaction]]:
    grouped: dict[str, list[Interaction]] = {}
    for interaction in sorted(interactions, key=lambda i: i.seq):
        grouped.setdefault(interaction.digest, []).append(interaction)
    return grouped


def _change(kind: ChangeKind, interaction: Interaction, **more: Any) -> Change:
    said = catalog.reader_for(interaction.provider).asked(interaction.request.body())
    if said.text is not None:
        question = said.text
    elif said.tool_results:
        question = "tool results: " + ", ".join(key or "?" for key, _ in said.tool_results)
    else:
        question = ""
    return Change(
        kind=kind,
        provider=interaction.provider,
        model=interaction.request.model,
        digest=interaction.digest,
        question=question,
        **more,
    )


def content_of(interaction: Interaction) -> dict[str, Any]:
    """What an answer says, churn removed: the part a re-record must keep to be "the same"."""
    out: dict[str, Any] = {}
    if interaction.response is not None:
        out["response"] = {
            "status": interaction.response.status,
            "body": without_churn(interaction.response.body),
        }
    if interaction.stream is not None:
        reader = catalog.reader_for(interaction.provider)
        said = reader.streamed([event.data for event in interaction.stream])
        if said.known:
            out["stream"] = {
                "text": said.text,
                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in said.tool_calls],
            }
        else:  # a stream we cannot assemble: its events' data, churn removed
            out["stream"] = [without_churn(event.data) for event in interaction.stream]
    if interaction.error is not None:
        error = interaction.error
        out["error"] = {
            "kind": error.kind,
            "status": error.status,
            "body": without_churn(error.body),
        }
    return out


def without_churn(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: without_churn(v) for k, v in value.items() if k not in CHURN_KEYS}
    if isinstance(value, list):
        return [without_churn(item) for item in value]
    return value


def path_diff(a: Any, b: Any, path: str = "") -> Iterator[FieldDiff]:
    """The differences from ``a`` to ``b``, by path (``response.body.choices[0]…``)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in dict.fromkeys([*a, *b]):
            where = f"{path}.{key}" if path else str(key)
            if key not in b:
                yield FieldDiff(where, "removed", recorded=a[key])
            elif key not in a:
                yield FieldDiff(where, "added", requested=b[key])
            else:
                yield from path_diff(a[key], b[key], where)
    elif isinstance(a, list) and isinstance(b, list):
        for n in range(max(len(a), len(b))):
            where = f"{path}[{n}]"
            if n >= len(b):
                yield FieldDiff(where, "removed", recorded=a[n])
            elif n >= len(a):
                yield FieldDiff(where, "added", requested=b[n])
            else:
                yield from path_diff(a[n], b[n], where)
    elif type(a) is not type(b) and not (_number(a) and _number(b)):
        yield FieldDiff(path or "(answer)", "type_changed", recorded=a, requested=b)
    elif a != b:
        yield FieldDiff(path or "(answer)", "changed", recorded=a, requested=b)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def render_change(change: Change) -> str:
    """The one-line head of a change (its differences are rendered by ``FieldDiff.render``)."""
    seqs = {
        "new": f"#{change.seq_b}",
        "gone": f"#{change.seq_a}",
        "answered differently": f"#{change.seq_a} → #{change.seq_b}",
    }[change.kind]
    question = as_json(change.question)
    if len(question) > 70:
        question = question[:69] + "…"
    model = change.model or "no model"
    return (
        f"{change.kind}: {seqs} {change.provider} {model} {change.digest[:12]} asked {question!r}"
    )


_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Changed:
    """One cassette file: its text at the revision (``None``: not there) and its path now
    (``None``: deleted since)."""

    name: str
    old_text: str | None
    new_path: Path | None


def _git(args: Sequence[str], cwd: Path) -> str:
    try:
        done = subprocess.run(
            ["git", *args],  # noqa: S607 -- the user's git, found on their PATH
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
    except FileNotFoundError:
        raise ConfigError(
            "git is not installed (or not on PATH), so --git cannot read another revision\n"
            "TIP: install git, or compare two files: cassettes diff OLD.yaml NEW.yaml"
        ) from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise _git_error(args, message[0] if message else f"exit {done.returncode}")
    return done.stdout


def _git_error(args: Sequence[str], message: str) -> ConfigError:
    if "not a git repository" in message:
        return ConfigError(
            f"not inside a git repository ({message})\n"
            "TIP: run `cassettes diff --git REV` from inside the repository, or compare two "
            "files: cassettes diff OLD.yaml NEW.yaml"
        )
    return ConfigError(
        f"git {' '.join(args[:2])} failed: {message}\n"
        "TIP: check the revision (`git log --oneline` lists them), e.g. --git HEAD~1 or "
        "--git origin/main"
    )


def changed_cassettes(rev: str, paths: Sequence[str], cwd: Path) -> list[Changed]:
    """Every ``*.yaml``/``*.yml`` under ``paths`` (default: the whole repository) that differs
    between ``rev`` and the working tree, untracked new files included."""
    if rev.startswith("-"):
        raise ConfigError(f"--git {rev!r} is not a revision\nTIP: give one, e.g. --git HEAD~1")
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    # Any commit-ish git reads (HEAD~1, a tag, :/message, a hash) to the commit's hash first:
    # a suffix glued onto `:/message` would become part of the message searched for.
    named = _git(["rev-parse", "--verify", "--end-of-options", rev], cwd).strip()
    rev = _git(["rev-parse", "--verify", f"{named}^{{commit}}"], cwd).strip()
    scope = ["--", *paths] if paths else ["--", str(top)]
    names = _git(["diff", "--name-only", "--no-renames", "-z", rev, *scope], cwd).split("\0")
    names += _git(
        ["ls-files", "--others", "--exclude-standard", "-z", "--full-name", *scope], cwd
    ).split("\0")
    found: list[Changed] = []
    for name in sorted({n for n in names if n.lower().endswith(_SUFFIXES)}):
        listed = _git(["ls-tree", "--name-only", rev, "--", name], top).strip()
        old = _git(["show", f"{rev}:{name}"], top) if listed else None
        now = top / name
        found.append(Changed(name, old, now if now.exists() else None))
    return found
