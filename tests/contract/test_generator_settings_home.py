"""One home per generator's settings (issue 51.4): each generator's fields (type, bounds,
default, docstring) are declared once, in its settings model beside it; the stored
`generator:` record, the plan's accepted fields and the reference derive from those
models, and a config's dump (so its id and its stage keys) is what it was when the
record listed every built-in field itself."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from tests.conftest import registries_restored

# GeneratorConfig().model_dump(mode="json") and config ids as the record gave them before
# the settings moved beside their generators (commit 64f26e3)
RECORD = {"name": "extractive", "backend": "torch", "threshold": 0.3, "max_new_tokens": 48,
          "temperature": 0.0, "seed": 0, "batch_size": 8, "repeats": 1, "model": None,
          "base_url": None, "api_key_env": None, "timeout_s": 60.0, "max_retries": 3,
          "concurrency": 2, "cost_per_1k_in": 0.0, "cost_per_1k_out": 0.0}
OPENAI = {"name": "openai", "model": "m", "base_url": "http://x/v1", "timeout_s": 5}


def _builtins():
    from ablate.components.contract.registry import registry
    return [d for d in registry("generator").declarations() if not d.source]


def test_the_record_declares_only_what_every_generator_shares():
    from ablate.components.contract.config import GeneratorConfig
    from ablate.components.generation.settings import COMMON
    assert set(GeneratorConfig.model_fields) == set(COMMON)


def test_each_built_in_generator_s_settings_live_beside_it():
    """Its settings model is a class of its own module; the plan accepts exactly its
    fields (and the shared ones), no list kept elsewhere."""
    from ablate.components.generation.settings import COMMON, accepted, settings_fields
    for decl in _builtins():
        model = decl.settings_model
        assert isinstance(model, type) and issubclass(model, BaseModel), decl.name
        assert model.__module__ == decl.origin, (decl.name, model.__module__)
        assert settings_fields(decl) == tuple(model.model_fields)
        assert accepted(decl) == set(COMMON) | set(model.model_fields)


def test_a_setting_s_doc_speaks_of_its_own_generator():
    """Declared beside its generator, `model` says what it is for that generator."""
    from ablate.components.generation import GENERATORS
    openai = GENERATORS.declaration("openai").settings_model.model_fields["model"]
    local = GENERATORS.declaration("smollm2").settings_model.model_fields["model"]
    assert "GGUF" not in (openai.description or "") and "endpoint" in (openai.description or "")
    assert "GGUF" in (local.description or "") and "endpoint" not in (local.description or "")


def test_a_config_dumps_and_keys_as_it_did():
    from ablate.components.contract.config import GeneratorConfig, PipelineConfig
    from ablate.flows.plan.variant import config_id
    assert GeneratorConfig().model_dump(mode="json") == RECORD
    assert PipelineConfig().generator.model_dump(mode="json") == RECORD
    assert config_id(PipelineConfig()) == "50eba34a0d2d5d9d"
    assert config_id(PipelineConfig.model_validate({"generator": OPENAI})) == "f7e2e17983a1a169"
    gen = GeneratorConfig.model_validate(OPENAI)
    assert (gen.timeout_s, gen.threshold, gen.max_new_tokens) == (5.0, 0.3, 48)


@pytest.mark.parametrize("field, value, message", [
    ("max_new_tokens", 0, "Input should be greater than or equal to 1"),
    ("threshold", 1.5, "Input should be less than or equal to 1"),
    ("timeout_s", "soon", "Input should be a valid number, unable to parse string as a number"),
    ("temprature", 0.5, "unknown field; did you mean temperature?"),
])
def test_a_bad_built_in_setting_names_its_field(field, value, message):
    from pydantic import ValidationError

    from ablate.components.contract.config import PipelineConfig
    from ablate.flows.plan.spec_errors import error_loc, error_message
    with pytest.raises(ValidationError) as e:
        PipelineConfig.model_validate({"generator": {"name": "smollm2", field: value}})
    err = e.value.errors()[0]
    assert error_loc(err) == ("generator", field)
    assert error_message(err, error_loc(err), PipelineConfig) == message


def test_two_generators_cannot_disagree_on_a_stored_field():
    """A field's stored value is one (the record dumps every built-in field): a plugin
    whose model gives a built-in field another default or type is refused when it
    registers, naming the generator that declares it."""
    from ablate.components.contract.registry import RegistrationError
    from ablate.components.generation import GENERATORS, BaseGenerator

    class Greedy(BaseModel):
        max_new_tokens: int = Field(99, ge=1)
        """Most tokens."""

    with registries_restored():
        with pytest.raises(RegistrationError, match="max_new_tokens"):
            GENERATORS.register("greedy51", reads=("generator.max_new_tokens",),
                                settings_model=Greedy)(type("G", (BaseGenerator,), {}))
