"""The graph retrieval path: node extraction, linking, the path's rankings, what each
setting changes, Chinese, the shard refusal and the statistics it records."""

from __future__ import annotations

import json

import pytest

from ablate.components import catalogue
from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Chunk, Question
from ablate.components.retrieval.graph.nodes import capitalised_spans, terms, words
from ablate.components.retrieval.graph.path import graph_of
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.stages import retrieve_path

catalogue.load()

TEXTS = ["The Eiffel Tower is in Paris, the capital of France.",
         "Gustave Eiffel designed the Eiffel Tower. Gustave Eiffel was born in Dijon.",
         "Dijon is famous for Dijon Mustard and the Palace of the Dukes.",
         "Berlin is the capital of Germany.",
         "Angela Merkel lived in Berlin."]
CHUNKS = [Chunk(f"c{i}", f"d{i}", 0, len(t), t, 10) for i, t in enumerate(TEXTS)]
BORN = Question("q1", "Where was the designer of the Eiffel Tower born?", (), True)


def cfg(**graph) -> PipelineConfig:
    return PipelineConfig.model_validate({"retrieval": {
        "paths": ["graph"], "depth": 5, "analyzer": "default", "graph": {"max_df": 1.0, **graph}}})


def ranked(config: PipelineConfig, chunks=CHUNKS, question=BORN) -> list:
    return retrieve_path("graph", chunks, [question], config)[question.qid]


def test_capitalised_spans_are_names_and_titles():
    text = ("In 1990 the University of Texas at Austin hired Senator John Smith.\n"
            "The Lord of the Rings\nHowever, Paris is large.")
    assert capitalised_spans(text) == ["University of Texas at Austin", "Senator John Smith",
                                       "Lord of the Rings", "Paris"]


def test_a_full_stop_ends_a_span():
    assert capitalised_spans("He saw the Eiffel Tower. Gustave Eiffel built it.") == [
        "Eiffel Tower", "Gustave Eiffel"]


def test_node_names_are_analysed_so_questions_find_them():
    assert terms("The Eiffel Tower is in Paris.", get_analyzer("english")) == ["eiffel tower", "paris"]


def test_words_extractor_takes_every_term_but_function_words_and_numbers():
    assert words("In 1990 the tower was built", get_analyzer("default")) == ["tower", "built"]


def test_the_second_hop_is_found_through_an_edge():
    """The question names the Eiffel Tower only: chunk c2 (Dijon) holds none of its nodes
    and is reached through Gustave Eiffel -> Dijon; Berlin's chunks are never reached."""
    got = [c for c, _ in ranked(cfg())]
    assert got[:2] == ["c0", "c1"] and "c2" in got and not {"c3", "c4"} & set(got)


def test_a_question_linked_to_no_node_gets_an_empty_ranking():
    assert ranked(cfg(), question=Question("q2", "what is photosynthesis?", (), True)) == []


def test_ties_are_broken_by_chunk_id():
    twins = [Chunk("b", "d1", 0, 10, "Rome and Milan", 3), Chunk("a", "d0", 0, 10, "Rome and Milan", 3)]
    got = ranked(cfg(), twins, Question("q", "Rome?", (), True))
    assert [c for c, _ in got] == ["a", "b"] and got[0][1] == got[1][1] > 0


def test_depth_cuts_the_ranking():
    assert len(ranked(cfg())) == 3
    assert [c for c, _ in ranked(cfg().model_copy(update={"retrieval": cfg().retrieval.model_copy(
        update={"depth": 1})}))] == ["c0"]


@pytest.mark.parametrize("setting, value", [
    ("damping", 0.85), ("min_pmi", 0.9), ("min_count", 2), ("spreading", "hops"),
    ("extractor", "words")])
def test_each_setting_changes_the_rankings(setting, value):
    assert ranked(cfg(**{setting: value})) != ranked(cfg())


def test_max_df_drops_frequent_nodes():
    """Eiffel Tower is in 2 of 5 chunks: kept at max_df 0.4, dropped at 0.3."""
    assert "eiffel tower" in graph_of(CHUNKS, cfg(max_df=0.4).retrieval)[0].node_index
    assert "eiffel tower" not in graph_of(CHUNKS, cfg(max_df=0.3).retrieval)[0].node_index


@pytest.mark.parametrize("setting, value", [("min_pmi", 0.9), ("min_count", 2), ("max_df", 0.3),
                                            ("extractor", "words")])
def test_the_memoised_graph_is_keyed_by_each_build_setting(setting, value):
    """A graph built under one value is never served for another (path.graph_of's memo)."""
    before = graph_of(CHUNKS, cfg().retrieval)[0]
    after = graph_of(CHUNKS, cfg(**{setting: value}).retrieval)[0]
    assert (before.nodes, before.adjacency.nnz) != (after.nodes, after.adjacency.nnz)


def test_chinese():
    """zh analyzer: the question's words link to the graph's words; the second hop (第戎)
    is reached through 古斯塔夫·埃菲尔."""
    texts = ["埃菲尔铁塔位于巴黎，是法国的象征。", "古斯塔夫·埃菲尔设计了埃菲尔铁塔。古斯塔夫·埃菲尔出生于第戎。",
             "第戎以芥末和勃艮第公爵宫闻名。", "柏林是德国的首都。"]
    chunks = [Chunk(f"z{i}", f"d{i}", 0, len(t), t, 10) for i, t in enumerate(texts)]
    config = PipelineConfig.model_validate({"retrieval": {"paths": ["graph"], "depth": 5,
                                                          "analyzer": "zh",
                                                          "graph": {"max_df": 0.5}}})
    got = [c for c, _ in ranked(config, chunks, Question("q", "埃菲尔铁塔的设计者出生在哪里？", (), True))]
    assert set(got[:2]) == {"z0", "z1"} and "z2" in got and "z3" not in got


def test_auto_analyzer_resolves_per_corpus():
    config = PipelineConfig.model_validate({"retrieval": {"paths": ["graph"], "graph": {"max_df": 1.0}}})
    assert [c for c, _ in ranked(config)][:2] == ["c0", "c1"]


def test_sharding_is_refused_in_one_line():
    from ablate.components.retrieval.shards import shard_refusal
    why = shard_refusal("graph", cfg())
    assert why is not None and "'graph' does not declare how it shards" in why and "\n" not in why


def test_the_graph_s_statistics_reach_the_stage_frame():
    from ablate.flows.run.frames import index_stats, rankings_frame
    out = retrieve_path("graph", CHUNKS, [BORN], cfg())
    stats = index_stats(rankings_frame(out, {}))
    graph = graph_of(CHUNKS, cfg().retrieval)[0]
    assert stats == json.loads(json.dumps(graph.stats()))
    assert stats["nodes"] == len(graph.nodes) and stats["edges"] == graph.adjacency.nnz // 2 > 0
    assert stats["mean_degree"] == round(2 * stats["edges"] / stats["nodes"], 3)
    assert stats["chunks"] == 5 and stats["build_s"] >= 0
