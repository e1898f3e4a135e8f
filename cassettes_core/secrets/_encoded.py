"""Keys written in base64: ``c2stcHJvai0…`` is ``sk-proj-…`` to anyone who decodes it.

A model asked to smuggle a key out, or a config pasted from a Kubernetes secret, writes it in
base64. Each run of token characters of a key's encoded length (24 to 1,024 characters; a
longer run is an embedding, an image or a signature) is decoded, and when the bytes are
printable text, our key formats and the environment's credentials are looked for in it. The
runs are those the plugins' gates already found, so an ordinary text costs one decode per id.
"""

from __future__ import annotations

import base64
import binascii

from cassettes_core.secrets._batch import Batch
from cassettes_core.secrets._detectors import Hit, find_formats
from cassettes_core.secrets._env import find_environment_values
from cassettes_core.secrets._gates import runs

__all__ = ["ENCODED", "find_encoded_batch"]

#: Said of a finding in base64-decoded text.
ENCODED = " (base64-encoded)"
_MIN_RUN, _MAX_RUN = 24, 1024
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")


def find_encoded_batch(batch: Batch, environment: dict[str, str]) -> dict[int, list[Hit]]:
    """Keys found in the base64-decoded runs of each string of ``batch``, by index.

    A hit's value is the encoded run as stored (what a person would have to remove).
    """
    found: dict[int, list[Hit]] = {}
    text = batch.text
    for start, end in runs(batch):
        if not _MIN_RUN <= end - start <= _MAX_RUN:
            continue
        decoded = _decoded(text[start:end])
        if decoded is None:
            continue
        hits = [*find_formats(decoded), *find_environment_values(decoded, environment)]
        if hits:
            index, offset = batch.locate(start)
            found.setdefault(index, []).append(Hit(hits[0].kind + ENCODED, text[start:end], offset))
    return found


def _decoded(run: str) -> str | None:
    # The run's bytes as text, if it is base64 (either alphabet) of printable ASCII.
    raw = run.encode("ascii", "ignore")
    if len(raw) != len(run) or not _BASE64.issuperset(raw):
        return None
    padded = raw.rstrip(b"=")
    padded += b"=" * (-len(padded) % 4)
    try:
        data = base64.urlsafe_b64decode(padded.replace(b"+", b"-").replace(b"/", b"_"))
    except (binascii.Error, ValueError):
        return None
    if not data.isascii():
        return None
    decoded = data.decode("ascii")
    # Printable text, over lines (a PEM key file is text too).
    printable = decoded.translate(_LINE_BREAKS).isprintable()
    return decoded if printable else None


_LINE_BREAKS = str.maketrans("", "", "\r\n\t")
