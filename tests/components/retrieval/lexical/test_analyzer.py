"""Analyzers: named in the config, deterministic, shared (one instance per name)."""

from __future__ import annotations

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.retrieval.lexical.analyzer import ANALYZERS, get_analyzer


def test_default_lowercases_and_splits_words():
    assert get_analyzer("default")("The Seine, in PARIS's north-west!") == \
        ["the", "seine", "in", "paris", "s", "north", "west"]


def test_english_drops_stop_words():
    assert get_analyzer("english")("The capital of the region is Rouen") == \
        ["capital", "region", "rouen"]


def test_english_stem_stems():
    assert get_analyzer("english_stem")("Running studies of the runners") == \
        ["run", "studi", "runner"]


def test_unknown_analyzer_names_the_field():
    with pytest.raises(InputError, match="retrieval.analyzer.*known: .*default"):
        get_analyzer("klingon")


@pytest.mark.parametrize("name", [n for n in ANALYZERS.names() if n != "auto"])
@pytest.mark.parametrize("text", ["Photosynthesis converts LIGHT energy; Énergie 42 times.",
                                  "向量檢索的 Recall 怎麼提升？ＢＭ２５，ℌ"])
def test_analyzer_conformance(name, text):
    an = get_analyzer(name)
    assert an is get_analyzer(name)
    out = an(text)
    assert out == an(text) and all(isinstance(t, str) and t for t in out)
    assert an.batch([text, ""]) == [out, []]
    assert all(t == t.lower() for t in out)
