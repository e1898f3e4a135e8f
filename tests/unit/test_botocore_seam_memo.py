"""Whether botocore is installed, asked once per "yes" (white box: the seam's own memo)."""

from __future__ import annotations

import pytest

from cassettes_core.transport import botocore as botocore_seam


def test_botocore_found_is_kept_not_found_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A yes is kept (no search of the path at every interception); a no is asked again, so a
    botocore installed later in the process is still watched for."""
    import importlib.util

    asked: list[str] = []
    answer: list[object] = [None]

    def find_spec(name: str) -> object:
        asked.append(name)
        return answer[0]

    monkeypatch.setattr(botocore_seam, "_found", False)
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert not botocore_seam._installed()
    assert not botocore_seam._installed()
    assert asked == ["botocore", "botocore"]
    answer[0] = object()
    assert botocore_seam._installed()
    assert botocore_seam._installed()
    assert botocore_seam._installed()
    assert asked == ["botocore"] * 3
