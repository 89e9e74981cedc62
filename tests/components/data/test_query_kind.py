"""The rule-based `query_kind` tagger (components/data/query_kind.py): each rule on
questions it must and must not catch, English and Chinese, and the order of the rules."""

from __future__ import annotations

import pytest

from ablate.components.data.query_kind import query_kind


@pytest.mark.parametrize("question", [
    'Which album contains the song "Wonderland by Night"?',   # a quoted string
    "《红楼梦》的作者是谁？",                                    # Chinese title marks
    "What does error code E1234 mean?",                       # letters and digits
    "Which RFC defines HTTP/1.1, RFC2616 or RFC7230?",
    "What is the status of ticket SKU-4471?",
    "Where is the setting max_df documented?",                # snake_case identifier
    "What changed in version 3.2.1?",                         # a dotted version
    "What happened in 1998?",                                 # a number of 3+ digits
])
def test_exact_match(question):
    assert query_kind(question) == "exact_match"


@pytest.mark.parametrize("question", [
    "Who won the 2nd race?",           # short numbers and ordinals are no codes
    "What happened in the 1990s?",
    "Who wrote it in the 21st century?",
    "What is the capital of France?",
])
def test_not_exact_match(question):
    assert query_kind(question) != "exact_match"


@pytest.mark.parametrize("question", [
    "Which city is not in France?", "Who never won an Oscar?", "Why didn't the bridge fall?",
    "Which element has no isotopes?", "Name a country without a coastline.",
    "哪个城市不在法国？", "谁没有获得奥斯卡奖？", "除了巴黎，法国还有哪些大城市？", "哪种元素无同位素？",
])
def test_negation(question):
    assert query_kind(question) == "negation"


@pytest.mark.parametrize("question", [
    "What is notable about the town?",      # 'not' inside a word
    "这两个城市有什么不同？",                  # 不同: different
    "非洲最大的国家是哪个？",                  # 非洲: Africa
    "他非常有名吗？",                          # 非常: very
    "人工智能的未来是什么？",                  # 未来: future
])
def test_not_negation(question):
    assert query_kind(question) != "negation"


@pytest.mark.parametrize("question", [
    "Are Christopher Nolan and Sathish Kalathil both film directors?",
    "Which is older, the University of Texas or Rice University?",
    "Did Paris host the Olympics before London?",
])
def test_multi_entity(question):
    assert query_kind(question) == "multi_entity"


@pytest.mark.parametrize("question", [
    "Where was Marie Curie born?",         # one entity
    "What do plants need to grow?",        # none; the first word alone is no entity
    "How tall is the tower?",
])
def test_other(question):
    assert query_kind(question) == "other"


def test_rules_apply_in_order():
    """exact match before negation before multi-entity."""
    assert query_kind('Why did "Hey Jude" not chart in Paris or London?') == "exact_match"
    assert query_kind("Why did Paris not beat London?") == "negation"
