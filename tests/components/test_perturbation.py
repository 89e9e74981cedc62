"""Query perturbations: deterministic, hand-checked on English, Chinese and mixed text."""

from __future__ import annotations

import pytest

from ablate.components.text.perturbation import NAMES, perturb


def _swapped_once(a: str, b: str) -> bool:
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return len(a) == len(b) and len(diff) == 2 and diff[1] == diff[0] + 1 and \
        a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", ["When did Beyonce start becoming popular?",
                                  "向量检索的 recall 怎么提升", "因信稱義是什麼意思？"])
def test_deterministic(name, text):
    assert perturb(name, text, "q1") == perturb(name, text, "q1")


def test_typo_swaps_two_adjacent_letters_of_one_word():
    text = "When did Beyonce start becoming popular?"
    out = perturb("typo", text, "q1")
    assert out != text and _swapped_once(text, out)
    outs = {perturb("typo", text, f"q{i}") for i in range(20)}
    assert len(outs) > 3  # the position depends on the seed


def test_typo_in_chinese_swaps_adjacent_characters():
    text = "知识图谱"
    out = perturb("typo", text, "q7")
    assert _swapped_once(text, out) and sorted(out) == sorted(text)


def test_typo_without_a_long_word_changes_nothing():
    assert perturb("typo", "Is it ok?", "q1") == "Is it ok?"


def test_casing():
    assert perturb("casing", "Who founded IBM?", "q") == "who founded ibm?"
    assert perturb("casing", "bm25 检索", "q") == "BM25 检索"


def test_stopword_drops_one_function_word():
    out = perturb("stopword", "What is the capital of France?", "q3")
    words = "What is the capital of France?".split()
    assert len(out.split()) == len(words) - 1
    assert perturb("stopword", "向量检索的效果", "q") == "向量检索效果"


def test_punctuation():
    assert perturb("punctuation", "Who is it? (really)", "q") == "Who is it really"
    assert perturb("punctuation", "因信稱義是什麼意思？", "q") == "因信稱義是什麼意思"
    assert perturb("punctuation", "who is it", "q") == "who is it?"
    assert perturb("punctuation", "向量检索", "q") == "向量检索？"


def test_script_converts_traditional_and_simplified():
    assert perturb("script", "因信稱義是什麼意思", "q") == "因信称义是什么意思"
    assert perturb("script", "向量检索的 recall 怎么提升", "q") == "向量檢索的 recall 怎麼提升"


def test_fullwidth_forms():
    assert perturb("fullwidth", "BM25 检索?", "q") == "ＢＭ２５\u3000检索？"
