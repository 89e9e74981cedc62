"""Shared cases of the per-component config-field contract tests
(tests/contract/test_config_fields.py: stage keys; tests/contract/test_undeclared_reads.py:
runs): which components are checked, a config under which each one runs in a stage, the
fields its own declaration covers, and for every pipeline field a changed value that is
valid and makes a difference on the tiny fixtures the run test uses.

Everything is derived from the registries (`all_declarations()`), so a registry or a
component added later is picked up; a kind is left out only in `EXCLUDED_KINDS`.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.registry import (
    CATALOGUE,
    Declaration,
    all_declarations,
    registry,
)
from ablate.components.pipeline import contribution, own_reads, read_values, resolve, stage_def
from ablate.flows.plan.graph import Plan, StageNode, add_variant

EXPERIMENT = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]},
              "labels": "span"}

# judge: tests/contract/test_judge_fields.py
EXCLUDED_KINDS = frozenset({"judge"})
# (none: the judged metrics are metric-registry entries like any metric; what they ask the
# judge is checked by tests/contract/test_judge_fields.py)
EXCLUDED_ORIGINS: frozenset[str] = frozenset()

# The base config of every case: defaults, with values small enough that the fields matter
# on the run test's tiny corpus (8 chunks of a few words), and the analyzer `auto`
# resolved as the sweep flow resolves it for an English corpus.
BASE: dict[str, dict[str, Any]] = {
    "chunking": {"size": 24, "overlap": 8},
    "retrieval": {"depth": 4, "analyzer": "default"},
    "rerank": {"depth": 4},
}
# Tried in order until a stage runs the component (first without, then with the field
# that names it set to it): one path (passthrough fuser), the composite reranker (signals),
# convex fusion (score normalizations), the graph path (its extractors and spreading rules).
ENABLERS: tuple[dict[str, Any], ...] = (
    {}, {"retrieval.paths": ["bm25"]}, {"rerank.method": "composite"}, {"fusion.method": "convex"},
    {"retrieval.paths": ["graph"]})
# What a component needs set before it can run at all (scratch: a folder of test files).
NEEDS = {
    ("generator", "openai"): lambda scratch: {"generator.base_url": "http://127.0.0.1:9/v1",
                                              "generator.model": "m"},
    ("rerank signal", "cross_encoder"): lambda scratch: {
        "rerank.cross_encoder": str(scratch / "cross-encoder")},
}
# A changed value per field that differs from BASE and matters on the tiny fixtures (a
# depth below the corpus size, a threshold that refuses, ...). Fields missing here fall
# back to the next registered name (fields that name components) or a rule by type.
CHANGED: dict[str, Any] = {
    "chunking.method": "sentence", "chunking.size": 40, "chunking.overlap": 4,
    "retrieval.depth": 2, "retrieval.analyzer": "english",
    "retrieval.bm25.k1": 0.6, "retrieval.bm25.b": 0.2, "retrieval.bm25.epsilon": 0.9,
    "retrieval.bm25.variant": "lucene", "retrieval.bm25.delta": 2.0,
    "retrieval.dense_model": "other-model", "retrieval.dense_backend": "torch",
    "retrieval.ann.ivf_nlist": 2, "retrieval.ann.ivf_nprobe": 2,
    "retrieval.graph.extractor": "words", "retrieval.graph.spreading": "hops",
    "retrieval.graph.damping": 0.85, "retrieval.graph.min_pmi": 0.3,
    "retrieval.graph.min_count": 2, "retrieval.graph.max_df": 0.5,
    "fusion.method": "convex", "fusion.rrf_k": 1, "fusion.normalization": "zscore",
    "rerank.method": "composite", "rerank.depth": 2,
    "rerank.weights": {"fusion": 0.5, "source": 0.5}, "rerank.default_credibility": 0.9,
    "context.budget": 64, "context.policy": "truncate",
    "generator.name": "smollm2", "generator.backend": "llama_cpp", "generator.threshold": 0.95,
    "generator.max_new_tokens": 5, "generator.temperature": 0.7, "generator.seed": 7,
    "generator.repeats": 3, "generator.model": "other-model",
    "generator.base_url": "http://127.0.0.1:9/other/v1",
    "generator.api_key_env": "ABLATE_TEST_UNSET_KEY", "generator.timeout_s": 5.0,
    "generator.max_retries": 0, "generator.concurrency": 1,
    "generator.cost_per_1k_in": 0.5, "generator.cost_per_1k_out": 0.7,
    "prompt.version": "v2", "prompt.system": "Answer briefly. Otherwise say {refusal}",
    "prompt.user": "Question: {question}\nPassages:\n{context}\nShort answer:",
    "prompt.refusal": "No answer.", "prompt.language": "zh",
    "query.perturbation": "typo", "options": {"unused_plugin": {"x": 1}},
}
NO_VALID = object()  # no valid value other than the current one under this config


def make_scratch(root: Path) -> Path:
    """Files the cases point at: a jieba user dictionary that changes how the fixtures'
    Chinese text is cut, and (empty) cross-encoder folders."""
    (root / "user_dict.txt").write_text("氪铱钯锌 1000 n\n", encoding="utf-8")
    for name in ("cross-encoder", "other-cross-encoder"):
        (root / name).mkdir(exist_ok=True)
        (root / name / "config.json").write_text(f'{{"name": "{name}"}}')
    return root


def checked_declarations() -> list[Declaration]:
    return [d for d in all_declarations()
            if d.kind not in EXCLUDED_KINDS and d.origin not in EXCLUDED_ORIGINS]


def leaves(model: type[BaseModel] = PipelineConfig, prefix: str = "") -> list[str]:
    """Every leaf field of the pipeline config (a dict field is one leaf; `generator:`
    holds the built-in generators' settings beside its own fields)."""
    from ablate.components.contract.config import GeneratorConfig, registered_settings_models
    out: list[str] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(leaves(ann, f"{prefix}{name}."))
        else:
            out.append(f"{prefix}{name}")
    if model is GeneratorConfig:
        out.extend(dict.fromkeys(f"{prefix}{f}" for _, m, builtin in registered_settings_models()
                                 if builtin for f in m.model_fields if f"{prefix}{f}" not in out))
    return out


def leaves_under(field: str) -> list[str]:
    """The leaves a declared field covers (a section covers every field below it)."""
    return [f for f in leaves() if f == field or f.startswith(field + ".")] or [field]


def covered(leaf: str, fields: set[str]) -> bool:
    """Whether declaring `fields` covers `leaf` (a section above it, or a key inside it)."""
    return any(leaf == f or leaf.startswith(f + ".") or f.startswith(leaf + ".") for f in fields)


def with_value(data: dict, dotted: str, value: Any) -> dict:
    out = copy.deepcopy(data)
    node = out
    parts = dotted.split(".")
    for p in parts[:-1]:
        if node.get(p) is None:
            node[p] = {}
        node = node[p]
    node[parts[-1]] = copy.deepcopy(value)
    return out


def _naming_registry(field: str):
    return next((r for r in CATALOGUE.values() if r.config_field == field), None)


def changed(field: str, data: dict, scratch: Path) -> Any:
    """A valid value of `field` other than the one `data` holds, or NO_VALID."""
    value = get_dotted(data, field)
    if field == "retrieval.paths":
        return value[:1] if len(value) > 1 else [p for p in registry("retrieval path") if p not in value][:1]
    if field == "fusion.weights":
        return {p: float(i + 2) for i, p in enumerate(get_dotted(data, "retrieval.paths"))}
    if field == "retrieval.analyzer_options":
        # the options are the named analyzer's keyword arguments: it refuses any other
        # (analyzer.get_analyzer), so only one that takes a user dictionary has another
        name = get_dotted(data, "retrieval.analyzer")
        params = inspect.signature(registry("analyzer").get(name)).parameters
        new = {"user_dict": str(scratch / "user_dict.txt")}
        return new if "user_dict" in params and value != new else NO_VALID
    if field == "rerank.cross_encoder":
        return str(scratch / ("other-cross-encoder" if value else "cross-encoder"))
    candidates: list[Any] = [CHANGED[field]] if field in CHANGED else []
    reg = _naming_registry(field)
    if reg is not None and isinstance(value, str):
        candidates += [n for n in reg.names() if n != value]
    if isinstance(value, bool):
        candidates.append(not value)
    elif isinstance(value, (int, float)):
        candidates.append(value + 1)
    elif isinstance(value, str):
        candidates.append(value + " (changed)")
    elif value is None:
        candidates.append("changed")
    new = next((c for c in candidates if c != value), NO_VALID)
    assert new is not NO_VALID, f"no changed value for {field}={value!r}: add one to CHANGED"
    return new


@dataclass(frozen=True)
class Case:
    """A config under which a component runs, and the stages that run it there."""

    data: dict
    cfg: PipelineConfig
    nodes: tuple[StageNode, ...]  # every stage of the variant whose components include it
    keys: dict[str, str]  # the variant's stage label -> key
    mine: dict[str, Any]  # the component's contribution to those stages' keys
    material: dict[str, dict[str, Any]]  # label -> what its key hashes of the config


def case_at(decl: Declaration, data: dict) -> Case:
    """The variant of `data`, taken now (file digests included: a test may then edit one)."""
    cfg = PipelineConfig.model_validate(data)
    plan = Plan()
    keys = add_variant(plan, "v", cfg, EXPERIMENT)
    nodes = tuple(n for n in (plan.nodes[k] for k in keys.values())
                  if decl.identity in {d.identity for d in n.resolved.components})
    return Case(data, cfg, nodes, keys, contribution(decl, cfg),
                {n.label: _material(n) for n in nodes})


def _material(node: StageNode) -> dict[str, Any]:
    """What a stage's key hashes of the config (as flows/plan/graph.add_variant does)."""
    reads = sorted(set(node.resolved.reads) | set(stage_def(node.stage).reads))
    return read_values(node.config, reads, node.resolved.files)


def _selecting(decl: Declaration, data: dict) -> dict | None:
    """`data` with the field that names components of this kind set to this one."""
    fld = registry(decl.kind).config_field
    if not fld or get_dotted(data, fld, KeyError) is KeyError:
        return None
    current = get_dotted(data, fld)
    value = ([decl.name] if isinstance(current, list)
             else {decl.name: 1.0} if isinstance(current, dict) else decl.name)
    return with_value(data, fld, value)


def base_case(decl: Declaration, scratch: Path) -> Case | None:
    """The first config (BASE, then ENABLERS, without then with the field that names it)
    under which some stage runs `decl`; None when there is none."""
    start = PipelineConfig.model_validate(BASE).model_dump(mode="json")
    for select in (False, True):
        for extra in ENABLERS:
            data = start
            for fld, value in extra.items():
                data = with_value(data, fld, value)
            if select:
                data = _selecting(decl, data)
                if data is None:
                    return None
            for fld, value in NEEDS.get((decl.kind, decl.name), lambda s: {})(scratch).items():
                data = with_value(data, fld, value)
            case = case_at(decl, data)
            if case.nodes:
                return case
    return None


def own_fields(decl: Declaration, case: Case) -> set[str]:
    """The fields a stage hands a component (`project`) on its declaration's account: its
    own and those of the components it uses (reads, `uses` fields, settings; a declared
    file is keyed by content, but handed over only when it is read too), and the field
    that chose it when the stage keys that field (`chosen_by`; a component reached through
    a `uses` field is named by the field its user declares)."""
    folded = resolve(case.cfg, ((decl.kind, decl.name, None),))
    # its `uses` fields too where they name a `neutral` component (which adds no read)
    out = set(folded.reads) | set(folded.settings) | set(own_reads(decl))
    node = case.nodes[0]
    for kind, name, chosen_by in stage_def(node.stage).select(case.cfg, node.part):
        if (kind, name) == (decl.kind, decl.name):
            return out | ({chosen_by} if chosen_by else set())
    fld = registry(decl.kind).config_field
    return out | ({fld} if fld else set())
