"""Near-miss claims for the synthetic sets' support negatives: a number, date or month
changed (never next to a bound such as "before" or 以上), a negation (English copulas and
modals, Chinese 是; not "not only"), an entity swap only when the answer is a small part
of the sentence; each changes the sentence so that its paragraph no longer says it."""

from __future__ import annotations

import random

import pytest

from ablate.components.judge.nearmiss import near_miss, negation, number


def _a(sentence: str, answer: str, paragraph: str | None = None) -> dict:
    s = sentence.index(answer)
    return {"sentence": sentence, "a": (s, s + len(answer)), "answer": answer,
            "paragraph": paragraph or f"Intro. {sentence} Outro."}


def test_number_changes_the_answers_number_first():
    a = _a("The bridge opened in 1932 after 4 years of work.", "1932")
    out = number(a, random.Random(0))
    assert out is not None and "1932" not in out and "after 4 years" in out


@pytest.mark.parametrize("sentence", [
    "It was built before 1900 by the city.", "At least 12 people came.",
    "It cost over 300 dollars.", "He waited until 1945.", "The count is 40 or more."])
def test_number_leaves_bounds_alone(sentence):
    assert number(_a(sentence, sentence.split()[2]), random.Random(0)) is None


def test_number_changes_a_month_and_chinese_decades_by_ten():
    out = number(_a("By 17 September, almost all had left.", "17 September"), random.Random(0))
    assert out is not None and "September" not in out and out.startswith("By 17 ")
    zh = number(_a("1990年代，大量商業小說開始出現。", "商業小說"), random.Random(0))
    assert zh is not None and zh[:4] in {"1970", "1980", "2000", "2010"} and zh[4:6] == "年代"
    assert number(_a("共有100多人參加。", "參加"), random.Random(0)) is None  # 多: a bound


def test_negation_english_and_chinese():
    assert negation(_a("The library is one of the oldest.", "oldest")) == \
        "The library is not one of the oldest."
    assert negation(_a("He has been mayor twice.", "mayor")) == "He has not been mayor twice."
    assert negation(_a("It was only one sign of trouble.", "sign")) is None  # "not only"
    assert negation(_a("It was never rebuilt.", "rebuilt")) is None  # already negated
    assert negation(_a("臺北是臺灣的首都。", "首都")) == "臺北不是臺灣的首都。"
    assert negation(_a("但是他沒有來。", "來")) is None
    assert negation(_a("他於是離開了。", "離開")) is None  # 於是: a conjunction


def test_near_miss_rotates_and_never_copies_the_paragraph():
    a = _a("The bridge is 1932 metres long, built by Smith.", "Smith")
    others = [_a("Jones built the tower.", "Jones")]
    made = {near_miss(a, others, random.Random(0), turn)[1] for turn in range(3)}
    assert made == {"entity swap", "number changed", "negation"}
    big = _a("Smith built it.", "Smith built it")  # the answer is the whole sentence
    assert near_miss(big, [_a("Jones built it.", "Jones built it")], random.Random(0), 0) is None
