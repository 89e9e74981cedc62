"""make_generator, the registry, and one conformance test for every registered generator
that can run here without a server."""

import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Answer
from ablate.components.generation import GENERATORS, Generator, make_generator
from ablate.components.generation.cache import GenerationCache


def test_registry_names():
    assert set(GENERATORS.names()) == {"extractive", "smollm2", "openai", "closed_book", "none"}


def test_unknown_name_is_input_error_listing_names():
    with pytest.raises(InputError) as e:
        make_generator(GeneratorConfig(name="gpt9"), PromptConfig())
    assert "extractive" in str(e.value) and "gpt9" in str(e.value)


def test_bad_gguf_path_is_input_error(tmp_path):
    with pytest.raises(InputError) as e:
        make_generator(GeneratorConfig(name="smollm2", model=str(tmp_path / "x.gguf")),
                       PromptConfig())
    assert e.value.field == "generator.model"


def _conformance(gen, items, tmp_path):
    assert isinstance(gen, Generator)
    ident = gen.cache_identity
    assert isinstance(ident, str) and ident == gen.cache_identity
    cache = GenerationCache(tmp_path)
    out = gen.generate_many(items, cache)
    assert len(out) == len(items) and all(isinstance(a, Answer) for a in out)
    assert all(a.refused or a.text for a in out)
    again = gen.generate_many(items, cache)
    assert [a.text for a in again] == [a.text for a in out] and all(a.cached for a in again)
    assert cache.counters == {"generated": len(items), "reused": len(items)}


def test_extractive_conforms(tmp_path, normans_ctx, question):
    items = [(question("a", "Where is Normandy?"), normans_ctx),
             (question("b", "What is the capital of Mars?"), normans_ctx)]
    _conformance(make_generator(GeneratorConfig(), PromptConfig()), items, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["smollm2", "closed_book"])
def test_local_model_generators_conform(tmp_path, normans_ctx, question, name):
    items = [(question("a", "Where is Normandy?"), normans_ctx)]
    _conformance(make_generator(GeneratorConfig(name=name, max_new_tokens=12), PromptConfig()),
                 items, tmp_path)
