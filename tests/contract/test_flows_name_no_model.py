"""flows/ names no model class and no component's memo (issue 51): it releases what the
components hold through the generic API of ablate.components.runtime.resources
(`release_models`, `release_all`: the hooks components register where they keep their
models and indexes), and asks for a run's encoders through `Resources.for_run`.

Read from the source (an AST walk: imports, names and attributes), so a comment or a
docstring that mentions a class is not a breach."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
# the classes, modules and functions flows/ once named to build and release them
FORBIDDEN = {"DenseEncoder", "BertEncoder", "OnnxEmbedder", "torch_gguf", "clear_lexical",
             "default_encoder", "run_encoder", "unload_encoders"}
FORBIDDEN_MODULES = ("ablate.components.generation.torch_gguf",
                     "ablate.components.retrieval.dense.encoder",
                     "ablate.components.retrieval.dense.resources",
                     "ablate.components.retrieval.lexical.resources")


def named(path: Path) -> set[str]:
    """Every identifier, attribute and imported module or name in `path`'s code."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names} | {a.asname for a in node.names if a.asname}
        elif isinstance(node, ast.ImportFrom):
            out |= {f"{node.module}.{a.name}" for a in node.names} | {a.name for a in node.names}
            out.add(node.module or "")
    return out


def breaches(root: Path) -> list[tuple[str, str]]:
    """(file, name) for every forbidden name a module of `root`/flows names."""
    found = []
    for p in sorted((root / "flows").rglob("*.py")):
        for name in sorted(named(p)):
            if name in FORBIDDEN or name.startswith(FORBIDDEN_MODULES):
                found.append((str(p.relative_to(root)), name))
    return found


def test_flows_name_no_model_class_nor_memo():
    assert len(list((ROOT / "flows").rglob("*.py"))) > 20  # the walk found the package
    assert breaches(ROOT) == []


def test_the_walk_sees_a_breach(tmp_path):
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "x.py").write_text(
        "from ablate.components.generation import torch_gguf\n"
        "# DenseEncoder in a comment is no breach\n"
        "def f(memo):\n    torch_gguf.unload()\n", encoding="utf-8")
    assert breaches(tmp_path) == [("flows/x.py", "ablate.components.generation.torch_gguf"),
                                  ("flows/x.py", "torch_gguf")]


def test_components_register_their_release_hooks(monkeypatch):
    """What flows/ once released by name is released through the hooks: a run's dense
    encoders and the torch generator models between stages, the BM25 indexes after the
    last stage only."""
    from ablate.components.generation import torch_gguf
    from ablate.components.retrieval.dense.resources import run_encoder
    from ablate.components.retrieval.lexical import resources as lexical
    from ablate.components.runtime import resources
    from ablate.components.runtime.models import MINILM_NAME

    assert {"dense encoders": "models", "torch generator models": "models",
            "lexical indexes": "all"}.items() <= resources.release_hooks().items()
    calls: list[str] = []
    monkeypatch.setattr(torch_gguf, "unload", lambda: calls.append("gguf"))
    monkeypatch.setattr(lexical._BM25, "clear", lambda: calls.append("bm25"))
    memo = resources.Memo()
    enc = run_encoder(Path("/nonexistent-cache"), memo, MINILM_NAME, "torch")
    assert run_encoder(Path("/nonexistent-cache"), memo, MINILM_NAME, "torch") is enc  # memoised
    enc._model = object()  # as if loaded
    resources.release_models(memo)
    assert enc._model is None and calls == ["gguf"]
    resources.release_all(memo)
    assert sorted(calls) == ["bm25", "gguf", "gguf"]


def test_memo_builds_once_per_key():
    from ablate.components.runtime.resources import Memo
    memo, built = Memo(), []

    def build() -> np.ndarray:
        built.append(1)
        return np.zeros(1)

    first = memo.get_or_build("k", build)
    assert memo.get_or_build("k", build) is first and built == [1]
    assert memo.get_or_build("j", build) is not first and len(built) == 2
