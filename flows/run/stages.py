"""What each stage computes, as plain functions of the run context and a stage node.

`run_stage` is the only entry point: it reuses a stored result when one exists (checked
against its checksum) and otherwise computes, stores atomically and counts. No Prefect
here, so the same stages run directly in one process (benchmarks) or as Prefect tasks.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from typing import Callable

import polars as pl

from ablate.components.generation import GENERATORS
from ablate.components.generation.cache import GenerationCache
from ablate.components.judge.backends import BaseJudge, make_judge
from ablate.components.judge.calibration import judge_items, read_items
from ablate.components.judge.prompts import PromptSet
from ablate.components.judge.run import Item, judge_many
from ablate.components.judge.tasks import JudgeCache
from ablate.components.retrieval.latency import StageSeconds
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import fuse_rankings, rerank_rankings, retrieve_path
from ablate.components.runtime import resources as held
from ablate.components.runtime.progress import Progress
from ablate.components.text.chunk_table import ChunkTable, chunk_map
from ablate.components.text.chunking import chunk_documents
from ablate.components.text.context import pack_context
from ablate.components.text.labels import label_chunks
from ablate.components.text.perturbation import NONE, perturb
from ablate.flows.plan.graph import StageNode
from ablate.flows.run import sharded
from ablate.flows.run.context import RunContext
from ablate.flows.run.cost_usage import pricing, usage
from ablate.flows.run.frames import (
    answers_frame,
    contexts_frame,
    frame_answer_repeats,
    frame_contexts,
    frame_paths,
    frame_rankings,
    rankings_frame,
)
from ablate.flows.run.native_probe import ensure_safe, native_libraries
from ablate.flows.run.scoring import score_variant
from ablate.flows.run.stage_timing import own_questions, timing_key, work_units

# ---- loading inputs (memoised per process) ------------------------------------------

def load(ctx: RunContext, stage: str, key: str, convert: Callable | None = None):
    """A stored stage result, read once per process (as a frame, or converted)."""
    as_ = getattr(getattr(convert, "func", convert), "__name__", "frame") if convert else "frame"
    memo_key = f"{stage}:{key}:{as_}"
    if memo_key not in ctx.memo:
        frame = ctx.store.read(stage, key)
        ctx.memo[memo_key] = convert(frame) if convert else frame
    return ctx.memo[memo_key]


def chunks_of(ctx: RunContext, key: str) -> ChunkTable:
    """A chunking's chunks as columns (components/text/chunk_table.py), read once per process."""
    docs = ctx.dataset.doc_by_id()

    def convert(frame: pl.DataFrame) -> ChunkTable:
        return ChunkTable.of_frame(frame, docs)
    return load(ctx, "chunk", key, convert)


def release_models(ctx: RunContext, indexes: bool = False) -> None:
    """Let this process's models go (the release hooks components registered:
    ablate.components.runtime.resources), so that the analysis, report and MLflow logging
    run without their weights resident; with `indexes` (after the last stage), the
    memoised indexes too."""
    if indexes:
        held.release_all(ctx.memo)
    else:
        held.release_models(ctx.memo)


def resources(ctx: RunContext) -> Resources:
    """What the retrieval stages share in this run (encoders with the embedding cache,
    indexes kept in the cache folder), memoised in the run's memo."""
    return Resources.for_run(ctx.store.root, ctx.memo)


def generation_cache(ctx: RunContext) -> GenerationCache:
    with ctx.lock("gencache"):
        if "gencache" not in ctx.memo:
            ctx.memo["gencache"] = GenerationCache(ctx.store.root / "generations")
        return ctx.memo["gencache"]


def judge_cache(ctx: RunContext) -> JudgeCache:
    """The verdict cache beside the stage entries (shared with `ablate judge`)."""
    with ctx.lock("judgecache"):
        if "judgecache" not in ctx.memo:
            ctx.memo["judgecache"] = JudgeCache(ctx.store.root / "judgments")
        return ctx.memo["judgecache"]


def judge_of(ctx: RunContext) -> BaseJudge:
    """The process's judge (built once: a local model is loaded once)."""
    with ctx.lock("judge"):
        if "judge" not in ctx.memo:
            ctx.memo["judge"] = make_judge(ctx.spec.judge)
        return ctx.memo["judge"]


def judge_prompts_of(ctx: RunContext) -> PromptSet:
    """The judge's prompts, for the judge and calibrate stages."""
    # both stages exist only when the experiment has a judge, and the run context loads
    # its prompts then (context.judge_files)
    assert ctx.judge_prompts is not None
    return ctx.judge_prompts


def questions_of(ctx: RunContext, node: StageNode) -> tuple:
    """The questions a stage runs on: its variant's own sample, else the experiment's;
    their text perturbed for a stage that reads `query.perturbation` when it is set (its
    config is projected on what it reads, so the others see `none`; the gold spans and
    answers stay as they are)."""
    qs = own_questions(ctx, node)
    name = node.config.query.perturbation  # the default `none` unless the stage reads it
    if name == NONE:
        return qs
    return tuple(dataclasses.replace(q, question=perturb(name, q.question, q.qid)) for q in qs)


def progress(line: str) -> None:
    """One progress line (a Prefect log line inside the flow, which logs prints)."""
    print(line, flush=True)


# ---- the stages -----------------------------------------------------------------------
# Each receives its node: `node.config` is the variant's typed config projected on what
# the stage reads, `node.inputs` the keys of its inputs, `node.resolved` its components.

def _chunk(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    chunks = chunk_documents(ctx.dataset.documents, node.config.chunking, ctx.tokenizer)
    return pl.DataFrame({
        "chunk_id": [c.chunk_id for c in chunks], "doc_id": [c.doc_id for c in chunks],
        "start": [c.start for c in chunks], "end": [c.end for c in chunks],
        "n_tokens": [c.n_tokens for c in chunks],
    }, schema={"chunk_id": pl.Utf8, "doc_id": pl.Utf8, "start": pl.Int64, "end": pl.Int64,
               "n_tokens": pl.Int64})


def _label(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    labels = label_chunks(chunks_of(ctx, node.inputs["chunk"]), questions_of(ctx, node),
                          ctx.label_mode)
    rows = [(qid, g, cid, float(f)) for qid, groups in sorted(labels.items())
            for g, gains in enumerate(groups) for cid, f in sorted(gains.items())]
    return pl.DataFrame(rows, schema={"qid": pl.Utf8, "group": pl.Int64, "chunk_id": pl.Utf8,
                                      "gain": pl.Float64}, orient="row")


def _retrieve(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    latency = StageSeconds()  # with the questions whose seconds were recorded earlier
    assert node.part is not None  # a retrieve node per retrieval path (StageDef.per)
    chunks, questions = chunks_of(ctx, node.inputs["chunk"]), questions_of(ctx, node)
    if sharded.shards_of(ctx.spec.runner, node) > 1:  # a path that cannot was refused
        rankings = sharded.retrieve(ctx, node, chunks, questions, resources(ctx), latency)
    else:
        rankings = retrieve_path(node.part, chunks, questions, node.config, resources(ctx),
                                 latency=latency)
    return rankings_frame(rankings, latency)


def _fuse(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    per_path = {p: load(ctx, "retrieve", k, frame_rankings) for p, k in node.inputs["retrieve"].items()}
    latency: dict[str, float] = {}
    return rankings_frame(fuse_rankings(per_path, node.config, latency=latency), latency)


def _rerank(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    fused = load(ctx, "fuse", node.inputs["fuse"], frame_rankings)
    credibility = {d.doc_id: d.credibility for d in ctx.dataset.documents}
    latency = StageSeconds()
    out = rerank_rankings(questions_of(ctx, node), chunks_of(ctx, node.inputs["chunk"]), fused,
                          node.config, resources(ctx), credibility, latency=latency)
    return rankings_frame(out, latency)


def _assemble(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    ranked = load(ctx, "rerank", node.inputs["rerank"], frame_rankings)
    chunks = chunk_map(chunks_of(ctx, node.inputs["chunk"]),
                       {cid for ranking in ranked.values() for cid, _ in ranking})
    cfg = node.config
    docs = ctx.dataset.doc_by_id()
    contexts, latency = {}, {}
    for qid, ranking in ranked.items():
        t0 = time.perf_counter()
        contexts[qid] = pack_context(ranking, chunks, docs, cfg.context.budget, cfg.context.policy,
                                     ctx.tokenizer, cfg.rerank.depth)
        latency[qid] = time.perf_counter() - t0
    return contexts_frame(contexts, latency)


def _generate(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    """Answers for every question; with generator.repeats = N, N times with seeds seed,
    seed+1, ... (each repeat cached per prompt like any generation)."""
    factory = GENERATORS.get(node.resolved.first("generator").name)
    contexts = (load(ctx, "assemble", node.inputs["assemble"], functools.partial(frame_contexts, ctx))
                if "assemble" in node.inputs else {})
    questions = questions_of(ctx, node)
    items = [(q, contexts.get(q.qid)) for q in questions]
    cache = generation_cache(ctx)
    base = node.config.generator
    frames = []
    for r in range(base.repeats):
        gen = factory(base.model_copy(update={"seed": base.seed + r}), node.config.prompt)
        before = cache.counters
        answers = gen.generate_many(items, cache)
        after = cache.counters
        ctx.count("prompts_generated", after["generated"] - before["generated"])
        ctx.count("prompts_reused", after["reused"] - before["reused"])
        frames.append(answers_frame({q.qid: a for q, a in zip(questions, answers)})
                      .with_columns(repeat=pl.lit(r, dtype=pl.Int64)))
    return pl.concat(frames)


def _judge(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    """The judgments of every question, one row per repeat of its answer (every repeat is
    judged, together: ablate.components.judge.run.judge_many), with throttled progress
    (count, rate, ETA) and a line for each question the judge failed on. The embedder of
    answer relevancy (`judge.embedder`) is the run's encoder, with the embedding cache."""
    cfg, judge, cache, res = ctx.spec.judge, judge_of(ctx), judge_cache(ctx), resources(ctx)
    contexts = load(ctx, "assemble", node.inputs["assemble"], functools.partial(frame_contexts, ctx))
    answers = load(ctx, "generate", node.inputs["generate"], frame_answer_repeats)
    read = ctx.plan.nodes[node.inputs["generate"]].resolved.reads_context
    rows = []
    questions = questions_of(ctx, node)
    counter = Progress(f"judge {node.key[:8]}", len(questions))
    for q in questions:
        t0 = time.perf_counter()
        ctx_q = contexts.get(q.qid)
        repeats = answers.get(q.qid) or [None]
        got = judge_many(judge, judge_prompts_of(ctx), cfg,
                         [Item(q, a, ctx_q if read else None, ctx_q) for a in repeats], cache, res)
        dt = (time.perf_counter() - t0) / len(got)  # seconds per judged answer
        for r, j in enumerate(got):
            rows.append({"qid": q.qid, "repeat": r, "lang": j.lang,
                         "judgments": json.dumps(j.judgments, ensure_ascii=False, sort_keys=True),
                         "asked": j.asked, "reused": j.reused, "failures": j.failures,
                         "tokens_in": j.tokens_in, "tokens_out": j.tokens_out,
                         "latency_s": dt, "latency_reused": j.reused > 0,
                         "error": j.errors[0] if j.errors else None})
            ctx.count("verdicts_asked", j.asked)
            ctx.count("verdicts_reused", j.reused)
            ctx.count("judge_failures", j.failures)
            if j.errors:  # a failure is worth a line of its own; the rest is counted
                at = f" repeat {r}" if len(got) > 1 else ""
                progress(f"judge {node.key[:8]} {q.qid}{at}: {j.failures} failed, ERROR {j.errors[0]}")
        counter.step()
    return pl.DataFrame(rows, schema=JUDGE_SCHEMA)


# the judge stage's frame: a row per question and repeat of its answer (stage version 2;
# version 1 judged repeat 0 only and had no `repeat` column). A verdict from the cache costs
# its lookup, not its judging (the cache keeps no seconds): `latency_reused` marks it, so
# timings.parquet's reused/judge says the figure was not the cost of computing. `tokens_in`
# and `tokens_out` (the judge's, for cost/judge) are absent from a frame stored before them.
JUDGE_SCHEMA = {"qid": pl.Utf8, "repeat": pl.Int64, "lang": pl.Utf8, "judgments": pl.Utf8,
                "asked": pl.Int64, "reused": pl.Int64, "failures": pl.Int64,
                "tokens_in": pl.Int64, "tokens_out": pl.Int64,
                "latency_s": pl.Float64, "latency_reused": pl.Boolean, "error": pl.Utf8}


def _calibrate(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    """The judge's verdicts on the calibration set, with throttled progress (count, rate,
    ETA) and a line for each item the judge failed on."""
    # the calibrate stage is planned only with a calibration file (StageDef.needs_input)
    assert ctx.calibration_path is not None
    items = read_items(ctx.calibration_path)
    counter = Progress(f"calibrate {node.key[:8]}", len(items))

    def line(n, total, item, row):
        if row["error"] is not None:
            progress(f"calibrate {node.key[:8]} {item.id}: ERROR {row['error']}")
        counter.step()
    rows = judge_items(judge_of(ctx), judge_prompts_of(ctx), ctx.spec.judge, items,
                       judge_cache(ctx), progress=line)
    return pl.DataFrame(rows, schema={"id": pl.Utf8, "kind": pl.Utf8, "lang": pl.Utf8,
                                      "label": pl.Boolean, "verdict": pl.Utf8,
                                      "predicted": pl.Boolean, "failure": pl.Utf8,
                                      "error": pl.Utf8, "cached": pl.Boolean})


def judgments_of(frame: pl.DataFrame) -> dict[str, list[dict]]:
    """qid -> the judgments of each repeat's answer, in repeat order (a frame without a
    `repeat` column, judged once per question, gives a list of one)."""
    if "repeat" in frame.columns:
        frame = frame.sort("repeat", maintain_order=True)
    out: dict[str, list[dict]] = {}
    for q, j in zip(frame["qid"], frame["judgments"]):
        out.setdefault(q, []).append(json.loads(j))
    return out


def _score(ctx: RunContext, node: StageNode) -> pl.DataFrame:
    """Score from the inputs the variant's pipeline has (a retrieval-only one has no
    assemble or generate input) with the metrics its score stage selected."""
    i, cfg = node.inputs, node.config
    judged = "judge" in i
    qs = questions_of(ctx, node)
    return score_variant(
        questions=qs,
        labels=load(ctx, "label", i["label"]),
        candidates=load(ctx, "fuse", i["fuse"], frame_rankings),
        reranked=load(ctx, "rerank", i["rerank"], frame_rankings),
        contexts=(load(ctx, "assemble", i["assemble"], functools.partial(frame_contexts, ctx))
                  if "assemble" in i else None),
        answers=(load(ctx, "generate", i["generate"], frame_answer_repeats)
                 if "generate" in i else None),
        depth=cfg.rerank.depth, metrics=ctx.metrics_params(),
        context_used=(ctx.plan.nodes[i["generate"]].resolved.reads_context
                      if "generate" in i else False),
        pricing=pricing(ctx.spec.costs, cfg),
        usage=usage(qs, ctx.tokenizer.count, cfg,
                    {path: load(ctx, "retrieve", k) for path, k in i["retrieve"].items()},
                    load(ctx, "fuse", i["fuse"]),
                    load(ctx, "judge", i["judge"]) if judged else None),
        latency={f"retrieve_{path}": _latency(ctx, "retrieve", k) for path, k in i["retrieve"].items()}
        | {s: _latency(ctx, s, i[s]) for s in ("fuse", "rerank", "assemble", "generate", "judge")
           if s in i},
        judgments=load(ctx, "judge", i["judge"], judgments_of) if judged else None,
        metric_names=node.resolved.names,
        paths={path: load(ctx, "retrieve", k, frame_paths) for path, k in i["retrieve"].items()},
    )


def _latency(ctx: RunContext, stage: str, key: str) -> dict[str, float]:
    """Seconds per question of a stage (the mean over repeats where a stage repeats)."""
    frame = load(ctx, stage, key)
    if frame.height != frame["qid"].n_unique():
        frame = frame.group_by("qid", maintain_order=True).agg(pl.col("latency_s").mean())
    return dict(zip(frame["qid"], frame["latency_s"]))


STAGES: dict[str, Callable[[RunContext, StageNode], pl.DataFrame]] = {
    "chunk": _chunk, "label": _label, "retrieve": _retrieve, "fuse": _fuse, "rerank": _rerank,
    "assemble": _assemble, "generate": _generate, "judge": _judge, "calibrate": _calibrate,
    "score": _score,
}


def _complete(ctx: RunContext, node: StageNode, frame: pl.DataFrame) -> bool:
    """A result is complete unless a row failed (an `error` column, e.g. a generator
    timeout) or an input was incomplete; an incomplete one is recomputed next run, where
    the per-prompt generation cache makes only the failed questions run again."""
    if "error" in frame.columns and frame["error"].null_count() < frame.height:
        return False
    return all(ctx.store.stored_complete(ctx.plan.nodes[d].stage, d) for d in node.deps)


def run_stage(ctx: RunContext, node: StageNode) -> bool:
    """Compute `node` unless a valid stored result exists. Returns True when computed."""
    if ctx.store.has(node.stage, node.key):
        ctx.store.note(node.stage, computed=False)
        return False
    t0 = time.perf_counter()
    if node.model_bound:  # torch and llama.cpp already use every core: one at a time
        for library in native_libraries(node):  # a crash there is one line, not a dead flow
            ensure_safe(library, f"{node.label} {node.key[:10]}")
        with ctx.heavy:
            frame = STAGES[node.stage](ctx, node)
    else:
        frame = STAGES[node.stage](ctx, node)
    complete = _complete(ctx, node, frame)
    ctx.store.write(node.stage, node.key, frame, complete=complete)
    ctx.store.note(node.stage, computed=True)
    ctx.note_computed(node.key)
    if not complete:
        ctx.count("stages_incomplete")
    seconds = time.perf_counter() - t0
    with ctx.lock("timings"):
        ctx.timings[node.stage] = ctx.timings.get(node.stage, 0.0) + seconds
        ctx.note_timing(timing_key(node), seconds, work_units(ctx, node))
    return True
