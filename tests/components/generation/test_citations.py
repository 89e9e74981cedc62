"""Citations of context passages (issue 29, item 5): the `prompt.cite` option, the
deterministic parser of [n] / 【n】 / ［n］ markers, answers scored without the markers, the
extractive generator citing the passage it copied from, and the generation cache keeping
the passage numbers."""

import json

import httpx
import pytest

from ablate.components.contract.config import GeneratorConfig, PipelineConfig, PromptConfig
from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.generation import make_generator
from ablate.components.generation.cache import GenerationCache
from ablate.components.generation.citations import cited_reply, parse_citations, strip_citations
from ablate.components.generation.extractive import extract_answer
from ablate.components.generation.openai_http import OpenAIGenerator
from ablate.components.generation.prompt import CITE_EN, CITE_ZH, render_prompt
from ablate.components.metrics.answer import answer_metrics
from ablate.components.pipeline import STAGES, read_values, resolve

# ---- parsing -------------------------------------------------------------------------


@pytest.mark.parametrize("text, cited", [
    ("Paris [1]", (1,)),
    ("[2] Paris", (2,)),
    ("Paris [2][1] and Lyon [2]", (2, 1)),           # order of first appearance, once each
    ("Paris [1, 3]", (1, 3)),
    ("Paris [1; 3]", (1, 3)),
    ("Paris [2-4]", (2, 3, 4)),
    ("Paris [Passage 2]", (2,)),
    ("Paris [passages 1 and 3]", (1, 3)),
    ("巴黎【1】", (1,)),
    ("巴黎［2］", (2,)),
    ("巴黎【１】【３】", (1, 3)),                     # full-width digits too
    ("巴黎[1，2]", (1, 2)),
    ("巴黎【1、2】", (1, 2)),
    ("巴黎［段落3］", (3,)),
    ("Paris [7]", (7,)),                               # out of range: kept, judged by the metric
    ("Paris [0]", (0,)),
    ("巴黎［１－３］", (1, 2, 3)),                     # a full-width hyphen
    ("巴黎【1至3】", (1, 2, 3)),
    ("巴黎【第2段】", (2,)),
    ("Paris [1]\n[12345678901234567890]", (1,)),     # not a passage number: not a marker
])
def test_parse_citations(text, cited):
    assert parse_citations(text) == cited


@pytest.mark.parametrize("text", ["", "Paris", "in 1995", "Paris [a]", "(1) Paris",
                                  "[1995 census]", "Paris [1", "the ISBN [9780306406157]"])
def test_no_citation(text):
    assert parse_citations(text) == ()


@pytest.mark.parametrize("text, clean", [
    ("Paris [1]", "Paris"),
    ("Paris [1].", "Paris."),
    ("[1] Paris", "Paris"),
    ("Paris [1][2] and Lyon [3]", "Paris and Lyon"),
    ("巴黎【1】", "巴黎"),
    ("巴黎［2］。", "巴黎。"),
    ("in 1995", "in 1995"),
    ("Paris (see [1])", "Paris"),                      # a wrapper of markers only goes too
    ("Paris (source: [1])", "Paris"),
    ("Paris. Sources: [1]", "Paris."),
    ("巴黎（来源：[1]）", "巴黎"),
    ("The ISBN is [9780306406157] [1]", "The ISBN is [9780306406157]"),
])
def test_strip_citations(text, clean):
    assert strip_citations(text) == clean


def test_cited_reply_reads_markers_of_the_whole_reply_and_answers_its_first_line():
    assert cited_reply("Answer: Paris [1]\nSee also [3].") == ("Paris", (1, 3))
    assert cited_reply("[2]\nParis") == ("Paris", (2,))
    assert cited_reply("答案：巴黎【2】") == ("巴黎", (2,))
    assert cited_reply("Paris") == ("Paris", ())


# ---- the prompt option ---------------------------------------------------------------

def _ctx(*texts):
    return PackedContext(chunk_ids=tuple(f"d{i}:0-{len(t)}" for i, t in enumerate(texts)),
                         passages=tuple(Passage(f"d{i}", 0, len(t), t) for i, t in enumerate(texts)),
                         n_tokens=10, budget=100)


def test_cite_adds_an_instruction_to_the_system_message():
    plain = render_prompt(PromptConfig(), "Who?", _ctx("a", "b"))
    system, user = render_prompt(PromptConfig(cite=True), "Who?", _ctx("a", "b"))
    assert system == plain[0] + " " + CITE_EN and user == plain[1]
    assert "[1]" in CITE_EN and "square brackets" in CITE_EN


def test_cite_in_chinese_and_not_for_closed_book():
    system, _ = render_prompt(PromptConfig(cite=True), "诺曼底在哪里？", _ctx("a"))
    assert system.endswith(CITE_ZH) and "编号" in CITE_ZH
    closed = render_prompt(PromptConfig(cite=True), "Who?", None)
    assert closed == render_prompt(PromptConfig(), "Who?", None)  # nothing to cite


def test_cite_is_part_of_the_generate_stage_key():
    generate = next(s for s in STAGES if s.name == "generate")
    for name in ("extractive", "smollm2", "openai"):
        cfgs = [PipelineConfig(generator=GeneratorConfig(name=name), prompt=PromptConfig(cite=c))
                for c in (False, True)]
        reads = [read_values(c, resolve(c, generate.select(c, None)).reads) for c in cfgs]
        assert reads[0] != reads[1], name


# ---- model generators: parsed, and scored without the markers -------------------------

def _openai(monkeypatch, reply, cite=True):
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    cfg = GeneratorConfig(name="openai", base_url="http://llm.test/v1", model="m",
                          api_key_env="TEST_LLM_KEY")
    handler = lambda request: httpx.Response(200, json={  # noqa: E731
        "choices": [{"message": {"role": "assistant", "content": reply}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
    return OpenAIGenerator(cfg, PromptConfig(cite=cite), transport=httpx.MockTransport(handler))


def _q(text="What is the capital of France?", answers=("Paris",)):
    return Question("q", text, answers, True)


def test_an_answer_with_a_marker_scores_without_it(monkeypatch):
    (a,) = _openai(monkeypatch, "Paris [1]").generate_many([(_q(), _ctx("Paris is big."))])
    assert a.text == "Paris" and a.citations == (1,) and not a.refused
    scores = answer_metrics(_q(), a, _ctx("Paris is big."))
    assert scores["em"] == 1.0 and scores["f1"] == 1.0


def test_chinese_full_width_markers(monkeypatch):
    q = _q("法国的首都是哪里？", ("巴黎",))
    (a,) = _openai(monkeypatch, "巴黎【2】").generate_many([(q, _ctx("x", "巴黎"))])
    assert a.text == "巴黎" and a.citations == (2,)
    assert answer_metrics(q, a, _ctx("x", "巴黎"))["em"] == 1.0


def test_a_refusal_with_a_marker_is_a_refusal(monkeypatch):
    (a,) = _openai(monkeypatch, "I don't know. [1]").generate_many([(_q(), _ctx("x"))])
    assert a.refused and a.text == "I don't know."


def test_no_marker_is_a_citing_answer_that_cites_nothing(monkeypatch):
    (a,) = _openai(monkeypatch, "Paris").generate_many([(_q(), _ctx("x"))])
    assert a.citations == ()


def test_without_the_option_nothing_is_parsed(monkeypatch):
    (a,) = _openai(monkeypatch, "Paris [1]", cite=False).generate_many([(_q(), _ctx("x"))])
    assert a.citations is None and a.text == "Paris [1]"  # as before: no citing generator


# ---- the extractive generator --------------------------------------------------------

OTHER = "Berlin is the capital of Germany. It has many museums."
NORMANS = ("The Normans were the people who in the 10th and 11th centuries gave their name to "
           "Normandy, a region in France.")


@pytest.mark.parametrize("cite", [False, True])
def test_extractive_cites_the_passage_it_copied_from(cite):
    ctx = _ctx(OTHER, NORMANS)
    gen = make_generator(GeneratorConfig(name="extractive"), PromptConfig(cite=cite))
    q = Question("q", "In what country is Normandy located?", ("France",), True)
    (a,) = gen.generate_many([(q, ctx)])
    assert a.citations == (2,) and not a.refused
    assert a.text == extract_answer(q.question, ctx, 0.3)[0]  # the answer text is unchanged
    assert a.text in NORMANS


def test_extractive_refusal_cites_nothing():
    gen = make_generator(GeneratorConfig(name="extractive"), PromptConfig())
    (a,) = gen.generate_many([(Question("q", "What is the capital of Mars?", ("x",), True),
                               _ctx(NORMANS))])
    assert a.refused and a.citations == ()


def test_extractive_identity_moved_on():
    """Answers cached before citations existed are not served (they carry none)."""
    gen = make_generator(GeneratorConfig(name="extractive"), PromptConfig())
    assert not gen.cache_identity.startswith("extractive/v2/")


# ---- the generation cache ------------------------------------------------------------

def test_cache_keeps_citations_and_old_entries_have_none(tmp_path):
    c = GenerationCache(tmp_path)
    c.put("ab" * 32, Answer("Paris", refused=False, citations=(2, 1)))
    assert c.get("ab" * 32).citations == (2, 1)
    c.put("cd" * 32, Answer("Paris", refused=False, citations=()))
    assert c.get("cd" * 32).citations == ()
    c.put("ef" * 32, Answer("Paris", refused=False))
    assert c.get("ef" * 32).citations is None
    old = tmp_path / "12" / f"{'12' * 32}.json"  # written before the field existed
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(json.dumps({"text": "Paris", "refused": False, "tokens_in": 1,
                               "tokens_out": 1, "latency_s": 0.1, "cached": False,
                               "error": None}))
    got = c.get("12" * 32)
    assert got is not None and got.citations is None and got.text == "Paris"


def test_cache_entry_with_malformed_citations_is_a_miss(tmp_path):
    c = GenerationCache(tmp_path)
    bad = tmp_path / "34" / f"{'34' * 32}.json"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text(json.dumps({"text": "Paris", "refused": False, "citations": ["x"]}))
    assert c.get("34" * 32) is None
