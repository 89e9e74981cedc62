"""The import graph of ablate.components and ablate.flows has no circle, and keeps the
layers and rules of pyproject.toml's [tool.importlinter] contracts (`lint-imports`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for t in targets:
                if t not in index:
                    index[t] = low[t] = len(index)
                    stack.append(t)
                    on_stack.add(t)
                    work.append((t, iter(sorted(imports.get(t, ())))))
                    break
                if t in on_stack:
                    low[node] = min(low[node], index[t])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        group.append(m)
                        if m == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    graph = grimp.build_graph("ablate.components", "ablate.flows", cache_dir=None)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert len(imports) > 100  # the graph holds the packages
    assert circles(imports) == []


def test_import_contracts_kept():
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout


def _kept_then_broken(kind: str, pick, importer: str, imported: str) -> None:
    """The pyproject.toml contract `pick` chooses (of import-linter type `kind`) is kept by
    the code as it is, and broken once `importer` imports `imported`."""
    import tomllib

    from importlinter import configuration
    from importlinter.contracts.forbidden import ForbiddenContract
    from importlinter.contracts.layers import LayersContract
    configuration.configure()
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    spec = next(c for c in cfg["contracts"] if c["type"] == kind and pick(c))
    cls = {"forbidden": ForbiddenContract, "layers": LayersContract}[kind]
    contract = cls(
        name=spec["name"], session_options={"root_packages": cfg["root_packages"],
                                            "include_external_packages": True},
        contract_options={k: v for k, v in spec.items() if k not in ("name", "type")})
    graph = grimp.build_graph("ablate.components", "ablate.flows", cache_dir=None,
                              include_external_packages=True)
    assert contract.check(graph, verbose=False).kept
    graph.add_import(importer=importer, imported=imported, line_number=1,
                     line_contents=f"import {imported}")
    assert not contract.check(graph, verbose=False).kept


@pytest.mark.parametrize("importer", [
    "ablate.components.text.tokenizer",   # a module of a room
    "ablate.components.text.labels",
    "ablate.components.report.markdown",
    "ablate.components.stats.consistency",
])
def test_the_catalogue_contract_covers_the_whole_package(importer):
    """pyproject.toml's catalogue contract is kept by the code as it is, and broken by any
    component importing the catalogue, not only those of a list (issue 43.5)."""
    _kept_then_broken("forbidden",
                      lambda c: c.get("forbidden_modules") == ["ablate.components.catalogue"],
                      importer, "ablate.components.catalogue")


@pytest.mark.parametrize("importer, imported", [
    ("ablate.components.contract.records", "ablate.components.text.chunking"),  # the bottom reaching up
    ("ablate.components.text.chunking", "ablate.components.retrieval.lexical.bm25"),
    ("ablate.components.metrics.answer", "ablate.components.stats.signflip"),
    ("ablate.components.stats.signflip", "ablate.components.report.markdown"),
    ("ablate.components.runtime.models", "ablate.components.generation.base"),
])
def test_the_components_layers_contract_fails_when_broken(importer, imported):
    """pyproject.toml's layers inside components/ (issue 43.5) are kept by the code as it is
    and broken by an import from a lower room to a higher one."""
    _kept_then_broken("layers", lambda c: c.get("containers") == ["ablate.components"],
                      importer, imported)
