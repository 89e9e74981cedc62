"""The `openai` generator against a real `python -m llama_cpp.server` on localhost,
serving the bundled SmolLM2 GGUF; the server is started here and stopped afterwards."""

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from components.config import GeneratorConfig, PromptConfig
from components.errors import InputError
from components.generation import make_generator
from components.generation.cache import GenerationCache
from components.models import smollm2_gguf_path

pytestmark = pytest.mark.slow

KEY = "local-test-key-0042"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf_path()),
           "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", "1", "--api_key", KEY]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                r = httpx.get(f"{base}/models", headers={"Authorization": f"Bearer {KEY}"},
                              timeout=2)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready in 60 s: {log.read_text()[-2000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
