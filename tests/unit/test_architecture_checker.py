"""The architecture checker, proven on crafted trees: each rule sees every spelling of the
violation it names, and nothing else, so a checker that stopped seeing violations fails here
rather than passing the repository (``test_architecture`` runs the rules over it).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from tests.helpers import architecture as arch
from tests.helpers.architecture import Finding, Source

Rule = Callable[[Source], Iterator[Finding]]


def _private_imports(source: Source) -> Iterator[Finding]:
    return arch.check_private_imports(source, ("pkg",))


def _tree(tmp_path: Path, files: dict[str, str]) -> list[Source]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return list(arch.sources(tmp_path, sorted({name.split("/")[0] for name in files})))


def _run(rule: Rule, sources: Iterable[Source]) -> list[tuple[str, int]]:
    return [(finding.path, finding.line) for source in sources for finding in rule(source)]


def test_private_import_rule_sees_every_spelling(tmp_path: Path) -> None:
    """Absolute, from-name, relative, lazy and importlib imports of another's insides are found,
    and the message names the surface to import from instead."""
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_own.py": "",
            "pkg/sub/__init__.py": "from pkg import _own\nfrom .. import _own as again\n",
            "pkg/sub/_inner.py": "from pkg.sub import _helper\nfrom . import _helper as h\n",
            "pkg/other/__init__.py": """\
                from __future__ import annotations

                import _thread
                from os import _exit
                from pkg import __version__
                """,
            "pkg/other/user.py": """\
                import pkg.sub._inner
                from pkg.sub import _inner
                from pkg.sub._inner import thing
                from ..sub._inner import thing as again
                from ..sub import _inner as relative


                def lazily() -> None:
                    import importlib

                    from pkg.sub._inner import late

                    importlib.import_module("pkg.sub._inner")
                    __import__("pkg.sub._inner")
                """,
        },
    )
    found = _run(_private_imports, sources)
    # The ancestor's and one's own insides are allowed (pkg/sub uses pkg._own, pkg.sub._helper);
    # other projects' privates are not ours to police, and dunders are public.
    assert found == [("pkg/other/user.py", line) for line in (1, 2, 3, 4, 5, 11, 13, 14)]
    first = next(f for source in sources for f in _private_imports(source))
    assert str(first) == (
        "pkg/other/user.py:1: [private-import] imports pkg.sub._inner, private to pkg.sub; import "
        "it from the surface `pkg.sub` (add it to its __all__ if users of pkg.sub need it)"
    )


def test_private_import_rule_reads_computed_names_and_attribute_access(tmp_path: Path) -> None:
    """f-string and folded import names, and a private module reached by attribute through a
    public import, are imports of another's insides; public names through them are not."""
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/other/user.py": """\
                import importlib

                import pkg.sub
                import pkg.sub as s

                importlib.import_module(f"pkg.sub._{'inner'}")
                importlib.import_module("pk" + "g.sub._inner")
                s._inner.thing()
                pkg.sub._inner.thing()
                importlib.import_module(f"pkg.sub.{'public'}")
                s.public.thing(), s.__name__, pkg.sub.public
                from pkg import sub
                from pkg.sub import Thing

                sub._inner.thing(), Thing._attribute
                """,
        },
    )
    found = _run(_private_imports, sources)
    assert found == [("pkg/other/user.py", n) for n in (6, 7, 8, 9, 15)]
    (secrets,) = _tree(
        tmp_path / "repo",
        {
            "cassettes_core/user.py": """\
                import importlib

                import cassettes_core.secrets as s

                s._scan.find("")
                importlib.import_module(f"cassettes_core.secrets._{s}")
                """
        },
    )
    assert _run(arch.check_secrets_insides, [secrets]) == [
        ("cassettes_core/user.py", line) for line in (5, 6)
    ]


def test_literal_rule_sees_hosts_and_paths_in_code_not_prose(tmp_path: Path) -> None:
    """String constants and f-string parts are checked; docstrings and comments are not."""
    sources = _tree(
        tmp_path,
        {
            "cassettes_core/catalog/_endpoints.py": 'HOST = "api.openai.com"\n',
            "cassettes_core/user.py": '''\
                """Talks to api.anthropic.com at /v1/messages (prose is fine)."""

                BASE = "https://eu.api.OpenAI.com/v1"  # a regional host, any case
                ROUTE = "/v1/chat/completions"
                TAIL = f"{BASE}/embeddings"
                GEMINI = "models/{model}:streamGenerateContent"
                BEDROCK = "/model/anthropic.claude-v2/converse-stream"
                OLLAMA = "/api/chat"
                COHERE = "/v2/chat"


                def f() -> str:
                    """Returns the host of bedrock-runtime.us-east-1.amazonaws.com."""
                    return "bedrock-runtime.us-east-1.amazonaws.com"  # api.openai.com
                ''',
            "cassettes_core/clean.py": """\
                NOT_A_HOST = "openai.community.example"  # another domain
                SIMILAR = "max.ai and mymistral.ai and /v1/messages_archive"
                OURS = "/chat and /embed in our own service; /v2/chatter"
                MODEL = "gpt-4o-mini"
                """,
        },
    )
    found = _run(arch.check_provider_literals, sources)
    assert found == [("cassettes_core/user.py", line) for line in (3, 4, 5, 6, 7, 8, 9, 14)]


def test_literal_rule_sees_built_escaped_and_pattern_hosts(tmp_path: Path) -> None:
    """Bytes, ``+`` and ``.join`` of constants, regex spellings, and the catalog's pattern hosts
    (regional and mTLS Vertex, ``rep`` endpoints) are provider hosts too."""
    sources = _tree(
        tmp_path,
        {
            "cassettes_core/user.py": """\
                HOST = b"api.anthropic.com"
                JOINED = "api.openai" + ".com"
                DOTTED = ".".join(("api", "openai", "com"))
                ESCAPED = r"^api\\.openai\\.com$"
                VERTEX = "https://us-east5-aiplatform.googleapis.com/v1"
                MTLS = "aiplatform.mtls.googleapis.com"
                REP = "aiplatform.us-central1.rep.googleapis.com"
                PATH = b"/v1/messages"
                PARTS = "/v1/chat/" + "completions"
                """,
            "cassettes_core/clean.py": """\
                NEAR = "us-east5-aiplatform.googleapis.community"
                SPLIT = "api.openai" + f"{1}" + ".com"
                """,
        },
    )
    found = _run(arch.check_provider_literals, sources)
    assert found == [("cassettes_core/user.py", line) for line in range(1, 10)]


def test_testing_and_secrets_rules(tmp_path: Path) -> None:
    """The library may not import the test-only package (the package itself may); only the
    secret guard's own modules reach its insides, everyone else uses its surface."""
    sources = _tree(
        tmp_path,
        {
            "cassettes_core/testing/__init__.py": "from cassettes_core.testing import emulator\n",
            "cassettes_core/secrets/__init__.py": "from cassettes_core.secrets._guard import G\n",
            "cassettes_core/secrets/_scan.py": "from . import _guard\n",
            "cassettes_core/user.py": """\
                from cassettes_core.testing.emulator import Emulator
                from cassettes_core.secrets import SecretGuard
                from cassettes_core.secrets._guard import G
                from cassettes_core.secrets import _scan


                def f() -> None:
                    from cassettes_core import testing
                """,
        },
    )
    user = [("cassettes_core/user.py", line) for line in (1, 3, 4, 8)]
    assert _run(arch.check_testing_import, sources) == [user[0], user[3]]
    assert _run(arch.check_secrets_insides, sources) == user[1:3]


def test_cycle_rule_sees_lazy_loops_and_ignores_type_checking(tmp_path: Path) -> None:
    """A lazy import that closes a loop is a cycle; ``TYPE_CHECKING`` imports and a package's
    modules importing their siblings through it are not."""
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg import a\n",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": """\
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg.a import A


                def f() -> None:
                    from pkg.c import C
                """,
            "pkg/c.py": """\
                import importlib


                def g() -> None:
                    importlib.import_module("pkg.b")
                """,
        },
    )
    graph = arch.import_graph(sources)
    assert arch.cycles(graph) == [["pkg.b", "pkg.c"]]
    assert arch.cycle_finding(["pkg.b", "pkg.c"], graph).startswith(
        "import cycle pkg.b <-> pkg.c (pkg.b:8 imports pkg.c; pkg.c:5 imports pkg.b)"
    )


def test_a_white_box_test_reaches_only_the_package_it_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listed white-box test may import its own package's insides, never another's."""
    monkeypatch.setitem(arch.WHITE_BOX, "tests/test_pkg_names.py", "pkg.one")
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/one/__init__.py": "",
            "pkg/one/_names.py": "",
            "pkg/two/__init__.py": "",
            "pkg/two/_store.py": "",
            "tests/__init__.py": "",
            "tests/test_pkg_names.py": (
                "from pkg.one._names import name\nfrom pkg.two._store import store\n"
            ),
            "tests/test_other.py": "from pkg.one._names import name\n",
        },
    )
    found = _run(_private_imports, sources)
    assert ("tests/test_pkg_names.py", 2) in found
    assert ("tests/test_pkg_names.py", 1) not in found
    assert ("tests/test_other.py", 1) in found
