"""The `openai` generator against a real `python -m llama_cpp.server` on localhost,
serving the bundled SmolLM2 GGUF; the server is started here and stopped afterwards."""


import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.generation import make_generator
from ablate.components.generation.cache import GenerationCache
from tests.servers import llama_server

pytestmark = pytest.mark.slow

KEY = "local-test-key-0042"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with llama_server(KEY, log, timeout_s=60) as base:
        yield base


def _cfg(base, env="ABLATE_TEST_LLM_KEY"):
    return GeneratorConfig(name="openai", base_url=base, model="smollm2", api_key_env=env,
                           max_new_tokens=8, concurrency=2, timeout_s=60, max_retries=1)


def test_real_server_generates_and_caches(server, tmp_path, monkeypatch, normans_ctx, question):
    monkeypatch.setenv("ABLATE_TEST_LLM_KEY", KEY)
    gen = make_generator(_cfg(server), PromptConfig())
    items = [(question("a", "In what country is Normandy located?"), normans_ctx),
             (question("b", "When were the Normans in Normandy?"), normans_ctx)]
    cache = GenerationCache(tmp_path)
    out = gen.generate_many(items, cache)
    for a in out:
        assert a.error is None and (a.refused or a.text)
        assert a.tokens_in > 60 and 1 <= a.tokens_out <= 8
    again = make_generator(_cfg(server), PromptConfig()).generate_many(items, cache)
    assert [a.text for a in again] == [a.text for a in out] and all(a.cached for a in again)
    assert cache.counters == {"generated": 2, "reused": 2}
    assert KEY not in gen.cache_identity and KEY not in repr(gen)
    assert not any(KEY in p.read_text() for p in tmp_path.rglob("*.json"))


def test_real_server_rejects_wrong_key(server, monkeypatch, normans_ctx, question):
    monkeypatch.setenv("ABLATE_TEST_LLM_WRONG", "not-the-key")
    gen = make_generator(_cfg(server, "ABLATE_TEST_LLM_WRONG"), PromptConfig())
    with pytest.raises(InputError) as e:
        gen.generate_many([(question("a", "Where is Normandy?"), normans_ctx)])
    assert "401" in str(e.value) and "not-the-key" not in str(e.value)
