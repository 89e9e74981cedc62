"""Prompt rendering, refusal detection and answer clean-up."""

import pytest

from ablate.components.contract.config import PromptConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import PackedContext, Passage
from ablate.components.generation.prompt import (
    CLOSED_BOOK_SYSTEM,
    ZH_SYSTEM,
    first_answer_line,
    is_refusal,
    prompt_language,
    render_prompt,
)


def _ctx(*texts):
    return PackedContext(chunk_ids=tuple(f"c{i}" for i in range(len(texts))),
                         passages=tuple(Passage(f"d{i}", 0, len(t), t) for i, t in enumerate(texts)),
                         n_tokens=10, budget=100)


def test_numbered_context_question_and_refusal_phrase():
    system, user = render_prompt(PromptConfig(), "  Who? ", _ctx("First {braces}.", " Second. "))
    assert system.endswith("reply exactly: I don't know.")
    assert user == "Context:\n[1] First {braces}.\n\n[2] Second.\n\nQuestion: Who?\nAnswer:"


def test_custom_template_and_literal_braces():
    p = PromptConfig(system="S {{json}} {refusal}", user="{question} | {context}", refusal="N/A")
    assert render_prompt(p, "q", _ctx("a")) == ("S {json} N/A", "q | [1] a")


def test_unknown_placeholder_is_input_error_naming_field():
    with pytest.raises(InputError) as e:
        render_prompt(PromptConfig(user="{question} {ctx}"), "q", _ctx("a"))
    assert e.value.field == "prompt.user" and "{ctx}" in str(e.value)


def test_closed_book_prompt_has_no_context():
    system, user = render_prompt(PromptConfig(), "Who?", None)
    assert system == CLOSED_BOOK_SYSTEM.replace("{refusal}", "I don't know.")
    assert "Context" not in user and "Who?" in user


@pytest.mark.parametrize("text, refused", [
    ("", True), ("   ", True), ("I don't know.", True), ("i dont know", True),
    ("I do not know the answer", True), ("Unanswerable.", True),
    ("The context does not contain the answer.", True), ("N/A", False),
    ("Paris", False), ("Nobody knows who I don't knowingly met", False),
])
def test_is_refusal(text, refused):
    assert is_refusal(text, "I don't know.") is refused


def test_is_refusal_uses_configured_phrase():
    assert is_refusal("No answer found in passages", "No answer found.")
    assert not is_refusal("Pass", "No answer found.")


@pytest.mark.parametrize("raw, clean", [
    ("Paris\nbecause ...", "Paris"), ("\n\n  Answer: Paris", "Paris"),
    ("The answer is: [2] England.", "England."), ("Answers vary", "Answers vary"), ("", ""),
])
def test_first_answer_line(raw, clean):
    assert first_answer_line(raw) == clean


def test_chinese_question_gets_the_chinese_prompt():
    system, user = render_prompt(PromptConfig(), " 台灣的首都是哪裡？ ", _ctx("台北是首都。"))
    assert system == ZH_SYSTEM.replace("{refusal}", "我不知道。")
    assert user == "上下文：\n[1] 台北是首都。\n\n问题：台灣的首都是哪裡？\n答案："
    system, user = render_prompt(PromptConfig(), "台灣的首都是哪裡？", None)
    assert system.endswith("请只回答：我不知道。") and user == "问题：台灣的首都是哪裡？\n答案："


def test_mixed_question_is_chinese_under_auto_and_language_can_be_forced():
    assert prompt_language(PromptConfig(), "向量检索的 recall 怎么提升") == "zh"
    assert prompt_language(PromptConfig(), "How to raise recall?") == "en"
    assert prompt_language(PromptConfig(language="zh"), "How to raise recall?") == "zh"
    assert prompt_language(PromptConfig(language="en"), "怎么提升") == "en"
    system, _ = render_prompt(PromptConfig(language="en"), "怎么提升", _ctx("a"))
    assert system == PromptConfig().system.replace("{refusal}", "I don't know.")


def test_english_prompt_text_is_unchanged():
    system, user = render_prompt(PromptConfig(), "Who?", _ctx("A."))
    assert system == ("You answer questions using only the numbered context passages. "
                      "Answer with a short phrase copied from the context. "
                      "If the context does not contain the answer, reply exactly: I don't know.")
    assert user == "Context:\n[1] A.\n\nQuestion: Who?\nAnswer:"


@pytest.mark.parametrize("text, refused", [
    ("我不知道。", True), ("我不知道", True), ("不知道", True), ("无法回答。", True),
    ("無法回答", True), ("根据上下文，无法回答这个问题。", True), ("上下文中沒有提到。", True),
    ("没有答案", True), ("台北", False), ("知道了一些事", False), ("他不知道自己在哪", False),
])
def test_is_refusal_chinese(text, refused):
    assert is_refusal(text, "I don't know.") is refused


def test_is_refusal_configured_chinese_phrase():
    assert is_refusal("无可奉告。", "无可奉告")
    assert not is_refusal("奉告", "无可奉告")


def test_first_answer_line_drops_a_chinese_lead_in():
    assert first_answer_line("答案：台北\n因为……") == "台北"
