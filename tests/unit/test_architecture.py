"""The architecture, enforced: a walk over the source that fails on the first broken boundary.

Rules (see ``tests/helpers/architecture.py``): no package imports another's ``_private`` module
or name; provider hosts and endpoint paths live in the catalog only; the library never imports
``cassettes_core.testing``; nothing outside the secret guard imports its insides. Each rule is
first proven on a crafted tree (``test_architecture_checker``), so a checker that stopped
seeing violations fails there rather than passing everything here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from cassettes_core import catalog
from cassettes_core.isolation import catalog_provider
from tests.helpers import architecture as arch
from tests.helpers.architecture import Finding, Source

ROOT = Path(__file__).resolve().parents[2]
EVERYWHERE = (*arch.LIBRARY, "tests", "bench")


def _report(findings: Iterable[Finding]) -> str:
    return "\n".join(str(finding) for finding in findings)


PATTERN_HOSTS = (
    "us-east5-aiplatform.googleapis.com",
    "us-east5-aiplatform.mtls.googleapis.com",
    "aiplatform.us-central1.rep.googleapis.com",
    "bedrock-runtime.us-east-1.amazonaws.com",
    "bedrock-runtime-fips.us-gov-west-1.amazonaws.com",
    "bedrock-runtime.cn-north-1.amazonaws.com.cn",
    "bedrock-runtime.us-east-1.api.aws",
    "runtime.sagemaker.eu-west-1.amazonaws.com",
)


def test_checked_hosts_are_the_catalogs() -> None:
    """Both directions: every host the catalog knows (domain, endpoint host, pattern) is one
    the literal rule flags, and every domain the rule looks for is one the guard knows."""
    assert [pattern.pattern for pattern, _ in catalog.PROVIDER_PATTERNS] == [
        pattern.pattern
        for pattern, _ in catalog.PROVIDER_PATTERNS
        if any(pattern.search(host) for host in PATTERN_HOSTS)
    ], "add a host the new pattern matches to PATTERN_HOSTS"
    known = [domain for domain, _ in catalog.PROVIDER_DOMAINS]
    known += [*catalog.DEFAULT_CATALOG.hosts(), *PATTERN_HOSTS]
    assert [host for host in known if arch.provider_host(f"https://{host}/") != host] == []
    assert [host for host in PATTERN_HOSTS if catalog_provider(host) is None] == []
    assert [domain for domain in arch.PROVIDER_DOMAINS if catalog_provider(domain) is None] == []


# -- the repository ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def library() -> list[Source]:
    return list(arch.sources(ROOT, arch.LIBRARY))


@pytest.fixture(scope="module")
def everything(library: list[Source]) -> list[Source]:
    return [*library, *arch.sources(ROOT, ("tests", "bench"))]


def test_every_white_box_test_exists() -> None:
    """An exemption outlives its file only by mistake: it would silently cover a new one."""
    assert [path for path in arch.WHITE_BOX if not (ROOT / path).is_file()] == []


def test_no_package_imports_anothers_insides(everything: list[Source]) -> None:
    """Library, tests and bench import public modules or subpackage surfaces only."""
    findings = [f for s in everything for f in arch.check_private_imports(s, EVERYWHERE)]
    assert not findings, _report(findings)


def test_provider_facts_live_in_the_catalog(library: list[Source]) -> None:
    findings = [f for source in library for f in arch.check_provider_literals(source)]
    assert not findings, _report(findings)


def test_the_library_never_imports_testing(library: list[Source]) -> None:
    findings = [f for source in library for f in arch.check_testing_import(source)]
    assert not findings, _report(findings)


def test_the_secret_guard_is_used_through_its_surface(everything: list[Source]) -> None:
    findings = [f for source in everything for f in arch.check_secrets_insides(source)]
    assert not findings, _report(findings)


def test_no_import_cycles(library: list[Source]) -> None:
    """No two modules import each other, directly or around a loop, lazy imports included
    (every cycle the restructuring found was cut; a lazy import must not dodge a new one)."""
    graph = arch.import_graph(library)
    found = [arch.cycle_finding(group, graph) for group in arch.cycles(graph)]
    assert not found, "\n".join(found)
