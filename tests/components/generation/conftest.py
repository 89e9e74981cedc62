"""Small shared fixtures for generator tests."""

import pytest

from ablate.components.contract.records import PackedContext, Passage, Question

NORMANS = ("The Normans were the people who in the 10th and 11th centuries gave their name to "
           "Normandy, a region in France. They were descended from Norse raiders and pirates "
           "from Denmark, Iceland and Norway.")


@pytest.fixture
def normans_ctx() -> PackedContext:
    return PackedContext(chunk_ids=("c1",), passages=(Passage("d1", 0, len(NORMANS), NORMANS),),
                         n_tokens=45, budget=512)


def _question(qid: str, text: str, answers=("x",), answerable=True) -> Question:
    return Question(qid=qid, question=text, answers=tuple(answers), answerable=answerable)


@pytest.fixture
def question():
    """Factory: question(qid, text, answers=("x",), answerable=True) -> Question."""
    return _question
