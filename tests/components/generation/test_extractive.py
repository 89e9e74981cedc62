"""The extractive baseline on hand-made contexts."""

from ablate.components.contract.config import GeneratorConfig, PromptConfig
from ablate.components.contract.records import PackedContext, Passage
from ablate.components.generation import make_generator
from ablate.components.generation.extractive import extract_answer


def _gen(threshold=0.3):
    return make_generator(GeneratorConfig(name="extractive", threshold=threshold), PromptConfig())


def test_answers_with_a_span_copied_from_the_context(normans_ctx, question):
    (a,) = _gen().generate_many([(question("q", "In what country is Normandy located?"),
                                  normans_ctx)])
    assert not a.refused and a.text in normans_ctx.passages[0].text
    assert "France" in a.text
    assert a.tokens_in > 40 and a.tokens_out >= 1


def test_numeric_question_gets_the_number_span_to_the_end_of_its_clause(normans_ctx):
    span, support = extract_answer("When were the Normans in Normandy?", normans_ctx, 0.3)
    assert span == "10th and 11th centuries gave their name to Normandy" and support > 0.3


def test_refuses_without_support(normans_ctx, question):
    (a,) = _gen().generate_many([(question("q", "What is the capital of Mars?"), normans_ctx)])
    assert a.refused and a.text == "I don't know."


def test_threshold_controls_refusal(normans_ctx):
    q = "Who was the Norse leader?"  # 'norse' is supported, 'leader' is not
    span, support = extract_answer(q, normans_ctx, 0.0)
    assert span is not None and 0 < support < 1
    assert extract_answer(q, normans_ctx, min(1.0, support + 0.01))[0] is None


def test_prefers_the_better_supported_sentence_in_later_passage():
    ctx = PackedContext(chunk_ids=("a", "b"), passages=(
        Passage("d1", 0, 30, "Cats sleep a lot. Dogs bark at night."),
        Passage("d2", 0, 60, "The Eiffel Tower was completed in 1889 in Paris."),
    ), n_tokens=20, budget=100)
    span, _ = extract_answer("When was the Eiffel Tower completed?", ctx, 0.3)
    assert span == "1889 in Paris"


def test_no_context_or_no_content_words_refuses(normans_ctx):
    assert extract_answer("Where is Normandy?", None, 0.0)[0] is None
    assert extract_answer("Who is it?", normans_ctx, 0.0)[0] is None


def test_identity_tracks_threshold_and_output_is_deterministic(normans_ctx, question):
    assert _gen(0.3).cache_identity != _gen(0.4).cache_identity
    items = [(question(str(i), t), normans_ctx) for i, t in enumerate(
        ["Where is Normandy?", "Who raided?", "When were the Normans in Normandy?"])]
    assert [a.text for a in _gen().generate_many(items)] == \
        [a.text for a in _gen().generate_many(items)]


def _zh_ctx(*texts):
    return PackedContext(chunk_ids=tuple(f"c{i}" for i in range(len(texts))),
                         passages=tuple(Passage(f"d{i}", 0, len(t), t) for i, t in enumerate(texts)),
                         n_tokens=40, budget=100)


def test_chinese_answer_is_a_span_of_the_best_sentence():
    # sentences end at 。 without a space; the second one holds 日 本 首 都, the answer the
    # characters that are not question terms
    ctx = _zh_ctx("台灣的首都是台北。日本的首都是東京。")
    span, support = extract_answer("日本的首都是哪裡？", ctx, 0.3)
    assert span == "東京" and support > 0.5


def test_mixed_chinese_english_span_trims_function_characters():
    ctx = _zh_ctx("混合检索结合 BM25 与向量。BM25 的参数是 k1 和 b。")
    span, _ = extract_answer("BM25 的参数有哪些？", ctx, 0.3)
    assert span == "k1 和 b"  # 是 at the start trimmed like an English stop word


def test_chinese_candidate_spans_stop_at_chinese_punctuation():
    ctx = _zh_ctx("《紅樓夢》的作者是曹雪芹，成書於清代。")
    span, _ = extract_answer("紅樓夢的作者是誰？", ctx, 0.3)
    assert span == "曹雪芹"


def test_chinese_question_without_support_is_refused(question):
    ctx = _zh_ctx("台灣的首都是台北。日本的首都是東京。")
    (a,) = _gen().generate_many([(question("q", "火星上有生命嗎？"), ctx)])
    assert a.refused


def _ctx(*texts):
    return PackedContext(chunk_ids=tuple(f"c{i}" for i in range(len(texts))),
                         passages=tuple(Passage(f"d{i}", 0, len(t), t) for i, t in enumerate(texts)),
                         n_tokens=40, budget=100)


def test_never_a_fragment_of_tokenised_text():
    # the old spans: 's', 'O', '0' (a clitic, a lone letter, a lone digit)
    assert extract_answer("What did Denver's coach say?",
                          _ctx("Denver 's coach said the season is over ."), 0.0)[0] == \
        "Denver 's coach said the season is over"
    assert extract_answer("What blood type is rare?", _ctx("Blood type O is rare in Denver ."),
                          0.0)[0] == "O is rare in Denver"
    assert extract_answer("How many goals did Denver score?",
                          _ctx("Denver scored 0 goals in the final ."), 0.0)[0] == "0 goals in the final"


def test_a_number_with_thousands_separators_is_one_answer():
    span, _ = extract_answer("類固醇試驗讓世界摔角聯盟多花了多少錢?",
                             _ctx("類固醇試驗耗費世界摔角聯盟估計有5,000,000美元。"), 0.0)
    assert span.endswith("5,000,000美元")


def test_chinese_answer_is_whole_words_never_one_character():
    # the old answers: 二 (of 第二大邦), 粳 (of 粳稻)
    span, _ = extract_answer("德國的第一大邦為？", _zh_ctx("巴伐利亞是德國的第一大邦，北萊茵是第二大邦。"), 0.0)
    assert span == "第二大邦"
    span, _ = extract_answer("栽培稻的品種中哪一個是第一批？", _zh_ctx("栽培稻的品種中，粳稻是第一批被馴化的。"), 0.0)
    assert span.startswith("粳稻")


def test_is_whole():
    from ablate.components.generation.whole_span import is_whole
    assert not any(map(is_whole, ["s", "n't", "ve", "O", "0", "'s", "二", "it 's"]))
    assert all(map(is_whole, ["1066", "UK", "粳稻", "Gary Kubiak"]))


def test_the_answer_records_its_support_as_its_score(normans_ctx, question):
    q = question("q", "When were the Normans in Normandy?")
    (a,) = _gen().generate_many([(q, normans_ctx)])
    assert a.score == extract_answer(q.question, normans_ctx, 0.3)[1] > 0.3
    (r,) = _gen().generate_many([(question("r", "What is the capital of Mars?"), normans_ctx)])
    assert r.refused and r.score is not None and r.score < 0.3
