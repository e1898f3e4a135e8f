"""Import cycles, lazy imports included, from the same source walk as ``architecture``."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from tests.helpers.architecture import Source, imported


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
    """``module → {module it imports: line}``, lazy imports included, over ``sources`` only.

    ``from package import submodule`` is an edge to the submodule alone: the package is
    already being imported when one of its modules runs.
    """
    by_name = {module_name(source): source for source in sources}
    graph: dict[str, dict[str, int]] = {}
    for name, source in by_name.items():
        hidden = _type_checking_only(source.tree)
        edges: dict[str, int] = {}
        for node in ast.walk(source.tree):
            if id(node) in hidden or not isinstance(node, ast.Import | ast.ImportFrom | ast.Call):
                continue
            one = Source(source.path, source.package, ast.Module(body=[], type_ignores=[]), 0)
            one.tree.body.append(ast.Expr(node) if isinstance(node, ast.Call) else node)
            found = [module for _, module in imported(one)]
            for module in found:
                if "*" in module:
                    continue  # `import_module(f"pkg.{name}")`: which submodule is not known
                if any(other.startswith(module + ".") and other in by_name for other in found):
                    continue  # `from package import submodule`
                while module and module not in by_name:
                    module = module.rpartition(".")[0]
                if module and module != name:
                    edges.setdefault(module, node.lineno)
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
