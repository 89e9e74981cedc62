"""CMRC 2018 answer metrics and the per-question normaliser choice (hand-computed cases)."""

import math

import pytest

from ablate.components.contract.records import Answer, PackedContext, Passage, Question
from ablate.components.metrics.answer import (
    answer_metrics,
    exact_match,
    lexical_support,
    resolve_normalizer,
    token_f1,
)
from ablate.components.metrics.answer_zh import (
    cmrc_exact_match,
    cmrc_f1,
    longest_common_substring,
    mixed_segmentation,
    remove_punctuation,
    word_tokenize,
)


@pytest.mark.parametrize("text, tokens", [
    ("向量检索的 Recall 怎么提升？", ["向", "量", "检", "索", "的", "recall", "怎", "么", "提", "升"]),
    ("BM25 检索", ["bm25", "检", "索"]),
    ("「因信稱義」。", ["因", "信", "稱", "義"]),
    ("GPT-4o：2024年", ["gpt4o2024", "年"]),       # '-' and '：' removed before splitting words
    ("Paris.", ["paris", "."]),                     # ASCII '.' is not in the script's list
    ("等等…", ["等", "等", "…"]),                   # its list has "……", never one '…'
])
def test_mixed_segmentation_removes_the_scripts_punctuation(text, tokens):
    assert mixed_segmentation(text) == tokens


def test_mixed_segmentation_keeps_punctuation_tokens_when_asked():
    assert mixed_segmentation("台北，台灣", remove_punctuation=False) == ["台", "北", "，", "台", "灣"]


@pytest.mark.parametrize("text, tokens", [
    ("don't stop", ["do", "n't", "stop"]),
    ("1,000.5 km, 3 miles.", ["1,000.5", "km", ",", "3", "miles", "."]),
    ('he said "hi" (twice)', ["he", "said", "``", "hi", "''", "(", "twice", ")"]),
    ("it's 5% off!", ["it", "'s", "5", "%", "off", "!"]),
    ("u.s. army. next one", ["u.s.", "army", ".", "next", "one"]),
    ("wait... cannot", ["wait", "...", "can", "not"]),
])
def test_word_tokenize_follows_nltk(text, tokens):
    assert word_tokenize(text) == tokens


def test_remove_punctuation_and_lcs():
    assert remove_punctuation(" 「台北」， Taipei ") == "台北 taipei"
    assert longest_common_substring(list("abcde"), list("xbcdy")) == 3  # b c d
    assert longest_common_substring(list("ab"), list("ba")) == 1
    assert longest_common_substring([], list("ab")) == 0


def test_the_issue_examples():
    # 知识图谱检索 (6 tokens) vs 知识图谱 (4): LCS 4, P = 4/6, R = 1, F1 = 2PR/(P+R) = 0.8
    assert token_f1("知识图谱检索", ["知识图谱"]) == pytest.approx(0.8)
    assert exact_match("因信稱義", ["因信稱義。"]) == 1.0
    assert token_f1("因信稱義", ["因信稱義。"]) == 1.0


def test_f1_uses_the_longest_common_substring_not_a_bag():
    # same characters, other order: a bag F1 would be 1; the LCS is 2 of 4 -> P = R = 0.5
    assert cmrc_f1("图谱知识", ["知识图谱"]) == pytest.approx(0.5)


def test_traditional_chinese_and_max_over_answers():
    # 中華民國 vs 中華民國政府: LCS 4, P = 1, R = 4/6 -> F1 = 0.8; the second answer is exact
    assert cmrc_f1("中華民國", ["中華民國政府"]) == pytest.approx(0.8)
    assert cmrc_f1("中華民國", ["中華民國政府", "中華民國"]) == 1.0
    assert cmrc_exact_match("中華民國", ["中華民國政府", "中華民國"]) == 1.0


def test_full_width_punctuation_is_ignored():
    assert cmrc_exact_match("（台北）", ["台北"]) == 1.0
    assert cmrc_exact_match("『台北』！", ["台北"]) == 1.0
    assert cmrc_f1("台北：「信義區」", ["台北信義區"]) == 1.0


def test_mixed_chinese_english():
    # tokens [bm25, 检, 索] on both sides: F1 1; EM compares texts, and the space stays
    assert cmrc_f1("BM25 检索", ["bm25检索"]) == 1.0
    assert cmrc_exact_match("BM25 检索", ["bm25检索"]) == 0.0
    assert cmrc_exact_match("BM25 检索", ["bm25 检索"]) == 1.0
    # pred [用, bm25, 检, 索] vs gold [bm25]: LCS 1, P = 1/4, R = 1 -> F1 = 0.4
    assert cmrc_f1("用BM25检索", ["BM25"]) == pytest.approx(0.4)


def test_empty_prediction_scores_zero_f1():
    assert cmrc_f1("", ["台北"]) == 0.0 and cmrc_exact_match("", ["台北"]) == 0.0


def test_auto_picks_cmrc_for_chinese_questions_or_answers():
    assert resolve_normalizer("auto", ["台北", "台北市"]) == "cmrc"
    assert resolve_normalizer("auto", ["Paris", "巴黎"]) == "squad"  # SQuAD has such lists
    assert resolve_normalizer("auto", ["Paris", "巴黎"], "巴黎在哪？") == "cmrc"
    assert resolve_normalizer("auto", ["273.15"], "絕對零度是多少？") == "cmrc"
    assert resolve_normalizer("auto", ["273.15"], "What is absolute zero?") == "squad"
    assert resolve_normalizer("auto", [], "") == "squad"
    assert resolve_normalizer("squad", ["台北"], "台灣的首都？") == "squad"
    with pytest.raises(ValueError, match="known: squad, cmrc, auto"):
        resolve_normalizer("bleu", ["x"])


def test_english_keeps_squad_scoring():
    assert exact_match("Paris.", ["Paris"]) == 1.0  # auto -> squad: punctuation dropped
    assert exact_match("Paris.", ["Paris"], normalizer="cmrc") == 0.0
    # squad: bag of tokens, articles dropped: [10th, century] vs [10th, and, 11th, centuries]
    assert token_f1("the 10th century", ["10th and 11th centuries"]) == pytest.approx(1 / 3)
    # cmrc: [the, 10th, century] vs [10th, and, 11th, centuries]: LCS 1, P = 1/3, R = 1/4
    assert token_f1("the 10th century", ["10th and 11th centuries"], normalizer="cmrc") == \
        pytest.approx(2 / 7)


def test_squad_forced_on_chinese_is_the_old_score():
    assert token_f1("知识图谱检索", ["知识图谱"], normalizer="squad") == 0.0
    assert exact_match("因信稱義", ["因信稱義。"], normalizer="squad") == 0.0


def _ctx(text):
    return PackedContext(chunk_ids=("c",), passages=(Passage("d", 0, len(text), text),),
                         n_tokens=10, budget=64)


def test_answer_metrics_auto_uses_the_question():
    # the question is Chinese, so a number answer is scored by CMRC rules: tokens
    # [1998, 年] vs [1998] -> LCS 1, P = 1/2, R = 1 -> F1 = 2/3 (SQuAD: ['1998年'] -> 0)
    q = Question("q", "哪一年成立？", ("1998",), True)
    m = answer_metrics(q, Answer("1998年", refused=False), None)
    assert m["f1"] == pytest.approx(2 / 3)
    assert answer_metrics(q, Answer("1998年", refused=False), None, normalizer="squad")["f1"] == 0.0


def test_answer_metrics_passes_the_normalizer():
    q = Question("q", "台灣的首都是哪裡？", ("台北市",), True)
    ctx = _ctx("台灣的首都是台北市，位於北部。")
    auto = answer_metrics(q, Answer("台北", refused=False), ctx)
    # [台, 北] vs [台, 北, 市]: LCS 2, P = 1, R = 2/3 -> F1 = 0.8
    assert auto["f1"] == pytest.approx(0.8) and auto["em"] == 0.0 and auto["correct"] == 1.0
    squad = answer_metrics(q, Answer("台北", refused=False), ctx, normalizer="squad")
    assert squad["f1"] == 0.0
    with pytest.raises(ValueError):
        answer_metrics(Question("u", "?", (), False), Answer("", refused=True), ctx,
                       normalizer="bleu")


def test_lexical_support_counts_cjk_characters():
    ctx = _ctx("我们用BM25检索，再用向量检索。")
    assert lexical_support("BM25 检索", ctx) == 1.0  # [bm25, 检, 索] all in the context
    assert lexical_support("知识检索", ctx) == 0.5  # 检, 索 yes; 知, 识 no
    assert lexical_support("检索。", ctx) == 1.0  # the full stop is no token
    assert lexical_support("（BM25，检索）", ctx) == 1.0
    assert math.isnan(lexical_support("。", ctx))
