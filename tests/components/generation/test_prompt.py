"""Prompt rendering, refusal detection and answer clean-up."""

import pytest

from components.config import PromptConfig
from components.errors import InputError
from components.generation.prompt import (CLOSED_BOOK_SYSTEM, first_answer_line, is_refusal,
                                          render_prompt)
from components.records import PackedContext, Passage


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
