"""Every leaf field of the pipeline config changes at least one stage key, so a field
that no component declares fails here, not as a stale cache hit for a user."""

from __future__ import annotations

import copy

import pytest

from ablate.components.config import PipelineConfig, flatten, get_dotted
from ablate.components.registry import all_declarations
from ablate.flows.plan.graph import Plan, add_variant

EXPERIMENT = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]},
              "labels": "span"}
EVERY_SIGNAL = {"semantic": 0.2, "lexical": 0.2, "fusion": 0.2, "source": 0.2, "cross_encoder": 0.2}
# Base configs under which each field is in use somewhere (a single path reads no
# fusion field; only the openai generator reads base_url, only extractive its threshold,
# only the local GGUF generators their backend).
BASES = [
    {"retrieval": {"paths": ["bm25", "dense"]},
     "rerank": {"method": "composite", "weights": EVERY_SIGNAL, "cross_encoder": "/ce"},
     "generator": {"name": "openai", "base_url": "http://x", "model": "m"}},
    {"retrieval": {"paths": ["bm25", "dense"], "analyzer": "zh"}, "fusion": {"method": "convex"},
     "generator": {"name": "extractive"}},
    {"generator": {"name": "smollm2"}},  # the local GGUF generators' backend
]
# A changed value for fields whose type alone does not give a valid one.
CHANGED = {
    "chunking.method": "sentence", "chunking.overlap": 16, "retrieval.paths": ["bm25"],
    "retrieval.analyzer": "english", "fusion.method": "convex", "fusion.normalization": "zscore",
    "fusion.weights": {"bm25": 2.0, "dense": 1.0}, "rerank.method": "none",
    "context.policy": "truncate", "generator.name": "smollm2", "generator.model": "other",
    "rerank.cross_encoder": "/other", "retrieval.analyzer_options": {"user_dict": "terms.txt"},
    "prompt.language": "zh", "query.perturbation": "typo", "retrieval.dense_backend": "onnx",
    "generator.backend": "llama_cpp",
}
EXEMPT = {"options"}  # free-form plugin options: read as `options.<component>`


def _changed(field: str, value: object) -> object:
    if field in CHANGED:
        return CHANGED[field]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value * 0.5 + 0.13, 3)
    if isinstance(value, str):
        return value + " (changed)"
    raise AssertionError(f"no changed value for {field}={value!r}")


def _set(data: dict, dotted: str, value: object) -> dict:
    out = copy.deepcopy(data)
    parts = dotted.split(".")
    node = out
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return out


def _keys(data: dict) -> dict[str, str]:
    return add_variant(Plan(), "v", PipelineConfig.model_validate(data), EXPERIMENT)


def _leaves() -> list[str]:
    seen: dict[str, None] = {}
    for base in BASES:
        for f in flatten(PipelineConfig.model_validate(base)):
            if f.split(".")[0] not in EXEMPT:
                seen[f] = None
    return list(seen)


def _settings() -> set[str]:
    return {s for d in all_declarations() for s in d.settings}


@pytest.mark.parametrize("field", _leaves())
def test_every_field_changes_a_stage_key(field):
    if field in _settings():
        pytest.skip("declared a setting: it cannot change an output")
    for base in BASES:
        data = PipelineConfig.model_validate(base).model_dump(mode="json")
        value = get_dotted(data, field)
        changed = _set(data, field, _changed(field, value))
        if _keys(changed) != _keys(data):
            return
    pytest.fail(f"no stage key changes when {field} changes: declare it in the `reads` "
                f"of the component that reads it")


def test_settings_change_no_key():
    base = PipelineConfig.model_validate(BASES[0]).model_dump(mode="json")
    for field in sorted(_settings()):
        value = get_dotted(base, field)
        new = "OTHER_KEY" if value is None else _changed(field, value)
        assert _keys(_set(base, field, new)) == _keys(base), field


def test_declared_fields_exist():
    data = PipelineConfig().model_dump(mode="json")
    for d in all_declarations():
        for f in d.reads + d.settings + tuple(u for u, _ in d.uses):
            root = f.split(".")[0]
            assert root in EXEMPT or get_dotted(data, f, KeyError) is not KeyError, (d.identity, f)


def test_undeclared_read_sees_the_default():
    """A stage computes from its config projected on what it declares: an undeclared
    field holds its default, so it cannot produce a result its key does not describe."""
    plan = Plan()
    cfg = PipelineConfig.model_validate({"generator": {"name": "extractive", "threshold": 0.9},
                                         "fusion": {"rrf_k": 7}})
    keys = add_variant(plan, "v", cfg, EXPERIMENT)
    gen = plan.nodes[keys["generate"]].config
    assert gen.generator.threshold == 0.9 and gen.fusion.rrf_k == 60
    assert plan.nodes[keys["fuse"]].config.fusion.rrf_k == 7
