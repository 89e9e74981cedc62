"""Real SmolLM2-135M-Instruct generations on both local backends (a few questions):
`torch` (transformers reading the GGUF file) and `llama_cpp` (llama-cpp-python, the
optional extra, which CI installs with scripts/install.sh --test)."""

import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import PackedContext, Passage
from ablate.components.generation import llama_local, make_generator, torch_gguf

pytestmark = pytest.mark.slow

QUESTIONS = ["In what country is Normandy located?", "When were the Normans in Normandy?",
             "From which countries did the Norse come?", "诺曼人的祖先来自哪些国家？"]
BACKENDS = ["torch", "llama_cpp"]


def _gen(name="smollm2", **kw):
    return make_generator(GeneratorConfig(name=name, max_new_tokens=12, **kw), PromptConfig())


def _items(ctx, question):
    return [(question(str(i), q), ctx) for i, q in enumerate(QUESTIONS)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_generation_is_deterministic_and_order_free(normans_ctx, question, backend):
    items = _items(normans_ctx, question)
    first = _gen(backend=backend).generate_many(items)
    for a in first:
        assert a.error is None and (a.refused or a.text)
        assert a.tokens_in > 60 and 1 <= a.tokens_out <= 12 and a.latency_s > 0
    # other order, a new generator object: same model object, same answers
    again = _gen(backend=backend).generate_many([items[2], items[0]])
    assert [a.text for a in again] == [first[2].text, first[0].text]
    models = llama_local._MODELS if backend == "llama_cpp" else torch_gguf._MODELS
    assert len(models) == 1


def test_backends_read_the_same_prompt(normans_ctx, question):
    """Both take the tokenizer and chat template from the GGUF file: the same prompt tokens."""
    items = _items(normans_ctx, question)
    torch_answers = _gen(backend="torch").generate_many(items)
    llama_answers = _gen(backend="llama_cpp").generate_many(items)
    assert [a.tokens_in for a in torch_answers] == [a.tokens_in for a in llama_answers]


@pytest.mark.parametrize("backend", BACKENDS)
def test_closed_book_reads_no_context(normans_ctx, question, backend):
    items = [(question("0", QUESTIONS[0]), normans_ctx)]
    (with_ctx,) = _gen(backend=backend).generate_many(items)
    (closed,) = _gen("closed_book", backend=backend).generate_many(items)
    assert closed.tokens_in < with_ctx.tokens_in - 40  # the passage is not in the prompt
    assert closed.error is None and (closed.refused or closed.text)


def test_identity_tracks_decoding_settings():
    assert _gen().cache_identity != _gen(seed=1).cache_identity
    assert _gen().cache_identity != _gen(temperature=0.5).cache_identity
    assert "SmolLM2-135M-Instruct" in _gen().cache_identity


@pytest.mark.parametrize("backend", BACKENDS)
def test_prompt_longer_than_window_is_input_error(question, backend):
    text = "word " * (llama_local.N_CTX + 200)
    ctx = PackedContext(("c",), (Passage("d", 0, len(text), text),), n_tokens=0, budget=0)
    with pytest.raises(InputError) as e:
        _gen(backend=backend).generate_many([(question("long", "Why?"), ctx)])
    assert e.value.field == "context.budget"


def test_sampling_is_seeded(normans_ctx, question):
    items = _items(normans_ctx, question)[:2]
    a = [x.text for x in _gen(temperature=1.0, seed=3).generate_many(items)]
    b = [x.text for x in _gen(temperature=1.0, seed=3).generate_many(items)]
    assert a == b


def test_llama_thread_count_does_not_change_answers(normans_ctx, question, monkeypatch):
    """Why N_THREADS is not in the cache identity: the same answers with 1 and 2 threads."""
    items = _items(normans_ctx, question)
    answers = {}
    for threads in (1, 2):
        monkeypatch.setattr(llama_local, "N_THREADS", threads)
        monkeypatch.setattr(llama_local, "_MODELS", {})  # load anew with this thread count
        answers[threads] = [a.text for a in _gen(backend="llama_cpp").generate_many(items)]
    assert answers[1] == answers[2]


def test_torch_thread_count_does_not_change_answers(normans_ctx, question, monkeypatch):
    """torch's thread count is not in the identity either: 1 and 2 threads, same answers
    (fixed through ABLATE_TORCH_THREADS, else the decoder picks it by the machine's load)."""
    import torch
    items = _items(normans_ctx, question)
    before = torch.get_num_threads()
    answers = {}
    try:
        for threads in (1, 2):
            monkeypatch.setenv("ABLATE_TORCH_THREADS", str(threads))
            torch.set_num_threads(threads)
            answers[threads] = [a.text for a in _gen(backend="torch").generate_many(items)]
    finally:
        torch.set_num_threads(before)
    assert answers[1] == answers[2]


def test_converted_copy_is_the_same_model(tmp_path, monkeypatch):
    """The per-machine converted copy (loaded in ~1 s instead of ~15 s) computes exactly
    what the model read from the GGUF file computes, with the same chat template."""
    import torch

    from ablate.components.runtime.models import smollm2_gguf_path
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path))
    monkeypatch.setattr(torch_gguf, "_MODELS", {})
    path = smollm2_gguf_path()
    direct, tok = torch_gguf._from_gguf(path)
    torch_gguf._save(torch_gguf.converted_dir(path), direct, tok)
    assert (torch_gguf.converted_dir(path) / "model.safetensors").is_file()
    copy, copy_tok, _ = torch_gguf.load(path)
    assert copy is not direct and copy_tok.chat_template == tok.chat_template
    ids = tok("诺曼底位于法国。Normandy is in France.", return_tensors="pt")["input_ids"]
    assert torch.equal(copy_tok("诺曼底位于法国。Normandy is in France.",
                                return_tensors="pt")["input_ids"], ids)
    with torch.inference_mode():
        assert torch.equal(direct(ids).logits, copy(ids).logits)


def test_a_gguf_transformers_cannot_read_is_one_input_error(tmp_path, monkeypatch, normans_ctx,
                                                            question):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + bytes(64))  # a header and nothing else
    gen = _gen(model=str(bad))
    with pytest.raises(InputError) as e:
        gen.generate_many([(question("0", QUESTIONS[0]), normans_ctx)])
    assert e.value.field == "generator.model" and "broken.gguf" in e.value.one_line()
    assert "backend: llama_cpp" in e.value.one_line()
