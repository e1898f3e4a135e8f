"""The reproducibility manifest: which library, digest scheme, Python and SDKs made a cassette.

On replay a drifted version is reported: the run is then "structurally auditable" rather than
"re-derivable". Outside pytest that is a :class:`CassetteVersionWarning` (filter it by its
category); the pytest plugin lists drift once per session in its summary instead (ini
``cassette_version_drift``). Only versions that shape the recording count (see
:func:`version_drift`). A digest scheme we do not know is an error.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from cassettes_core import catalog
from cassettes_core._errors import CassetteFormatError, ConfigError, VersionDriftError
from cassettes_core._version import __version__
from cassettes_core.catalog import DEFAULT_CATALOG
from cassettes_core.digest import DIGEST_SCHEME

if TYPE_CHECKING:
    from cassettes_core._model import Interaction

LIBRARY = "provider-cassettes"
KNOWN_DIGEST_SCHEMES = frozenset({DIGEST_SCHEME})
# SDKs whose version changes what a recording looks like; read from metadata, never imported.
_SDKS = DEFAULT_CATALOG.sdks()  # each provider's own SDK, as the catalog names it
_HTTP_LIBRARIES = ("httpx", "httpx2")
TRACKED_SDKS = (*_SDKS, *_HTTP_LIBRARIES)
# What a Recorder does with drift: warn (a CassetteVersionWarning), ignore it (the pytest
# plugin lists it in its summary instead), or raise VersionDriftError.
DriftPolicy = Literal["warn", "ignore", "error"]
DRIFT_POLICIES: tuple[str, ...] = get_args(DriftPolicy)
DRIFT_VARIABLE = "CASSETTE_VERSION_DRIFT"  # the policy outside pytest, when code gives none


FORK_KEYS = ("forked_from", "side_effects_replayed")


class CassetteVersionWarning(UserWarning):
    """A cassette was recorded with other library or SDK versions than the ones running now."""


@functools.cache  # read for every cassette opened: the installed version is read once
def library_version() -> str:
    try:
        return _installed_version(LIBRARY)
    except metadata.PackageNotFoundError:
        return __version__


def _installed_version(name: str) -> str:
    """``metadata.version(name)``; a distribution whose metadata gives no version counts as
    not installed (``PackageNotFoundError``)."""
    version = metadata.distribution(name).metadata.get_all("Version") or []
    if not version or not isinstance(version[0], str) or not version[0].strip():
        raise metadata.PackageNotFoundError(name)
    return version[0].strip()


@functools.cache
def _installed_sdks() -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for name in TRACKED_SDKS:
        try:
            found[name] = _installed_version(name)
        except metadata.PackageNotFoundError:
            continue
    return tuple(found.items())


def installed_sdks() -> dict[str, str]:
    """Versions of the tracked SDKs installed here (read once per process)."""
    return dict(_installed_sdks())


@functools.cache
def _running_versions() -> tuple[str, dict[str, str]]:
    """This process's library and SDK versions, as a manifest of now names them (read once:
    every cassette a session opens is compared with them)."""
    return f"{LIBRARY} {library_version()}", installed_sdks()


@dataclass(frozen=True)
class Manifest:
    library: str
    digest_scheme: str = DIGEST_SCHEME
    python: str = ""
    sdks: Mapping[str, str] = field(default_factory=dict)
    recorded_at: str = ""
    # What ``cassettes fork`` adds (``forked_from``, ``side_effects_replayed``), kept through
    # appends; any other key a person adds is not the library's and is not kept.
    fork: Mapping[str, Any] = field(default_factory=dict)

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
            **self.fork,
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
            library=_text(data.get("library")),
            digest_scheme=str(scheme),
            python=_text(data.get("python")),
            # A version left out (null) is unknown, not the version "None".
            sdks={str(k): str(v) for k, v in sdks.items() if v is not None},
            recorded_at=_text(data.get("recorded_at")),
            fork={k: data[k] for k in FORK_KEYS if k in data},
        )


@dataclass(frozen=True)
class VersionDrift:
    """One version that differs between the recording and this run."""

    name: str
    recorded: str
    running: str

    def __str__(self) -> str:
        return f"{self.name}: {self.recorded} → {self.running}"


def version_drift(
    recorded: Manifest, running: Manifest, *, providers: Iterable[str] | None = None
) -> list[VersionDrift]:
    """The versions worth reporting that differ between a cassette's recording and now.

    ``providers`` are the providers of the cassette's interactions (``None``: unknown, every
    SDK counts). An SDK counts only when it made some of them (the endpoint's ``sdk`` in the
    catalog: ``openai`` for ``openai.*`` and ``together.chat``, ``mistralai`` for
    ``mistral.chat``), and then any change of its version does; ``httpx``,
    ``httpx2`` and this library count only when their major or minor version changed (a patch
    release does not change what a recording looks like).
    """
    # The SDK each provider's calls come through, as the catalog names it (`mistral.chat`:
    # mistralai, `together.chat`: openai); a provider it does not know, by its name's family.
    families = None if providers is None else {_sdk_of(p) for p in providers}
    drift: list[VersionDrift] = []
    library_then, library_now = _version_part(recorded.library), _version_part(running.library)
    # A manifest that gives no version (a bare name, written by hand) says nothing of drift.
    if _has_version(library_then) and _minor(library_then) != _minor(library_now):
        drift.append(VersionDrift(LIBRARY, library_then, library_now))
    sdk_made_calls = families is None or bool(families & set(_SDKS))
    for name, version in sorted(recorded.sdks.items()):
        now = running.sdks.get(name)
        if now is None or now == version or not _has_version(version):
            continue
        if name in _SDKS:
            if families is None or name in families:
                drift.append(VersionDrift(name, version, now))
        elif name in _HTTP_LIBRARIES and sdk_made_calls and _minor(version) != _minor(now):
            drift.append(VersionDrift(name, version, now))
    return drift


def _sdk_of(provider: str) -> str:
    endpoint = catalog.current().get(provider)
    if endpoint is None:
        return provider.partition(".")[0]
    return endpoint.sdk or endpoint.family


def check_drift_policy(policy: object) -> None:
    if policy is not None and policy not in DRIFT_POLICIES:
        raise ConfigError(f"on_version_drift={policy!r}: choose one of {', '.join(DRIFT_POLICIES)}")


def drift_on_load(
    path: Path,
    recorded: Manifest,
    interactions: Sequence[Interaction],
    policy: DriftPolicy | None = None,
) -> list[VersionDrift]:
    """The drift of a loaded cassette, reported as ``policy`` says (warned, ignored, raised).

    Inside a pytest session the drift also goes to the session's summary, and ``policy``
    ``None`` means the session's choice (ini ``cassette_version_drift``); outside, the
    ``CASSETTE_VERSION_DRIFT`` variable, else ``warn``.
    """
    check_drift_policy(policy)
    library, sdks = _running_versions()
    if recorded.sdks == sdks and recorded.library == library:
        return []  # the common case costs no walk over the interactions, nor a manifest
    running = Manifest.current()
    drift = version_drift(recorded, running, providers={i.provider for i in interactions})
    if not drift:
        return drift
    session = _pytest_session_reporter()
    if session is not None:
        session.report(path, drift)
    chosen = policy or (
        SESSION_DRIFT_POLICIES.get(session.policy) if session is not None else _environment_policy()
    )
    if chosen == "error":
        raise VersionDriftError(path, drift)
    if chosen == "warn":
        warn_on_drift(path, drift)
    return drift


#: The pytest plugin's ``cassette_version_drift`` choices, as recorder policies (its summary
#: lists drift either way).
SESSION_DRIFT_POLICIES: Mapping[str, DriftPolicy] = MappingProxyType(
    {"summary": "ignore", "warn": "warn", "error": "error"}
)


def _environment_policy() -> DriftPolicy:
    """``CASSETTE_VERSION_DRIFT`` (``warn``, ``ignore`` or ``error``) outside pytest."""
    value = os.environ.get(DRIFT_VARIABLE, "").strip().lower() or "warn"
    if value not in DRIFT_POLICIES:
        raise ConfigError(f"{DRIFT_VARIABLE}={value!r}: choose one of {', '.join(DRIFT_POLICIES)}")
    return cast("DriftPolicy", value)


def _pytest_session_reporter() -> Any:
    """The running pytest session's drift reporter (``pytest_plugin._report``), if any.

    Looked up, never imported: the core does not depend on the plugin, and a process without
    a pytest session has none.
    """
    module = sys.modules.get("pytest_plugin._report")
    return module.active() if module is not None else None


def warn_on_drift(path: Path, drift: Sequence[VersionDrift]) -> None:
    """The :class:`CassetteVersionWarning` for ``drift`` (filter it by its category)."""
    if drift:
        warnings.warn(
            f"cassette {path} was recorded with other versions "
            f"({'; '.join(str(d) for d in drift)}); replay is structurally auditable, not "
            "re-derivable. Re-record with CASSETTE_MODE=record to refresh it, or silence this "
            "with warnings.filterwarnings('ignore', category=CassetteVersionWarning) or "
            "CASSETTE_VERSION_DRIFT=ignore.",
            CassetteVersionWarning,
            stacklevel=4,  # the code that made the Recorder
        )


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _has_version(text: str) -> bool:
    return any(c.isdigit() for c in text)


def _version_part(library: str) -> str:
    """``0.1.0`` from ``provider-cassettes 0.1.0``."""
    return library.rpartition(" ")[2]


def _minor(version: str) -> tuple[str, ...]:
    """The major and minor parts of a version (``1.2`` of ``1.2.3rc1``)."""
    return tuple(version.split(".")[:2])
