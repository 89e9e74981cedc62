"""Experiment files for the tests, built from dicts instead of pasted YAML templates.

`experiment(name, ...)` is the YAML text of an experiment file: the tiny SQuAD fixture as
its data set unless told otherwise, the tiny baseline pipeline (`pipeline()`) unless told
otherwise, and exactly the other fields a test passes (nothing else is added, so a test
states every field its meaning depends on). `write_experiment(folder, name, ...)` writes
it. A field set to None is left out.

The layout is fixed, so a test may name the line a field stands on. The top-level keys
come in the order name, dataset, the other fields as passed, baseline, sweeps, design,
variants. A top-level value holding mappings (baseline, design, sweeps, variants) is in
block style, and so is each entry of such a list; everything else is on one line in flow
style, never wrapped:

    name: console-tiny
    dataset: {path: .../tests/fixtures/squad_tiny.json, format: squad}
    tier: smoke
    baseline:
      chunking: {size: 48, overlap: 8}
      ...
    sweeps:
      - variable: fusion.rrf_k
        values: [60]

Tests whose subject is the text itself (line numbers in a hand-made layout, malformed
YAML) keep their own inline text.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import FIXTURES

TINY_SQUAD = FIXTURES / "squad_tiny.json"
# The statistics most direct-run tests use: few resamples, a fast run.
FAST_STATS: dict[str, Any] = {"resamples": 200, "bootstrap_resamples": 200}
# The order of a baseline's blocks, as the stages read them.
BLOCKS = ("chunking", "retrieval", "fusion", "rerank", "context", "generator")


def data_set(path: Path | str = TINY_SQUAD, format: str = "squad") -> dict[str, Any]:
    """A `dataset` block: the tiny SQuAD fixture unless told otherwise."""
    return {"path": str(path), "format": format}


def pipeline(**blocks: dict[str, Any] | None) -> dict[str, Any]:
    """The tiny baseline most tests run (48-token windows, BM25 to depth 10, reranking to
    depth 5, a 96-token context, extractive answers), each block given here replacing its
    block whole (a dict) or leaving it out (None); blocks in stage order."""
    out: dict[str, Any] = {"chunking": {"size": 48, "overlap": 8},
                           "retrieval": {"paths": ["bm25"], "depth": 10},
                           "rerank": {"depth": 5},
                           "context": {"budget": 96},
                           "generator": {"name": "extractive"}}
    out.update(blocks)
    order = [b for b in BLOCKS if b in out] + [b for b in out if b not in BLOCKS]
    return {b: out[b] for b in order if out[b] is not None}


BASELINE = pipeline()  # experiment()'s default baseline; not to be changed in place


def judged_pipeline(**blocks: dict[str, Any] | None) -> dict[str, Any]:
    """The judge tests' baseline: 48-token chunks overlapping by 16, reranking to depth 4, a
    120-token context (a few short passages per judge prompt), extractive answers unless
    `generator` says otherwise; other blocks as `pipeline`."""
    return pipeline(**{"chunking": {"size": 48, "overlap": 16}, "rerank": {"depth": 4},
                       "context": {"budget": 120}, **blocks})


def vary(variable: str, *values: Any, **fields: Any) -> dict[str, Any]:
    """One `sweeps` entry: `variable`, then its `values`, then other fields (`n`, `tier`)."""
    return {"variable": variable, "values": list(values), **fields}


def experiment(name: str, *, dataset: dict[str, Any] | None = None,
               baseline: dict[str, Any] | None = BASELINE,
               sweeps: list[dict[str, Any]] | None = None, design: dict[str, Any] | None = None,
               variants: list[dict[str, Any]] | None = None, **fields: Any) -> str:
    """The YAML text of an experiment file (the layout in the module docstring)."""
    spec: dict[str, Any] = {"name": name, "dataset": dataset if dataset is not None else data_set()}
    spec.update(fields)
    spec.update(baseline=baseline, sweeps=sweeps, design=design, variants=variants)
    spec = copy.deepcopy({k: v for k, v in spec.items() if v is not None})
    node = yaml.representer.SafeRepresenter(sort_keys=False).represent_data(spec)
    _set_styles(node, depth=0)
    text = yaml.serialize(node, Dumper=_Dumper, width=1 << 20, allow_unicode=True)
    assert yaml.safe_load(text) == spec, text  # what a test passed is what the file says
    return text


def write_experiment(folder: Path, name: str, *, file: str = "exp.yaml", **kwargs: Any) -> Path:
    """`experiment(name, **kwargs)` written as folder/file (the folder made if need be)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    path.write_text(experiment(name, **kwargs))
    return path


class _Dumper(yaml.SafeDumper):
    """Block lists indented under their key (`sweeps:` then `  - variable: ...`)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [value for _, value in node.value]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _set_styles(node: yaml.Node, depth: int, entry: bool = False) -> None:
    """Block style for the document, a top-level value holding a mapping, and the entries
    of a block list (`entry`); flow style for everything else."""
    if isinstance(node, yaml.ScalarNode):
        return
    children = _children(node)
    block = depth == 0 or entry or (
        depth == 1 and any(isinstance(c, yaml.MappingNode) for c in children))
    node.flow_style = not block
    for child in children:
        if block:
            _set_styles(child, depth + 1, entry=isinstance(node, yaml.SequenceNode))
        else:
            _flow(child)


def _flow(node: yaml.Node) -> None:
    if not isinstance(node, yaml.ScalarNode):
        node.flow_style = True
        for child in _children(node):
            _flow(child)
