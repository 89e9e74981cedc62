"""The local model's cache identity: what changes an answer is in it, speed settings are not.

Runs without llama.cpp: the identity reads the GGUF file's name, size and whole-file sha256.
"""

import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.generation import llama_local


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    return path


def _identity(path, **kw):
    cfg = GeneratorConfig(name="smollm2", model=str(path), **kw)
    return llama_local.LlamaLocalGenerator(cfg, PromptConfig()).cache_identity


def test_thread_count_is_not_part_of_the_identity(gguf, monkeypatch):
    monkeypatch.setattr(llama_local, "N_THREADS", 2)
    two = _identity(gguf)
    monkeypatch.setattr(llama_local, "N_THREADS", 1)
    assert _identity(gguf) == two
    assert "thread" not in two


def test_identity_keeps_what_changes_an_answer(gguf, tmp_path):
    base = _identity(gguf)
    assert _identity(gguf, seed=1) != base
    assert _identity(gguf, temperature=0.5) != base
    assert _identity(gguf, max_new_tokens=7) != base
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + bytes(range(255, -1, -1)) * 64)
    assert _identity(other) != base
    assert f"n_ctx={llama_local.N_CTX}" in base


def test_backend_is_part_of_the_identity(gguf):
    torch_id, llama_id = _identity(gguf, backend="torch"), _identity(gguf, backend="llama_cpp")
    assert torch_id != llama_id
    assert torch_id.startswith("torch/") and "transformers=" in torch_id and "gguf=" in torch_id
    assert llama_id.startswith("llama_cpp/llama_cpp_python=")


def test_identity_reads_the_whole_file(tmp_path):
    """Two GGUF files of one name and size that differ only past the first MiB (a fine-tune
    keeps the header and tokenizer) are different models: different identities."""
    head = b"GGUF" + bytes(range(256)) * 4096  # > 1 MiB of identical header
    a, b = tmp_path / "a" / "m.gguf", tmp_path / "b" / "m.gguf"
    a.parent.mkdir(), b.parent.mkdir()
    a.write_bytes(head + b"\x01" * 4096)
    b.write_bytes(head + b"\x02" * 4096)
    assert _identity(a) != _identity(b)


def test_identity_follows_a_file_rewritten_in_place(gguf):
    import os
    before = _identity(gguf)
    data = bytearray(gguf.read_bytes())
    data[-1] ^= 0xFF
    gguf.write_bytes(bytes(data))
    st = gguf.stat()
    os.utime(gguf, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _identity(gguf) != before
