"""Installed versions as ``importlib.metadata.version`` gives them (white box: the reader is
private to the store); a distribution without a version counts as not installed."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from cassettes_core.store import _manifest
from cassettes_core.store._manifest import Manifest, installed_sdks


def _fake_distribution(site: Path, name: str, text: str) -> None:
    folder = site / f"{name}-0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(text, encoding="utf-8")


def test_a_version_only_in_the_body_or_missing_goes_to_the_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the headers count: a ``Version:`` line in the description is not the version; a
    distribution without one counts as not installed (``metadata.version`` gives None, warns
    or raises ``KeyError`` there, depending on the Python and importlib_metadata versions)."""
    _fake_distribution(
        tmp_path,
        "w2probe_a",
        "Metadata-Version: 2.1\nName: w2probe-a\nSummary: x\n  Version: 7 (folded)\n"
        "Version: 1.2.3\n\n"
        "Version: 9.9.9 (from the description)\n",
    )
    _fake_distribution(
        tmp_path,
        "w2probe_b",
        "Metadata-Version: 2.1\nName: w2probe-b\n\nVersion: 9.9.9 (from the description)\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _manifest._installed_version("w2probe-a") == "1.2.3" == metadata.version("w2probe-a")
    with pytest.raises(metadata.PackageNotFoundError):
        _manifest._installed_version("w2probe-b")
    with pytest.raises(metadata.PackageNotFoundError):
        _manifest._installed_version("w2probe-not-installed")


def test_the_running_versions_kept_per_process_are_the_manifest_of_now() -> None:
    library, sdks = _manifest._running_versions()
    now = Manifest.current()
    assert (library, sdks) == (now.library, dict(now.sdks))
    assert sdks == installed_sdks()
