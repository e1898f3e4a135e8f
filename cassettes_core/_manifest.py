"""The reproducibility manifest: which library, digest scheme, Python and SDKs made a cassette.

On replay a drifted version is reported as a :class:`CassetteVersionWarning`: the run is then
"structurally auditable" rather than "re-derivable". A digest scheme we do not know is an error.
"""

from __future__ import annotations

import functools
import platform
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from cassettes_core._digest import DIGEST_SCHEME
from cassettes_core._errors import CassetteFormatError

LIBRARY = "provider-cassettes"
KNOWN_DIGEST_SCHEMES = frozenset({DIGEST_SCHEME})
# SDKs whose version changes what a recording looks like; read from metadata, never imported.
TRACKED_SDKS = ("openai", "anthropic", "httpx", "httpx2")


class CassetteVersionWarning(UserWarning):
    """A cassette was recorded with other library or SDK versions than the ones running now."""


@functools.cache
def library_version() -> str:
    try:
        return metadata.version(LIBRARY)
    except metadata.PackageNotFoundError:
        from cassettes_core import __version__

        return __version__


@functools.cache
def _installed_sdks() -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for name in TRACKED_SDKS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return tuple(found.items())


def installed_sdks() -> dict[str, str]:
    """Versions of the tracked SDKs installed here (read once per process)."""
    return dict(_installed_sdks())


@dataclass(frozen=True)
class Manifest:
    library: str
    digest_scheme: str = DIGEST_SCHEME
    python: str = ""
    sdks: Mapping[str, str] = field(default_factory=dict)
    recorded_at: str = ""

    @classmethod
    def current(cls) -> Manifest:
        return cls(
            library=f"{LIBRARY} {library_version()}",
            python=platform.python_version(),
            sdks=installed_sdks(),
            recorded_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "library": self.library,
            "digest_scheme": self.digest_scheme,
            "python": self.python,
            "sdks": dict(self.sdks),
            "recorded_at": self.recorded_at,
        }

    @classmethod
    def from_dict(cls, data: Any, path: Path) -> Manifest:
        if not isinstance(data, Mapping):
            raise CassetteFormatError(path, "the manifest must be a mapping", location="manifest")
        scheme = data.get("digest_scheme", DIGEST_SCHEME)
        if not isinstance(scheme, str) or scheme not in KNOWN_DIGEST_SCHEMES:
            raise CassetteFormatError(
                path,
                f"digest scheme {scheme!r} is newer than this library understands "
                f"(it knows {', '.join(sorted(KNOWN_DIGEST_SCHEMES))}); "
                "upgrade provider-cassettes",
                location="manifest.digest_scheme",
            )
        sdks = data.get("sdks") or {}
        if not isinstance(sdks, Mapping):
            raise CassetteFormatError(path, "manifest.sdks must be a mapping", location="manifest")
        return cls(
            library=str(data.get("library", "")),
            digest_scheme=str(scheme),
            python=str(data.get("python", "")),
            sdks={str(k): str(v) for k, v in sdks.items()},
            recorded_at=str(data.get("recorded_at", "")),
        )


def version_drift(recorded: Manifest, running: Manifest) -> list[str]:
    """What differs between the versions that recorded a cassette and the ones running now."""
    drift: list[str] = []
    if recorded.library and recorded.library != running.library:
        drift.append(f"library: {recorded.library} → {running.library}")
    for name, version in sorted(recorded.sdks.items()):
        now = running.sdks.get(name)
        if now is not None and now != version:
            drift.append(f"{name}: {version} → {now}")
    return drift


def warn_on_drift(path: Path, recorded: Manifest) -> list[str]:
    """Warn (once per load) when the running versions differ from the recorded ones."""
    drift = version_drift(recorded, Manifest.current())
    if drift:
        warnings.warn(
            f"cassette {path} was recorded with other versions ({'; '.join(drift)}); "
            "replay is structurally auditable, not re-derivable. Re-record with "
            "CASSETTE_MODE=record to refresh it.",
            CassetteVersionWarning,
            stacklevel=3,
        )
    return drift
