"""Stage outputs as polars frames and back: rankings, packed contexts and answers (what
the store holds for the retrieve/fuse/rerank, assemble and generate stages).

Each holds `latency_s`, the seconds per question of computing the stage; rankings and
answers also `latency_reused`: whether those seconds include work recorded when it was
computed earlier (cached query vectors, cached answers) rather than timed now. A frame
stored before that column existed reads as none reused (`reused_latency`).

A retrieve stage's rankings of a path that searched an index (the dense path's
latency.IndexedRankings) also hold `index_build_s` (the index's build seconds, the same on
every row) and `index_search_s` (its search seconds per question), and for an approximate
index `exact_ids`, the exact top k over the same vectors; a frame without them (bm25,
fuse, rerank, or stored before they existed) reads as none recorded (`frame_paths`). An
index with statistics (the graph path's) adds `index_stats`, their JSON on every row,
which the manifest records (`index_stats`).

Answers also hold `citations`: the passage numbers an answer cites (a list, null when
the generator does not cite; Answer.citations); a frame without the column reads as no
citations recorded."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import polars as pl

from ablate.components.contract.records import Answer, PackedContext, Passage, Ranking
from ablate.components.metrics.registry import PathView
from ablate.components.retrieval.latency import IndexedRankings, StageSeconds

if TYPE_CHECKING:
    from ablate.flows.run.context import RunContext

Rankings = dict[str, Ranking]  # qid -> ranking
REUSED = "latency_reused"


def rankings_frame(rankings: Rankings, latency: dict[str, float]) -> pl.DataFrame:
    """`latency`: seconds per question; a StageSeconds also names the reused ones.
    IndexedRankings add their index's columns (see the module's docstring)."""
    qids = sorted(rankings)
    reused = latency.reused if isinstance(latency, StageSeconds) else set()
    frame = pl.DataFrame({
        "qid": qids,
        "chunk_ids": [[c for c, _ in rankings[q]] for q in qids],
        "scores": [[float(s) for _, s in rankings[q]] for q in qids],
        "latency_s": [float(latency.get(q, math.nan)) for q in qids],
        REUSED: [q in reused for q in qids],
    }, schema={"qid": pl.Utf8, "chunk_ids": pl.List(pl.Utf8), "scores": pl.List(pl.Float64),
               "latency_s": pl.Float64, REUSED: pl.Boolean})
    if not isinstance(rankings, IndexedRankings):
        return frame
    frame = frame.with_columns(index_build_s=pl.lit(rankings.build_s, dtype=pl.Float64),
                               index_search_s=pl.lit(rankings.search_s, dtype=pl.Float64))
    if rankings.stats is not None:
        frame = frame.with_columns(index_stats=pl.lit(json.dumps(rankings.stats, sort_keys=True),
                                                      dtype=pl.Utf8))
    if rankings.exact is not None:
        exact = rankings.exact
        frame = frame.with_columns(pl.Series("exact_ids", [exact.get(q, []) for q in qids],
                                             dtype=pl.List(pl.Utf8)))
    return frame


def index_stats(frame: pl.DataFrame) -> dict | None:
    """The index statistics a retrieve stage's frame records, None when it holds none."""
    if "index_stats" not in frame.columns or not frame.height:
        return None
    return json.loads(frame["index_stats"][0])


def frame_paths(frame: pl.DataFrame) -> dict[str, PathView]:
    """qid -> the path's output as the metrics read it (metrics.registry.PathView)."""
    n = frame.height
    cols = frame.columns
    exact = frame["exact_ids"].to_list() if "exact_ids" in cols else [None] * n
    build = frame["index_build_s"].to_list() if "index_build_s" in cols else [math.nan] * n
    search = frame["index_search_s"].to_list() if "index_search_s" in cols else [math.nan] * n
    return {q: PathView(tuple(ids), None if ex is None else tuple(ex), float(b), float(s))
            for q, ids, ex, b, s in zip(frame["qid"].to_list(), frame["chunk_ids"].to_list(),
                                        exact, build, search)}


def reused_latency(frame: pl.DataFrame) -> dict[str, bool]:
    """qid -> whether the stage's latency of that question includes work recorded earlier
    (any repeat's, where a stage repeats); False throughout for a frame without the column."""
    if REUSED not in frame.columns:
        return {q: False for q in frame["qid"]}
    marks = frame.group_by("qid", maintain_order=True).agg(pl.col(REUSED).any())
    return dict(zip(marks["qid"], marks[REUSED]))


def frame_rankings(frame: pl.DataFrame) -> Rankings:
    return {q: list(zip(ids, scores)) for q, ids, scores in
            zip(frame["qid"], frame["chunk_ids"], frame["scores"])}


def contexts_frame(contexts: dict[str, PackedContext], latency: dict[str, float]) -> pl.DataFrame:
    qids = sorted(contexts)
    return pl.DataFrame({
        "qid": qids,
        "chunk_ids": [list(contexts[q].chunk_ids) for q in qids],
        "cut_chunk_ids": [list(contexts[q].cut_chunk_ids) for q in qids],
        "passages": [json.dumps([[p.doc_id, p.start, p.end] for p in contexts[q].passages])
                     for q in qids],
        "n_tokens": [contexts[q].n_tokens for q in qids],
        "budget": [contexts[q].budget for q in qids],
        "latency_s": [float(latency.get(q, math.nan)) for q in qids],
    }, schema={"qid": pl.Utf8, "chunk_ids": pl.List(pl.Utf8), "cut_chunk_ids": pl.List(pl.Utf8),
               "passages": pl.Utf8, "n_tokens": pl.Int64, "budget": pl.Int64,
               "latency_s": pl.Float64})


def frame_contexts(ctx: RunContext, frame: pl.DataFrame) -> dict[str, PackedContext]:
    """Contexts of an assemble frame, with passage texts sliced from the documents."""
    docs = ctx.dataset.doc_by_id()
    out = {}
    for row in frame.iter_rows(named=True):
        passages = tuple(Passage(d, s, e, docs[d].text[s:e]) for d, s, e in json.loads(row["passages"]))
        out[row["qid"]] = PackedContext(tuple(row["chunk_ids"]), passages, row["n_tokens"],
                                        row["budget"], tuple(row["cut_chunk_ids"]))
    return out


def _listed(citations: tuple[int, ...] | None) -> list[int] | None:
    return None if citations is None else list(citations)


def answers_frame(answers: dict[str, Answer]) -> pl.DataFrame:
    qids = sorted(answers)
    return pl.DataFrame({
        "qid": qids,
        "text": [answers[q].text for q in qids],
        "refused": [answers[q].refused for q in qids],
        "tokens_in": [answers[q].tokens_in for q in qids],
        "tokens_out": [answers[q].tokens_out for q in qids],
        "latency_s": [float(answers[q].latency_s) for q in qids],
        REUSED: [bool(answers[q].cached) for q in qids],  # the generation cache's, latency kept
        "error": [answers[q].error for q in qids],
        "citations": [_listed(answers[q].citations) for q in qids],
        "score": [answers[q].score for q in qids],
    }, schema={"qid": pl.Utf8, "text": pl.Utf8, "refused": pl.Boolean, "tokens_in": pl.Int64,
               "tokens_out": pl.Int64, "latency_s": pl.Float64, REUSED: pl.Boolean,
               "error": pl.Utf8, "citations": pl.List(pl.Int64), "score": pl.Float64})


def frame_answer_repeats(frame: pl.DataFrame) -> dict[str, list[Answer]]:
    """qid -> the answers of every repeat, in repeat order."""
    out: dict[str, list[Answer]] = {}
    for r in frame.sort("repeat", maintain_order=True).iter_rows(named=True):
        cited = r.get("citations")
        out.setdefault(r["qid"], []).append(Answer(
            r["text"], r["refused"], r["tokens_in"], r["tokens_out"], r["latency_s"], False,
            r["error"], citations=None if cited is None else tuple(cited), score=r.get("score")))
    return out


def frame_answers(frame: pl.DataFrame) -> dict[str, Answer]:
    """qid -> the answer of the first repeat (the only one unless generator.repeats > 1)."""
    return {q: answers[0] for q, answers in frame_answer_repeats(frame).items()}
