"""Batched generation on the torch backend (generator.batch_size): the answers are those
of one question at a time, token for token, whatever shares a batch, so the batch size is
a setting outside the stage key. Real SmolLM2-135M-Instruct; a few questions, English and
Chinese, of different prompt lengths (so batches are padded). Token for token means: a row
may differ only from a near-tie of the float32 logits on (tests/components/generation/
ties.py), which the machine's summation order decides; on this machine none does."""

import pytest

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import PackedContext, Passage
from ablate.components.generation import llama_local, make_generator, torch_gguf
from ablate.components.generation.base import GENERATORS
from tests.components.generation.ties import agree

pytestmark = pytest.mark.slow

QUESTIONS = ["In what country is Normandy located?", "诺曼人的祖先来自哪些国家？",
             "When were the Normans in Normandy?", "Who gave their name to Normandy?",
             "诺曼底位于哪个国家？", "From which countries did the Norse come?"]
ZH = "诺曼人是在10世纪和11世纪将名字赋予法国诺曼底地区的人。他们是来自丹麦、冰岛和挪威的维京海盗的后裔。"


def _gen(name="smollm2", **kw):
    return make_generator(GeneratorConfig(name=name, max_new_tokens=12, **kw), PromptConfig())


def _items(normans_ctx, question):
    zh = PackedContext(("z1",), (Passage("d2", 0, len(ZH), ZH),), n_tokens=60, budget=512)
    return [(question(str(i), q), None if i == 3 else zh if "诺" in q else normans_ctx)
            for i, q in enumerate(QUESTIONS)]


def _tokens(answers):
    return [(a.text, a.tokens_in, a.tokens_out, a.refused) for a in answers]


@pytest.fixture
def decoded(monkeypatch):
    """{prompt token ids: new token ids} of every greedy row decoded while the test runs
    (torch_gguf._decode looks torch_greedy.greedy up at each call)."""
    from ablate.components.generation import torch_greedy
    seen: dict[tuple[int, ...], list[int]] = {}
    real = torch_greedy.greedy

    def spy(model, prompts, *a, **kw):
        out = real(model, prompts, *a, **kw)
        seen.update({tuple(p): list(g) for p, g in zip(prompts, out, strict=True)})
        return out
    monkeypatch.setattr(torch_greedy, "greedy", spy)
    return seen


def _same_answers(got, want, ids_got, ids_want) -> None:
    """Every row's token ids are the one-at-a-time row's, or differ from a near-tie on
    (ties.agree); with no row differing (on this machine, none does), the stored answers
    (text, token counts) are equal too."""
    from ablate.components.runtime.models import smollm2_gguf_path
    model = torch_gguf.load(smollm2_gguf_path())[0]
    assert ids_got.keys() == ids_want.keys()
    prompts = sorted(ids_want)
    differ = agree(model, [list(p) for p in prompts], [ids_got[p] for p in prompts],
                   [ids_want[p] for p in prompts])
    if not differ:
        assert got == want


def test_batched_answers_are_the_one_at_a_time_answers(normans_ctx, question, decoded):
    items = _items(normans_ctx, question)
    alone = _tokens(_gen(batch_size=1).generate_many(items))
    ids_alone = dict(decoded)
    assert len(ids_alone) == len(items)
    assert len({n_in for _, n_in, _, _ in alone}) > 3  # prompts of different lengths: padded
    for size in (2, 6):
        decoded.clear()
        _same_answers(_tokens(_gen(batch_size=size).generate_many(items)), alone, dict(decoded),
                      ids_alone)
    # another composition of the batches: a subset, in another order
    sub = [items[5], items[1], items[0]]
    decoded.clear()
    got = _tokens(_gen(batch_size=3).generate_many(sub))
    _same_answers(got, [alone[5], alone[1], alone[0]], dict(decoded),
                  {p: ids_alone[p] for p in decoded})


def test_sampled_answers_keep_their_seed_whatever_the_batch_size(normans_ctx, question):
    items = _items(normans_ctx, question)[:3]
    one = _tokens(_gen(batch_size=1, temperature=0.8, seed=3).generate_many(items))
    assert _tokens(_gen(batch_size=4, temperature=0.8, seed=3).generate_many(items)) == one


def test_batch_size_is_a_setting_not_a_key():
    assert _gen(batch_size=1).cache_identity == _gen(batch_size=16).cache_identity
    for name in ("smollm2", "closed_book"):
        decl = GENERATORS.declaration(name)
        assert "generator.batch_size" in decl.settings
        assert "generator.batch_size" not in decl.reads


def test_decoding_stops_between_batches(normans_ctx, question):
    """A stop request raised from the progress callback ends the stage after the batch in
    hand (the rest is never decoded)."""
    from ablate.components.runtime.models import smollm2_gguf_path
    seen = []

    def done(batch, replies):
        assert len(replies) == len(batch) and all(isinstance(r[0], str) for r in replies)
        seen.append(list(batch))
        raise KeyboardInterrupt

    messages = [[{"role": "user", "content": q}] for q in QUESTIONS]
    with pytest.raises(KeyboardInterrupt):
        torch_gguf.chat_many(smollm2_gguf_path(), messages, 4, 0.0, 0, ["\n\n"], 4096, 2, done)
    assert len(seen) == 1 and len(seen[0]) == 2


def test_a_prompt_too_long_stops_before_decoding(normans_ctx, question, monkeypatch):
    monkeypatch.setattr(llama_local, "N_CTX", 100)
    items = [(question("short", "Normandy?"), None), (question("long", QUESTIONS[0]), normans_ctx)]
    with pytest.raises(InputError, match="question long does not fit"):
        _gen(batch_size=2).generate_many(items)


def test_progress_lines_name_the_generator_and_its_backend():
    assert _gen(backend="torch").progress_label == "generate smollm2 (torch)"
    assert _gen("closed_book", backend="llama_cpp").progress_label == "generate closed_book (llama_cpp)"
    assert make_generator(GeneratorConfig(), PromptConfig()).progress_label == "generate extractive"


def test_threads_follow_the_idle_cores(monkeypatch):
    """All cores on a quiet machine, one when other processes keep the cores busy (its own
    running threads are not counted as others); ABLATE_TORCH_THREADS overrides."""
    monkeypatch.delenv("ABLATE_TORCH_THREADS", raising=False)
    assert torch_gguf.decode_threads(None, cores=2, load=0.1, running=2) == 2
    assert torch_gguf.decode_threads(None, cores=2, load=2.1, running=2) == 2  # itself only
    assert torch_gguf.decode_threads(None, cores=2, load=3.2, running=2) == 1  # one other process
    assert torch_gguf.decode_threads(None, cores=2, load=17.0, running=1) == 1
    assert torch_gguf.decode_threads(None, cores=8, load=5.0, running=1) == 4
    assert torch_gguf.decode_threads(1, cores=2, load=0.1, running=1) == 1  # torch's setting caps
    monkeypatch.setenv("ABLATE_TORCH_THREADS", "3")
    assert torch_gguf.decode_threads(None, cores=2, load=17.0, running=1) == 3
