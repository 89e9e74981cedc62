"""Real SmolLM2-135M-Instruct generations through llama-cpp-python (a few questions)."""

import pytest

from components.config import GeneratorConfig, PromptConfig
from components.errors import InputError
from components.generation import make_generator
from components.generation import llama_local
from components.records import PackedContext, Passage

pytestmark = pytest.mark.slow

QUESTIONS = ["In what country is Normandy located?", "When were the Normans in Normandy?",
             "From which countries did the Norse come?"]


def _gen(name="smollm2", **kw):
    return make_generator(GeneratorConfig(name=name, max_new_tokens=12, **kw), PromptConfig())


def test_real_generation_is_deterministic_and_order_free(normans_ctx, question):
    items = [(question(str(i), q), normans_ctx) for i, q in enumerate(QUESTIONS)]
    first = _gen().generate_many(items)
    for a in first:
        assert a.error is None and (a.refused or a.text)
        assert a.tokens_in > 60 and 1 <= a.tokens_out <= 12 and a.latency_s > 0
    # other order, a new generator object: same model object, same answers
    again = _gen().generate_many([items[2], items[0]])
    assert [a.text for a in again] == [first[2].text, first[0].text]
    assert len(llama_local._MODELS) == 1


def test_closed_book_reads_no_context(normans_ctx, question):
    items = [(question("0", QUESTIONS[0]), normans_ctx)]
    (with_ctx,) = _gen().generate_many(items)
    (closed,) = _gen("closed_book").generate_many(items)
    assert closed.tokens_in < with_ctx.tokens_in - 40  # the passage is not in the prompt
    assert closed.error is None and (closed.refused or closed.text)


def test_identity_tracks_decoding_settings():
    assert _gen().cache_identity != _gen(seed=1).cache_identity
    assert _gen().cache_identity != _gen(temperature=0.5).cache_identity
    assert "SmolLM2-135M-Instruct" in _gen().cache_identity


def test_prompt_longer_than_window_is_input_error(question):
    text = "word " * (llama_local.N_CTX + 200)
    ctx = PackedContext(("c",), (Passage("d", 0, len(text), text),), n_tokens=0, budget=0)
    with pytest.raises(InputError) as e:
        _gen().generate_many([(question("long", "Why?"), ctx)])
    assert e.value.field == "context.budget"


def test_thread_count_does_not_change_answers(normans_ctx, question, monkeypatch):
    """Why N_THREADS is not in the cache identity: the same answers with 1 and 2 threads."""
    items = [(question(str(i), q), normans_ctx) for i, q in enumerate(QUESTIONS)]
    answers = {}
    for threads in (1, 2):
        monkeypatch.setattr(llama_local, "N_THREADS", threads)
        monkeypatch.setattr(llama_local, "_MODELS", {})  # load anew with this thread count
        answers[threads] = [a.text for a in _gen().generate_many(items)]
    assert answers[1] == answers[2]
