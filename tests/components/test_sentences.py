"""Sentence spans for English, Chinese and mixed text (exact character offsets)."""

import pytest

from ablate.components.text.sentences import sentence_spans


def _texts(text, **kw):
    return [text[s:e] for s, e in sentence_spans(text, **kw)]


def test_chinese_ends_without_white_space():
    text = "今天下雨了。我們去哪裡？他說：「好！」然後走了；最後回家……真的嗎?對"
    assert _texts(text) == ["今天下雨了。", "我們去哪裡？", "他說：「好！」", "然後走了；",
                            "最後回家……", "真的嗎?", "對"]


def test_full_width_marks_and_closing_brackets():
    text = "（註：見上文。）下一句！！“引號？”完"
    assert _texts(text) == ["（註：見上文。）", "下一句！！", "“引號？”", "完"]


def test_offsets_are_exact_and_trimmed():
    text = "  第一句。 第二句。\n\n Third one. 第四句"
    spans = sentence_spans(text)
    assert spans == [(2, 6), (7, 11), (14, 24), (25, 28)]
    assert [text[s:e] for s, e in spans] == ["第一句。", "第二句。", "Third one.", "第四句"]


def test_mixed_text():
    assert _texts("BM25 很快。It is fast. 對！OK") == ["BM25 很快。", "It is fast.", "對！", "OK"]


def test_latin_rules_unchanged():
    assert sentence_spans("One. Two!  Three?\n\nFour") == [(0, 4), (5, 9), (11, 17), (19, 23)]
    assert _texts("Wait…what… v1.2 is out") == ["Wait…what…", "v1.2 is out"]  # … needs a space
    assert _texts('He said "no." Then left') == ['He said "no."', "Then left"]


@pytest.mark.parametrize("text, want", [
    ("e.g. the cat. The dog", ["e.g. the cat.", "The dog"]),
    ("Line one\nline two", ["Line one", "line two"]),
    ('He said "no." Then left', ['He said "no." Then left']),
    ("中文。English. More", ["中文。", "English.", "More"]),
])
def test_capital_rule(text, want):
    assert _texts(text, latin="capital") == want
