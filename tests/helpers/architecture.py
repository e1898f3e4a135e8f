"""The architecture as checkable rules over an ``ast`` walk (no import of the code checked but
the catalog's hosts): each rule takes a :class:`Source` and yields :class:`Finding` s."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cassettes_core import catalog

LIBRARY = ("cassettes_core", "pytest_plugin", "cassette_refresh")
CATALOG = "cassettes_core/catalog/"  # the package: its entries and its provider domains
TESTING = "cassettes_core.testing"
SECRETS = "cassettes_core.secrets"

# The catalog's provider domains (every subdomain counts), endpoint hosts and host patterns.
PROVIDER_DOMAINS = frozenset(
    [domain for domain, _ in catalog.PROVIDER_DOMAINS] + list(catalog.DEFAULT_CATALOG.hosts())
)
PROVIDER_PATTERNS = tuple(pattern for pattern, _ in catalog.PROVIDER_PATTERNS)
_CANDIDATE = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+", re.IGNORECASE)
# Endpoint paths and the path tails a route table matches on; ``:generateContent``: Gemini's.
_ENDPOINT = re.compile(
    r"(?:/v\d+(?:beta\d*|alpha\d*)?)?/(?:chat/completions|completions|responses|embeddings|"
    r"messages)(?![\w-])"
    r"|/v\d+(?:beta\d*|alpha\d*)?/(?:chat|rerank|embed)(?![\w-])"  # Cohere's: versioned only
    r"|/api/(?:chat|generate|embed|embeddings)(?![\w-])"
    r"|:(?:generateContent|streamGenerateContent|batchEmbedContents|embedContent|countTokens)"
    r"|/model/[^/\s]*/(?:converse|converse-stream|invoke|invoke-with-response-stream)"
    r"|/(?:converse-stream|invoke-with-response-stream)(?![\w-])"
)


UNKNOWN = "\x00"  # a part of a folded string that is not a constant


def fold(node: ast.expr | None) -> str | None:
    """The text a string expression builds from constants (``+``, ``.join``, bytes, f-strings
    with their values as :data:`UNKNOWN`); None if not a string."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(map(known, node.values))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left), fold(node.right)
        if left is None and right is None:
            return None
        return (UNKNOWN if left is None else left) + (UNKNOWN if right is None else right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1:
        separator, (items,) = fold(node.func.value), node.args
        if node.func.attr == "join" and separator is not None and hasattr(items, "elts"):
            return separator.join(map(known, items.elts))
    return None


def known(node: ast.expr) -> str:
    text = fold(node)
    return UNKNOWN if text is None else text


def is_dynamic_import(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in {"import_module", "__import__"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.message}"


@dataclass(frozen=True)
class Source:
    """One parsed file: its path relative to the root and its dotted package."""

    path: str
    package: str
    tree: ast.Module
    lines: int

    @classmethod
    def read(cls, root: Path, file: Path) -> Source:
        relative = file.relative_to(root)
        parts = list(relative.with_suffix("").parts)
        package = ".".join(parts[:-1])  # ``a/b/__init__.py`` and ``a/b/c.py`` are both in a.b
        text = file.read_text(encoding="utf-8")
        return cls(
            relative.as_posix(), package, ast.parse(text, str(relative)), len(text.splitlines())
        )


def sources(root: Path, folders: Iterable[str]) -> Iterator[Source]:
    for folder in folders:
        for file in sorted((root / folder).rglob("*.py")):
            yield Source.read(root, file)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_owner(module: str) -> str | None:
    """The package that owns ``module``'s first private component (``a.b`` for ``a.b._c.d``)."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:index])
    return None


def _within(package: str, ancestor: str) -> bool:
    return package == ancestor or package.startswith(ancestor + ".")


def _absolute(source: Source, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    base = source.package.split(".")
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def imported(source: Source) -> Iterator[tuple[int, str]]:
    """Every module or name ``source`` imports (relative, lazy, ``import_module``, and
    ``m._b`` through ``import a as m``), as a dotted path, with its line."""
    yield from _imports(source)  # three rules ask for each file's imports


@functools.cache
def _imports(source: Source) -> tuple[tuple[int, str], ...]:
    found: list[tuple[int, str]] = []
    bound: dict[str, str] = {}  # a name an import statement binds → the dotted path it names
    reached: list[ast.Attribute] = []  # ``m._b``: read once every binding is known
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            reached.append(node)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
            for alias in node.names:
                name = alias.asname or alias.name.split(".", 1)[0]
                bound[name] = alias.name if alias.asname else name
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(source, node.module, node.level)
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{a.name}") for a in node.names if a.name != "*")
            bound.update((a.asname or a.name, f"{module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Call) and is_dynamic_import(node.func):
            found.extend((node.lineno, module) for module in _dynamic_import(source, node))
    found.extend(_reached(reached, bound))
    return tuple(sorted(set(found)))


def _reached(nodes: Iterable[ast.Attribute], bound: Mapping[str, str]) -> Iterator[tuple[int, str]]:
    """``m._b`` where ``m`` is bound by an import: the private module reached through it."""
    for node in nodes:
        names, value = [node.attr], node.value
        while isinstance(value, ast.Attribute):
            names.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            path = [*bound[value.id].split("."), *reversed(names)]
            if not any(part[:1].isupper() for part in path):  # ``Class._x`` is not a module
                yield node.lineno, ".".join(path)


def _dynamic_import(source: Source, node: ast.Call) -> list[str]:
    """The module an ``import_module(...)`` or ``__import__(...)`` call names, when readable."""
    name = fold(node.args[0]) if node.args else None
    if not name:
        return []
    if UNKNOWN in name:
        prefix = name.split(UNKNOWN, 1)[0]
        head, _, partial = prefix.rpartition(".")
        # ``f"pkg.{name}"`` names some submodule of ``pkg``, not ``pkg`` itself.
        name = f"{prefix}*" if is_private(partial) or not partial else head
    level = len(name) - len(name.lstrip("."))
    return [_absolute(source, name[level:] or None, level)]


def _first_party(module: str, roots: tuple[str, ...]) -> bool:
    return module.split(".", 1)[0] in roots


# White-box tests: each may import the insides of the ONE package it tests, as its claim cannot
# be isolated through the surface. A new entry needs the same justification.
WHITE_BOX: dict[str, str] = {
    "tests/integration/test_secret_corpus.py": SECRETS,  # each plugin's gate, one at a time
    "tests/unit/test_secrets_formats.py": SECRETS,  # the shape predicates; the one-pass search
    "tests/unit/test_secrets_unicode.py": SECRETS,  # normalisation with its offset map
    "tests/unit/test_plugin_naming.py": "pytest_plugin",  # node id -> cassette path, truncation
    "tests/unit/test_plugin_spec.py": "pytest_plugin",  # ini + marker -> recorder options
    "tests/unit/test_plugin_tally.py": "pytest_plugin",  # the summary's arithmetic
    "tests/unit/test_store_versions.py": "cassettes_core.store",  # the metadata header reader
    # cassette_refresh's surface is the command and run_check: its parts are tested directly.
    "bench/bench_refresh_rewrite.py": "cassette_refresh",  # the --write checks' cost
    "tests/unit/test_refresh_chains.py": "cassette_refresh",  # chains, hand edits, commands
    "tests/unit/test_refresh_choice.py": "cassette_refresh",  # another choice than recorded
    "tests/unit/test_refresh_classify.py": "cassette_refresh",  # shapes and classification
    "tests/unit/test_refresh_corpus.py": "cassette_refresh",  # the classifier on real shapes
    "tests/unit/test_refresh_registered_vocabulary.py": "cassette_refresh",  # ditto, registered
    "tests/unit/test_refresh_reissue.py": "cassette_refresh",  # retries, stream failures
    "tests/unit/test_refresh_report.py": "cassette_refresh",  # renderings, the JSON schema
}


def _white_box(source: Source, owner: str) -> bool:
    return WHITE_BOX.get(source.path) == owner


def check_private_imports(source: Source, roots: tuple[str, ...]) -> Iterator[Finding]:
    """(a) ``X._y`` is imported only from inside ``X`` (and by the :data:`WHITE_BOX` tests)."""
    seen: set[tuple[int, str]] = set()
    for line, module in imported(source):
        owner = private_owner(module)
        if owner is None or not _first_party(module, roots) or _within(source.package, owner):
            continue
        if _white_box(source, owner):
            continue
        if (line, owner) in seen:
            continue  # ``from a._b import c`` is one finding, not two
        seen.add((line, owner))
        surface = owner or module.split(".", 1)[0]
        yield Finding(
            source.path,
            line,
            "private-import",
            f"imports {module}, private to {surface}; import it from the surface "
            f"`{surface}` (add it to its __all__ if users of {surface} need it)",
        )


def _docstrings(tree: ast.Module) -> set[int]:
    """The ``id`` of every docstring node."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def provider_host(text: str) -> str | None:
    """The first provider host in ``text`` (any case, up to any label boundary)."""
    for candidate in _CANDIDATE.findall(text):
        labels = candidate.lower().split(".")
        for end in range(len(labels), 1, -1):
            host = ".".join(labels[:end])
            if any(".".join(labels[start:end]) in PROVIDER_DOMAINS for start in range(end)):
                return host
            if any(pattern.search(host) for pattern in PROVIDER_PATTERNS):
                return host
    return None


def check_provider_literals(source: Source) -> Iterator[Finding]:
    """(c) Provider hosts and endpoint paths are written in the catalog only (docstrings and
    comments are prose and may mention them)."""
    if source.path.startswith(CATALOG):
        return
    prose = _docstrings(source.tree)
    strings = sorted(
        (node.lineno, node.col_offset, text.replace("\\", ""))
        for node in ast.walk(source.tree)
        if id(node) not in prose
        and isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp | ast.Call)
        and (text := fold(node)) is not None
    )
    seen: set[tuple[int, str]] = set()
    for line, _, text in strings:
        path = _ENDPOINT.search(text)
        for what, found in (
            ("provider host", provider_host(text)),
            ("endpoint path", path.group() if path else None),
        ):
            if found is None or (line, what) in seen:
                continue
            seen.add((line, what))
            yield Finding(
                source.path,
                line,
                "catalog-literal",
                f"{what} {found!r} outside the catalog; read it from "
                f"`cassettes_core.catalog` (or add an entry there)",
            )


def _first_per_line(imports: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """One finding per import statement."""
    lines: set[int] = set()
    for line, module in imports:
        if line not in lines:
            lines.add(line)
            yield line, module


def check_testing_import(source: Source) -> Iterator[Finding]:
    """(d) The library never imports the test-only ``cassettes_core.testing``."""
    if _within(source.package, TESTING):
        return
    for line, module in _first_per_line(m for m in imported(source) if _within(m[1], TESTING)):
        yield Finding(
            source.path,
            line,
            "testing-import",
            f"the library imports {module}; {TESTING} is for tests, bench and the Makefile "
            "only: move what the library needs out of it",
        )


def check_secrets_insides(source: Source) -> Iterator[Finding]:
    """(e) Nothing outside ``cassettes_core/secrets/`` imports its ``_`` modules or names."""
    if _within(source.package, SECRETS) or _white_box(source, SECRETS):
        return
    insides = (m for m in imported(source) if _within(m[1], SECRETS) and private_owner(m[1]))
    for line, module in _first_per_line(insides):
        yield Finding(
            source.path,
            line,
            "secrets-insides",
            f"imports {module}; use the secret guard's surface `{SECRETS}` instead",
        )


def module_name(source: Source) -> str:
    name = source.path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ``id`` of every node under ``if TYPE_CHECKING:`` (never run, so no cycle)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(child) for child in ast.walk(node))
    return hidden


def import_graph(sources: Iterable[Source]) -> dict[str, dict[str, int]]:
    """``module → {module it imports: line}``, lazy imports included; ``from package import
    submodule`` is an edge to the submodule alone."""
    by_name = {module_name(source): source for source in sources}
    graph: dict[str, dict[str, int]] = {}
    for name, source in by_name.items():
        hidden = _type_checking_only(source.tree)
        edges: dict[str, int] = {}
        for node in ast.walk(source.tree):
            if id(node) in hidden:
                continue
            if isinstance(node, ast.Call) and is_dynamic_import(node.func):
                statement: ast.stmt = ast.copy_location(ast.Expr(node), node)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                statement = node
            else:
                continue
            one = Source(source.path, source.package, ast.Module([statement], []), 0)
            found = [module for _, module in imported(one)]
            for module in found:
                if "*" in module:
                    continue  # `import_module(f"pkg.{name}")`: which submodule is not known
                if any(other.startswith(module + ".") and other in by_name for other in found):
                    continue  # `from package import submodule`
                while module and module not in by_name:
                    module = module.rpartition(".")[0]
                if module and module != name:
                    edges.setdefault(module, statement.lineno)
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a loop (sorted)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, {}):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group: list[str] = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def cycle_finding(group: list[str], graph: Mapping[str, Mapping[str, int]]) -> str:
    """One cycle, with the imports that close it, for a person to cut."""
    members = set(group)
    edges = [
        f"{source}:{line} imports {target}"
        for source in group
        for target, line in sorted(graph[source].items())
        if target in members
    ]
    return (
        f"import cycle {' <-> '.join(group)} ({'; '.join(edges)}); move what both sides need "
        "into a module both import, rather than importing lazily to dodge the loop"
    )
