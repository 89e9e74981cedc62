"""Chinese analyzers (zh, cjk_bigram), analyzer options, and the per-corpus choice (auto)."""

from __future__ import annotations

import threading

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.analyzers_zh import choose_analyzer, read_user_dict

MIXED = "向量检索的 recall 怎么提升"


def test_default_keeps_whole_chinese_runs():
    # the reason for the Chinese analyzers: one term per run of Chinese characters
    assert get_analyzer("default")(MIXED) == ["向量检索的", "recall", "怎么提升"]


def test_zh_segments_words_and_keeps_latin_words():
    assert get_analyzer("zh")(MIXED) == ["向量", "检索", "的", "recall", "怎么", "提升"]


def test_zh_search_mode_adds_sub_words_of_long_words():
    assert get_analyzer("zh")("中华人民共和国成立了") == \
        ["中华", "华人", "人民", "共和", "共和国", "中华人民共和国", "成立", "了"]


def test_zh_folds_full_width_and_drops_punctuation():
    assert get_analyzer("zh")("ＢＭ２５，检索。Recall@5 是 3.14！") == \
        ["bm25", "检索", "recall", "5", "是", "3", "14"]


def test_zh_user_dict_keeps_a_term_whole(tmp_path):
    text = "知识图谱检索"
    assert "知识图谱" not in get_analyzer("zh")(text)
    d = tmp_path / "user.dict"
    d.write_text("知识图谱 5 n\n\nRAG系统\n", encoding="utf-8")
    with_dict = get_analyzer("zh", {"user_dict": str(d)})
    assert "知识图谱" in with_dict(text) and "检索" in with_dict(text)
    assert "rag系统" in with_dict("用RAG系统")  # dictionary words are folded like the text
    assert get_analyzer("zh") is not with_dict
    assert get_analyzer("zh", {"user_dict": str(d)}) is with_dict


def test_zh_init_is_quiet_and_thread_safe(tmp_path, capfd):
    d = tmp_path / "quiet.dict"
    d.write_text("知识图谱\n", encoding="utf-8")
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(get_analyzer("zh", {"user_dict": str(d)})))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(a is got[0] for a in got)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("content, line, what", [
    ("知识图谱 5 n\n知识 x1\n", 2, "x1"),
    ("a 1 n extra\n", 1, "extra"),
    ("ok\n。 3\n", 2, "。"),
    ("word ²\n", 1, "²"),  # a digit, but no decimal number
])
def test_bad_user_dict_line_names_file_line_and_field(tmp_path, content, line, what):
    d = tmp_path / "bad.dict"
    d.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_user_dict(str(d))
    assert (e.value.path, e.value.line, e.value.field) == \
        (str(d), line, "retrieval.analyzer_options.user_dict")
    assert what in e.value.message


def test_unreadable_user_dict(tmp_path):
    with pytest.raises(InputError) as e:
        get_analyzer("zh", {"user_dict": str(tmp_path / "missing.dict")})
    assert e.value.field == "retrieval.analyzer_options.user_dict"
    bad = tmp_path / "latin1.dict"
    bad.write_bytes("ok\n".encode() + "caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError) as e:
        read_user_dict(str(bad))
    assert e.value.line == 2 and "UTF-8" in e.value.message


def test_read_user_dict_fields(tmp_path):
    d = tmp_path / "u.dict"
    d.write_text("云计算 5\n创新办 3 i\n凱特琳 nz\nＡＩ芯片\n", encoding="utf-8")
    assert read_user_dict(str(d)) == [("云计算", 5, None), ("创新办", 3, "i"),
                                      ("凱特琳", None, "nz"), ("ai芯片", None, None)]


def test_options_are_checked_against_the_factory():
    with pytest.raises(InputError) as e:
        get_analyzer("default", {"user_dict": "x"})
    assert e.value.field == "retrieval.analyzer_options" and "user_dict" in e.value.message
    with pytest.raises(InputError, match="accepted: user_dict"):
        get_analyzer("zh", {"userdict": "x"})


@pytest.mark.parametrize("text, terms", [
    ("向量检索的recall怎么提升？", ["向量", "量检", "检索", "索的", "recall", "怎么", "么提", "提升"]),
    ("A是B", ["a", "是", "b"]),                              # a one-character run stays whole
    ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),           # kana count as CJK
    ("한국어 검색", ["한국", "국어", "검색"]),                   # so does Hangul
    ("ＢＭ２５，检索「㐀㐁」", ["bm25", "检索", "㐀㐁"]),         # full width folded; Ext A is Han
])
def test_cjk_bigram(text, terms):
    assert get_analyzer("cjk_bigram")(text) == terms


def test_auto_must_be_resolved_first():
    with pytest.raises(InputError, match="choose_analyzer") as e:
        get_analyzer("auto")
    assert e.value.field == "retrieval.analyzer"


def test_choose_analyzer():
    name, reason = choose_analyzer(["台北是台灣的首都。", "Taipei 101 很高大"])
    # letters (digits and punctuation are none): 8 Han + 6 Latin + 3 Han = 17; 11/17 -> 65%
    assert name == "zh" and "65%" in reason and "2 texts" in reason
    name, reason = choose_analyzer(["Paris is the capital of France.", "巴黎"])
    assert name == "default" and "7%" in reason  # 2 of 25 + 2 = 27 letters
    assert choose_analyzer(["東京タワーはとても高いです"])[0] == "cjk_bigram"
    assert choose_analyzer(["123 456", ""])[0] == "default"
    assert choose_analyzer([]) == ("default", "no letters in a sample of 0 texts")


def test_choose_analyzer_samples_deterministically():
    texts = ["中文文本"] * 300 + ["English text"] * 300
    assert choose_analyzer(texts) == choose_analyzer(list(texts))
    assert "200 texts" in choose_analyzer(texts)[1]
