"""Each generator declares its own typed settings (issue 43.2): a plugin generator brings
its fields without editing config.py, a field the chosen generator does not read is one
line naming file, line and field, a field the baseline holds for another generator of
the sweep (the demo's `threshold` when the sweep reaches smollm2) is ignored for that
variant and said so by `ablate check`, and `generator.backend` is a registry's names."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, registries_restored
from tests.specs import pipeline, vary, write_experiment

PLUGIN = """\
from typing import Literal

from pydantic import BaseModel, Field

from ablate.components.contract.records import Answer
from ablate.components.generation.base import GENERATORS, BaseGenerator


class ParrotSettings(BaseModel):
    style: Literal["short", "long"] = "short"
    \"\"\"How much of the question to repeat.\"\"\"
    words: int = Field(3, ge=1)
    \"\"\"Words repeated.\"\"\"


@GENERATORS.register("parrot43", reads=("generator.style", "generator.words"),
                     settings_model=ParrotSettings)
class Parrot(BaseGenerator):
    @property
    def cache_identity(self):
        s = self.settings
        return f"parrot/{s.style}/{s.words}"

    def _generate_one(self, question, context, system, user):
        text = " ".join(question.question.split()[: self.settings.words])
        return Answer(text=text, refused=False)
"""


@pytest.fixture(autouse=True)
def _restore():
    with registries_restored():
        yield


def _one_line(capsys, spec) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"ablate: error: {spec}:")
    return err


def test_a_plugin_generator_brings_its_own_settings(run_cli, tmp_path, capsys):
    (tmp_path / "parrot43.py").write_text(PLUGIN)
    spec = write_experiment(tmp_path, "parrot", smoke_size=6, plugins=["./parrot43.py"],
                            baseline=pipeline(generator={"name": "parrot43", "style": "long",
                                                         "words": 5}))
    assert run_cli("check", str(spec)) == 0, capsys.readouterr().err
    from ablate.components.contract.config import PipelineConfig
    from ablate.components.generation import GENERATORS, make_generator
    cfg = PipelineConfig.model_validate({"generator": {"name": "parrot43", "words": 5}})
    gen = make_generator(cfg.generator, cfg.prompt)
    assert gen.settings.words == 5 and gen.settings.style == "short"
    assert GENERATORS.declaration("parrot43").settings_model.__name__ == "ParrotSettings"
    # read per question: the typed view is built once per generator, not per access
    assert gen.settings is gen.settings


@pytest.mark.parametrize("field, value, message", [
    ("words", 0, "Input should be greater than or equal to 1"),
    ("style", "medium", "Input should be 'short' or 'long'"),
    ("wrds", 2, "did you mean words?"),
])
def test_a_plugin_generator_s_fields_are_validated(run_cli, tmp_path, capsys, field, value,
                                                   message):
    (tmp_path / "parrot43.py").write_text(PLUGIN)
    spec = write_experiment(tmp_path, "parrot", smoke_size=6, plugins=["./parrot43.py"],
                            baseline=pipeline(generator={"name": "parrot43", field: value}))
    assert run_cli("check", str(spec)) == 2
    err = _one_line(capsys, spec)
    assert message in err and f"field 'baseline.generator.{field}'" in err


def test_a_field_swept_for_a_generator_that_does_not_read_it_is_one_line(run_cli, tmp_path,
                                                                         capsys):
    spec = write_experiment(tmp_path, "wrong", smoke_size=6,
                            baseline=pipeline(generator={"name": "smollm2"}),
                            sweeps=[vary("generator.threshold", 0.1)])
    assert run_cli("check", str(spec)) == 2
    err = _one_line(capsys, spec)
    assert ":12:" in err  # the sweep's values (tests/specs.py's fixed layout)
    assert "generator 'smollm2' does not read 'threshold'" in err
    assert "field 'sweeps.0.values.0'" in err


def test_a_typo_in_a_generator_field_gets_a_did_you_mean(run_cli, tmp_path, capsys):
    spec = write_experiment(tmp_path, "typo", smoke_size=6,
                            baseline=pipeline(generator={"name": "smollm2", "temprature": 0.5}))
    assert run_cli("check", str(spec)) == 2
    err = _one_line(capsys, spec)
    assert "did you mean temperature?" in err and "field 'baseline.generator.temprature'" in err


def test_a_field_written_in_a_variant_for_a_generator_that_does_not_read_it(run_cli, tmp_path,
                                                                           capsys):
    spec = write_experiment(tmp_path, "variant", smoke_size=6, baseline=pipeline(),
                            variants=[{"name": "small", "set": {"generator.name": "smollm2",
                                                                "generator.threshold": 0.1}}])
    assert run_cli("check", str(spec)) == 2
    err = _one_line(capsys, spec)
    assert "generator 'smollm2' does not read 'threshold'" in err and "variants.0.set" in err


def test_the_demo_s_inherited_threshold_is_ignored_where_unread(run_cli, tmp_path, capsys):
    """The demo's baseline: extractive with a threshold and max_new_tokens (for the model
    generators the sweep reaches); each variant keeps the fields its generator reads."""
    spec = write_experiment(
        tmp_path, "demo-like", smoke_size=6,
        baseline=pipeline(generator={"name": "extractive", "threshold": 0.3,
                                     "max_new_tokens": 32}),
        sweeps=[vary("generator.name", "smollm2", "closed_book")])
    assert run_cli("check", str(spec)) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    text = out.out + out.err
    assert "generator.threshold is not read by smollm2" in text
    assert "generator.max_new_tokens is not read by extractive" in text


def test_a_baseline_field_no_generator_of_the_sweep_reads_is_told(run_cli, tmp_path, capsys):
    """Files from before generators had settings of their own keep working (the bundled
    factorial and robustness demos set max_new_tokens for extractive): the field is
    ignored, and check says so at its line."""
    spec = write_experiment(
        tmp_path, "nobody", smoke_size=6,
        baseline=pipeline(generator={"name": "extractive", "max_new_tokens": 32}))
    assert run_cli("check", str(spec)) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    assert (f"{spec}:9: generator.max_new_tokens is not read by extractive: ignored in its 1 "
            "variant (baseline); no generator of this experiment reads it") in out.out + out.err


def test_the_backend_is_a_registry_s_names(run_cli, tmp_path, capsys):
    spec = write_experiment(tmp_path, "engine", smoke_size=6,
                            baseline=pipeline(generator={"name": "smollm2",
                                                         "backend": "llama_cp"}))
    assert run_cli("check", str(spec)) == 2
    err = _one_line(capsys, spec)
    assert "unknown gguf engine 'llama_cp'; did you mean llama_cpp?" in err
    assert "field 'baseline.generator.backend'" in err


def test_the_reference_lists_each_generator_s_settings_and_engines():
    from ablate.components.contract.registry import registry
    from ablate.components.generation.settings import settings_fields
    text = (ROOT / "docs" / "experiment-file.md").read_text()
    for decl in registry("generator").declarations():
        head = f"### baseline.generator: `{decl.name}`"
        assert head in text, head
        section = text.split(head, 1)[1].split("\n### ", 1)[0]
        for f in settings_fields(decl):
            assert f"| `baseline.generator.{f}` |" in section, (decl.name, f)
    row = next(ln for ln in text.splitlines() if ln.startswith("| `baseline.generator.backend`"))
    names = ", ".join(f"`{n}`" for n in registry("gguf engine").names())
    assert "| choice |" in row and f"gguf engine: {names}" in row
