"""components/ never imports prefect or mlflow (docs/extending.md, "Where things live"):
the science stays plain Python, testable as functions; flows/ is the only orchestration layer."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("prefect", "mlflow", "ablate.flows")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


def test_components_never_import_orchestration():
    bad = [(str(p.relative_to(ROOT)), m) for p in sorted((ROOT / "components").rglob("*.py"))
           for m in _imports(p) if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN[2])]
    assert not bad, bad
    assert len(list((ROOT / "components").rglob("*.py"))) > 20  # the walk found the package
