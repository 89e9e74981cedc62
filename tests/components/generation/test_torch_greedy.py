"""The torch backend's greedy loop (components/generation/torch_greedy.py) against what it
replaced: transformers' `model.generate(..., do_sample=False, stop_strings=stop,
tokenizer=tok)` called one prompt at a time, with the kwargs `torch_gguf._kwargs` gave for
greedy decoding before the loop. The generator's cache identity did not change with the
loop, so any difference, a single token, would mix two decoders' answers under one key.

Real SmolLM2-135M-Instruct (the session's one load, torch_gguf.load); English and Chinese
prompts of different lengths (closed-book and with context, so batches are left-padded)
whose answers end each way a row can end (end-of-turn token, the generators' stop text
"\\n\\n", max_new_tokens); the judge's schema-constrained rows as well. The loop runs the
prompts in batches of 2 and of all."""

from __future__ import annotations

import pytest
import torch

from ablate.components.contract.config import PromptConfig
from ablate.components.contract.records import PackedContext, Passage
from ablate.components.generation import torch_gguf
from ablate.components.generation.llama_local import STOP
from ablate.components.generation.prompt import render_prompt
from ablate.components.generation.torch_greedy import StopTexts, greedy
from ablate.components.runtime.models import smollm2_gguf_path
from tests.components.generation.ties import agree

pytestmark = pytest.mark.slow

MAX_NEW = 12
NORMANS = ("The Normans were the people who in the 10th and 11th centuries gave their name to "
           "Normandy, a region in France. They were descended from Norse raiders and pirates "
           "from Denmark, Iceland and Norway.")
ZH = "诺曼人是在10世纪和11世纪将名字赋予法国诺曼底地区的人。他们是来自丹麦、冰岛和挪威的维京海盗的后裔。"
# (question, context), in pairs where the first row ends before the second (it leaves the
# batch while the other goes on); which way each answer ends was seen on this model and is
# asserted below
CASES = [("Write a letter to a friend.", None),                # en, closed book: stop text
         ("In what country is Normandy located?", NORMANS),   # en, 117 tokens: max_new_tokens
         ("写一首诗。", None),                                   # zh, closed book: end of turn
         ("诺曼底位于哪个国家？", ZH * 2),                       # zh, 323 tokens: max_new_tokens
         ("你好", None),                                         # zh, closed book: stop text
         ("What is the capital of France?", None)]              # en, closed book: end of turn


@pytest.fixture(scope="module")
def model_tok():
    """The session's model, decoding on one thread: on this shared 2-core machine two
    threads under another process's load took 3-5 times as long (the thread count never
    changes an answer: test_llama_local.py::test_torch_thread_count_does_not_change_answers)."""
    model, tok, _ = torch_gguf.load(smollm2_gguf_path())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield model, tok
    torch.set_num_threads(threads)


def _prompts(tok) -> list[list[int]]:
    out = []
    for q, text in CASES:
        ctx = None if text is None else PackedContext(
            ("c",), (Passage("d", 0, len(text), text),), n_tokens=0, budget=0)
        system, user = render_prompt(PromptConfig(), q, ctx)
        out.append(torch_gguf._encode(tok, [{"role": "system", "content": system},
                                            {"role": "user", "content": user}]))
    return out


def _old_kwargs(tok, stop: list[str]) -> dict:
    """torch_gguf._kwargs for temperature 0 before the greedy loop (stop texts included)."""
    kwargs = dict(max_new_tokens=MAX_NEW, do_sample=False, eos_token_id=tok.eos_token_id,
                  pad_token_id=tok.eos_token_id, temperature=None, top_k=None, top_p=None)
    if stop:
        kwargs.update(stop_strings=stop, tokenizer=tok)
    return kwargs


def _generate_alone(model, tok, prompts, stop, constraint=None) -> list[list[int]]:
    """Each prompt's new tokens from model.generate(), one prompt at a time."""
    kwargs = _old_kwargs(tok, stop)
    with torch.inference_mode():
        return [torch_gguf._generate(model, [p], tok.eos_token_id, kwargs,
                                     None if constraint is None else (lambda _, i=i: constraint(i)),
                                     [0])[0]
                for i, p in enumerate(prompts)]


def _loop(model, tok, prompts, stop, size, constraint=None) -> list[list[int]]:
    """Each prompt's new tokens from the loop, `size` prompts a batch, in the given order."""
    texts = StopTexts(tok, stop)
    out: list[list[int]] = []
    with torch.inference_mode():
        for lo in range(0, len(prompts), size):
            idx = range(lo, min(lo + size, len(prompts)))
            rows = None if constraint is None else [constraint(i) for i in idx]
            out += greedy(model, [prompts[i] for i in idx], tok.eos_token_id, MAX_NEW, texts, rows)
    return out


def _agree(model, prompts, got, want) -> None:
    """The loop's tokens `got` are generate()'s `want`: each row identical, or first
    differing at a near-tie of the float32 logits (tests/components/generation/ties.py;
    on this machine no row differs)."""
    agree(model, prompts, got, want)


def _ending(tok, new: list[int]) -> str:
    if new[-1] == tok.eos_token_id:
        return "eos"
    return "max" if len(new) == MAX_NEW else "stop"


def test_the_loop_gives_generates_tokens_one_prompt_at_a_time(model_tok):
    model, tok = model_tok
    prompts = _prompts(tok)
    assert len({len(p) for p in prompts}) == 5  # 50 to 323 tokens: padded batches
    alone = _generate_alone(model, tok, prompts, STOP)
    endings = [_ending(tok, g) for g in alone]
    # every way to end (on this machine: stop, max, eos, max, stop, eos; a model change
    # that loses one fails here first)
    assert set(endings) == {"stop", "max", "eos"}, endings
    # pairs: in each, the first row leaves the batch and the second goes on
    _agree(model, prompts, _loop(model, tok, prompts, STOP, 2), alone)
    # all in one batch, shortest first as chat_many orders them: the rows that end first
    # sit before those that go on, so the rows left are renumbered
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), i))
    ordered = [prompts[i] for i in order]
    _agree(model, ordered, _loop(model, tok, ordered, STOP, len(prompts)),
           [alone[i] for i in order])


def test_the_judges_constrained_rows_are_generates_too(model_tok):
    """The judge's path: no stop text, a JSON-schema mask per row (SchemaMask), against
    generate() with the mask as a logits processor (torch_gguf._RowMasks), one at a time."""
    from ablate.components.judge.json_mask import SchemaMask
    from ablate.components.judge.prompts import load_prompts
    from ablate.components.judge.tasks import Ask, request_of
    model, tok = model_tok
    ctx = ("[1] The Normans were the people who in the 10th and 11th centuries gave their "
           "name to Normandy, a region in France.")
    asks = [Ask("support", "en", {"question": "Where is Normandy?",
                                  "statement": "Normandy is in France.", "context": ctx}),
            Ask("claims", "en", {"question": "Where is Normandy?", "answer": "Normandy is in France"}),
            Ask("relevance", "zh", {"question": "诺曼底在哪里？", "answer": "法国"})]
    requests = [request_of(load_prompts(), a, 2, MAX_NEW) for a in asks]
    prompts = [torch_gguf._encode(tok, [{"role": r, "content": t} for r, t in q.messages])
               for q in requests]
    path = smollm2_gguf_path()

    def constraint(i: int) -> SchemaMask:
        return SchemaMask(path, requests[i].schema, tok.eos_token_id)

    alone = _generate_alone(model, tok, prompts, [], constraint)
    # whole objects and a truncated one (144, 151, 212 prompt tokens): the middle row goes on
    assert set(_ending(tok, g) for g in alone) == {"eos", "max"}  # on this machine: eos, max, eos
    _agree(model, prompts, _loop(model, tok, prompts, [], len(prompts), constraint), alone)


def test_stop_texts_end_a_row_where_transformers_does(model_tok):
    """StopTexts against transformers' StopStringCriteria (what generate() ran) at every
    step of token sequences built around the stop texts: a stop text across the prompt's
    end, a prompt ending with a whole one, a stop text inside one token, across two tokens,
    with text after it in the last token, twice in a row, in Chinese. Both must say "go
    on" at every step before the first stop and "stop" at the same step. (The prompts
    above never put a stop text across the prompt's end: this test is what sees an
    off-by-one in the overlap rule.)"""
    from transformers.generation.stopping_criteria import StopStringCriteria
    _, tok = model_tok
    texts = ["\n", "\nHello", "\n\nHello", " \n\n", "Answer:\n", "Answer:\n\n",
             "Dear friend,\n\nHello", "a\nb\n\nc", "x\n \n\ny", "你好！\n\n再见", "。好",
             "line\n\n\n\nmore", "one\ntwo\nthree\n", "The end.\n\nThe", "nd of it",
             "诺曼底\n\n法国", "no stop here at all, only words"]
    for stop in (["\n\n"], ["\n\n", "。"], ["end", "\n\n"]):
        criteria = StopStringCriteria(tok, stop)
        check = StopTexts(tok, stop)
        # prompts ending with the start of a stop text, and with a whole one (not counted:
        # the prompt's own stop text never ends a row)
        for prompt_text in ("<|im_start|>assistant\n", "Q: where?\n", "问：", "Context:\n\n",
                            "诺曼底。", "The e", "the end"):
            prompt = tok.encode(prompt_text, add_special_tokens=False)
            for text in texts:
                new = tok.encode(text, add_special_tokens=False)
                for n in range(1, len(new) + 1):
                    ids = torch.tensor([prompt + new[:n]])
                    theirs = bool(criteria(ids, None)[0])
                    assert check.ended(prompt, new[:n]) == theirs, (stop, prompt_text, text, n)
                    if theirs:
                        break
