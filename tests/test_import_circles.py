"""No runtime import circles in juge: a module that imports another, even inside a function, must not be
imported back by it, directly or through others (imports under ``if TYPE_CHECKING:`` do not run and do not
count). The layers themselves are checked by ``lint-imports`` (``[tool.importlinter]`` in pyproject.toml)."""

from __future__ import annotations

import grimp

# Circles known to remain: none. A circle fails the test; an entry here whose circle has gone fails it too,
# so that its line goes with it.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The groups of two or more modules that each reach every other (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(frozenset(group))
    return groups


def runtime_circles() -> set[frozenset[str]]:
    graph = grimp.build_graph("juge", exclude_type_checking_imports=True, cache_dir=None)
    imports = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    return set(strongly_connected(imports))


def test_strongly_connected_finds_each_circle_once():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"g"}}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c"], ["e", "f"]]


def test_no_runtime_import_circles():
    found = runtime_circles()
    new = [sorted(c) for c in found - KNOWN_CIRCLES]
    gone = [sorted(c) for c in KNOWN_CIRCLES - found]
    assert not new, f"runtime import circles: {new}; import from a module below both, not from each other"
    assert not gone, f"these circles are gone: delete them from KNOWN_CIRCLES: {gone}"
