"""The judge's stage keys come from declarations (ablate.components.judge.keys), the judge's
counterpart of test_config_fields.py: every `judge.*` field a backend, the asks or a
judged metric declares it reads changes the judge stage's key; every field a backend
declares a setting changes no key; every field of the `judge:` section is one or the
other, or is recorded by content (`prompts` by the hash of its files, `calibration` by
its file's hash: the calibrate stage's key). A declared `files` field is keyed by its
content: a GGUF file rewritten in place is a new key and a new verdict cache identity; a
missing `judge.model` file is one line naming the field and path before any compute."""

from __future__ import annotations

import builtins
import errno
import os
import textwrap
from pathlib import Path

import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.judge.backends import JUDGES, LlamaJudge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.keys import BY_CONTENT, declared_settings, key_input, read_fields
from ablate.components.judge.run import READS
from ablate.components.metrics.judged import judged_metrics
from ablate.flows.plan.graph import Plan, add_variant
from tests.conftest import FIXTURES

BASE = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]}, "labels": "span"}
# a judge config of each backend under which its fields are in use
BACKENDS = {"llama_cpp": {}, "openai": {"backend": "openai", "base_url": "http://x/v1", "model": "m"}}
CHANGED = {"model": "other", "base_url": "http://y/v1",
           "json_mode": "json_object", "language": "zh", "metrics": ["faithfulness"],
           "claims": "sentences", "api_key_env": "OTHER_KEY",
           "embedder": str(FIXTURES / "data")}  # any folder: keyed by its content


def _keys(cfg: JudgeConfig, prompts: str = "p0", calibration: str = "c0") -> dict[str, str]:
    exp = BASE | {"judge": key_input(cfg, prompts), "calibration": calibration}
    return add_variant(Plan(), "v", PipelineConfig(), exp)


def _changed(cfg: JudgeConfig, field: str) -> JudgeConfig:
    value = getattr(cfg, field)
    other = CHANGED.get(field, value + 1 if isinstance(value, (int, float)) else None)
    if field == "backend":
        other = next(b for b in BACKENDS if b != value)
    assert other is not None, f"no changed value for judge.{field}"
    return JudgeConfig(**cfg.model_dump() | {field: other})


def _declared_reads() -> list[tuple[str, str]]:
    """(backend, field) for every field the judge of that backend reads."""
    return [(b, f) for b, base in BACKENDS.items() for f in read_fields(JudgeConfig(**base))]


@pytest.mark.parametrize("backend, field", _declared_reads())
def test_every_declared_read_changes_the_judge_key(backend, field):
    cfg = JudgeConfig(**BACKENDS[backend])
    name = field.removeprefix("judge.")
    if name == "temperature":  # fixed at 0: any other value is refused, so none can differ
        with pytest.raises(ValueError):
            JudgeConfig(**cfg.model_dump() | {"temperature": 0.2})
        return
    assert _keys(_changed(cfg, name))["judge"] != _keys(cfg)["judge"], field


@pytest.mark.parametrize("backend, field", [(b, s) for b in BACKENDS for s in declared_settings()])
def test_every_declared_setting_changes_no_key(backend, field):
    cfg = JudgeConfig(**BACKENDS[backend])
    assert _keys(_changed(cfg, field.removeprefix("judge."))) == _keys(cfg)


def test_every_judge_field_is_declared():
    declared = {f for b, f in _declared_reads()} | set(declared_settings()) | set(BY_CONTENT)
    declared.add("judge.metrics")  # the chosen judged metrics: their own declarations
    assert {f"judge.{f}" for f in JudgeConfig.model_fields} == declared
    for d in JUDGES.declarations():  # a field is either read or a setting
        assert not set(d.reads) & set(declared_settings()), d.name
    assert set(READS) <= set(read_fields(JudgeConfig()))


def test_the_chosen_judged_metrics_and_content_fields_are_keyed():
    cfg = JudgeConfig()
    base = _keys(cfg)
    fewer = _keys(JudgeConfig(metrics=("faithfulness", "context_recall")))
    assert fewer["judge"] != base["judge"]
    # a field only a metric reads is keyed only while that metric is chosen
    only_recall = JudgeConfig(metrics=("context_recall",))
    assert _keys(JudgeConfig(metrics=("context_recall",), max_passages=3))["judge"] == \
        _keys(only_recall)["judge"]
    assert all(j.reads == () or j.reads[0].startswith("judge.") for j in judged_metrics())
    assert _keys(cfg, prompts="p1")["judge"] != base["judge"]
    changed = _keys(cfg, calibration="c1")
    assert changed["calibrate"] != base["calibrate"] and changed["judge"] == base["judge"]


def test_judge_section_changes_no_other_stage():
    a, b = _keys(JudgeConfig()), _keys(JudgeConfig(seed=3))
    same = {k for k in a if a[k] == b[k]}
    assert {"chunk", "label", "fuse", "rerank", "assemble", "generate"} <= same
    assert a["judge"] != b["judge"] and a["score"] != b["score"]


def test_rewriting_the_judge_model_in_place_is_a_new_key_and_cache_identity(tmp_path):
    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    cfg = JudgeConfig(model=str(model))
    key, identity = _keys(cfg)["judge"], LlamaJudge(cfg).cache_identity
    st = model.stat()
    model.write_bytes(b"GGUF" + bytes(59) + b"\x01")  # same name and size, other weights
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _keys(cfg)["judge"] != key
    assert LlamaJudge(cfg).cache_identity != identity
    model.write_bytes(b"GGUF" + bytes(60))  # the old weights again: the old key
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000))
    assert _keys(cfg)["judge"] == key


SPEC = """
name: judged
dataset: {{path: {data}, format: squad}}
tier: full
split: all
baseline:
  generator: {{name: extractive}}
judge:
  model: {model}
"""


def _check(tmp_path, model: str) -> InputError:
    from ablate.flows.run.context import RunOptions, build_context
    spec = tmp_path / "exp.yaml"
    spec.write_text(textwrap.dedent(SPEC.format(data=FIXTURES / "squad_tiny.json", model=model)))
    with pytest.raises(InputError) as e:
        build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "cache")))
    msg = str(e.value)
    assert "\n" not in msg and e.value.field == "judge.model" and f"{spec}:9:" in msg, msg
    return e.value


def test_a_missing_judge_model_is_one_line_before_any_compute(tmp_path):
    missing = tmp_path / "models" / "judge.gguf"
    err = _check(tmp_path, str(missing))
    assert err.message == f"no such file: {missing}"


def test_an_unreadable_judge_model_is_one_line_before_any_compute(tmp_path, monkeypatch):
    """Opening the file fails as it does for a user without read permission; root (CI) reads
    any file whatever its mode, so the refusal is made by `open` itself, for this path only."""
    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    real_open, refused = builtins.open, []

    def refusing_open(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file) == model:
            refused.append(file)
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    err = _check(tmp_path, str(model))
    assert refused and err.message == f"cannot read {model}: {os.strerror(errno.EACCES)}"


def test_verdict_cache_identities_and_the_recorded_config_keep_their_form(tmp_path):
    """The verdict cache's identities (the model by the one model identity, the digest the
    stage keys hash), and the manifest records the same config."""
    from ablate.components.contract.registry import installed_version
    from ablate.components.judge.backends import OpenAIJudge
    from ablate.components.judge.keys import recorded_config
    from ablate.components.runtime.digest import content_digest
    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    sha = content_digest(model)[:16]
    assert LlamaJudge(JudgeConfig(model=str(model), seed=2)).cache_identity == (
        f"judge/llama_cpp/v1/judge.gguf-{sha}/llama_cpp_python="
        f"{installed_version('llama_cpp_python')}/n_ctx=4096/grammar=json_schema"
        f"/temperature=0.0/seed=2")
    assert OpenAIJudge(JudgeConfig(backend="openai", base_url="http://x/v1/", model="m",
                                   timeout_s=9)).cache_identity == \
        "judge/openai/v1/http://x/v1/model=m/json_mode=json_schema/temperature=0.0/seed=0"
    # self-preference: the judge's model key is the key of a generator on the same file
    from ablate.components.contract.config import GeneratorConfig, PromptConfig
    from ablate.components.generation.llama_local import LlamaLocalGenerator
    generator = LlamaLocalGenerator(GeneratorConfig(name="smollm2", model=str(model)), PromptConfig())
    assert LlamaJudge(JudgeConfig(model=str(model))).model_key() == generator.model_key()
    assert set(recorded_config(JudgeConfig())) == {
        "backend", "model", "base_url", "json_mode", "language", "metrics", "claims",
        "max_claims", "max_passages", "relevancy_questions", "embedder", "max_new_tokens",
        "temperature", "seed"}
