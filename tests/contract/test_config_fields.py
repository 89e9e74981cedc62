"""Config fields and stage keys.

- Every leaf field of the pipeline config changes at least one stage key, so a field
  that no component declares fails here, not as a stale cache hit for a user.
- Per component (every registry, `config_cases.checked_declarations`): each field its own
  declaration reads (and each file it declares, by content) changes the key of every stage
  that runs it, through that component's own contribution (`pipeline.contribution`),
  which the stage's key material holds; each declared setting changes no key. That a
  component reads no field beyond its declaration is tests/contract/test_undeclared_reads.py.
"""

from __future__ import annotations

import copy

import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import flatten, get_dotted
from ablate.components.contract.registry import Declaration, all_declarations
from ablate.components.pipeline import own_reads
from ablate.flows.plan.graph import Plan, add_variant
from tests.contract.config_cases import (
    EXCLUDED_KINDS,
    EXPERIMENT,
    NO_VALID,
    Case,
    base_case,
    case_at,
    changed,
    checked_declarations,
    leaves_under,
    make_scratch,
    with_value,
)

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
    {"retrieval": {"dense_index": "hnsw"}},  # each approximate index reads its own parameters
    {"retrieval": {"dense_index": "ivf"}},
    {"retrieval": {"paths": ["graph"]}},  # the graph path's settings
]
# A changed value for fields whose type alone does not give a valid one.
CHANGED = {
    "chunking.method": "sentence", "chunking.overlap": 16, "retrieval.paths": ["bm25"],
    "retrieval.analyzer": "english", "fusion.method": "convex", "fusion.normalization": "zscore",
    "fusion.weights": {"bm25": 2.0, "dense": 1.0}, "rerank.method": "none",
    "context.policy": "truncate", "generator.name": "smollm2", "generator.model": "other",
    "rerank.cross_encoder": "/other", "retrieval.analyzer_options": {"user_dict": "terms.txt"},
    "prompt.language": "zh", "query.perturbation": "typo", "retrieval.dense_backend": "torch",
    "generator.backend": "llama_cpp", "retrieval.dense_index": "hnsw",
    "retrieval.graph.extractor": "words", "retrieval.graph.spreading": "hops",
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
    """The pipeline fields declared settings (a judge backend's settings are fields of the
    experiment's `judge:` section: tests/contract/test_judge_fields.py)."""
    return {s for d in all_declarations() if d.kind != "judge" for s in d.settings}


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
    from ablate.components.judge.config import JudgeConfig
    pipeline_fields = PipelineConfig().model_dump(mode="json")
    judge_fields = {"judge": JudgeConfig().model_dump(mode="json")}
    for d in all_declarations():
        data = judge_fields if d.kind == "judge" else pipeline_fields  # what the kind reads
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


# ---- per component: its own declaration, its own contribution to the key --------------

@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return make_scratch(tmp_path_factory.mktemp("config-fields"))


def _cases(attr: str) -> list:
    out = []
    for d in checked_declarations():
        fields = own_reads(d) if attr == "reads" else getattr(d, attr)
        out.extend(pytest.param(d, f, id=f"{d.kind}:{d.name}-{f}") for f in dict.fromkeys(fields))
    return out


def _base(decl: Declaration, scratch) -> Case:
    case = base_case(decl, scratch)
    assert case is not None, (f"no stage runs {decl.identity} under any base config: add what "
                              f"enables it to ENABLERS or NEEDS in tests/contract/config_cases.py")
    return case


def _attributed(decl: Declaration, before: Case, after: Case, what: str) -> None:
    """Every stage running `decl` changed key, and the change is `decl`'s own: its
    contribution changed and each stage's key material holds that contribution."""
    assert after.mine != before.mine, f"{what} does not change the contribution of {decl.identity}"
    assert {n.label for n in after.nodes} == {n.label for n in before.nodes}, what
    for node in after.nodes:
        assert after.keys[node.label] != before.keys[node.label], \
            f"{what} leaves the key of {node.label} (which runs {decl.identity}) unchanged"
        material = after.material[node.label]
        missing = sorted(k for k, v in after.mine["reads"].items() if material.get(k, KeyError) != v)
        assert not missing, f"the key of {node.label} does not hash {missing} of {decl.identity}"


@pytest.mark.parametrize("decl,field", _cases("reads"))
def test_declared_read_changes_its_own_stage_key(decl, field, scratch):
    before = _base(decl, scratch)
    tried = 0
    for leaf in leaves_under(field):
        new = changed(leaf, before.data, scratch)
        if new is not NO_VALID:
            after = case_at(decl, with_value(before.data, leaf, new))
            _attributed(decl, before, after, f"{leaf}: {get_dotted(before.data, leaf)!r} -> {new!r}")
            tried += 1
    if not tried:
        pytest.skip(f"{field} has no other valid value under {decl.identity}")


@pytest.mark.parametrize("decl,field", _cases("files"))
def test_declared_file_contents_change_its_own_stage_key(decl, field, scratch, tmp_path):
    path = tmp_path / "declared.file"
    path.write_text("one")
    data = with_value(_base(decl, scratch).data, field, str(path))
    before = case_at(decl, data)
    path.write_text("two, and longer")  # another size: the digest memo is keyed by size
    _attributed(decl, before, case_at(decl, data), f"the contents of {field}")


@pytest.mark.parametrize("decl,field", _cases("settings"))
def test_declared_setting_changes_no_key(decl, field, scratch):
    before = _base(decl, scratch)
    new = changed(field, before.data, scratch)
    after = case_at(decl, with_value(before.data, field, new))
    assert after.keys == before.keys, f"{field} is declared a setting of {decl.identity} but is keyed"
    assert after.mine == before.mine


def test_cases_cover_every_registry_but_the_judge():
    """The parametrisation is over every registry (a kind added later included)."""
    kinds = {d.kind for d in checked_declarations()}
    assert kinds == {d.kind for d in all_declarations()} - EXCLUDED_KINDS
    assert not kinds & EXCLUDED_KINDS
