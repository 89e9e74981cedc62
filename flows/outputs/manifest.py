"""The sweep's manifest.json: what ran (spec, data, questions, settings, package versions,
the git state of the experiment file's repository), how (stages planned, run and their
times, counters) and facts the report reads (the corpus's language, the chunkings against
the embedder's window, the factorial design). flows/outputs/write.py writes it in the folder."""

from __future__ import annotations

import platform
import subprocess
import time
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.metrics.answer import resolve_normalizer
from ablate.components.metrics.answer_content import length_check
from ablate.components.model_identity import uses_embedder as reads_embedder
from ablate.components.retrieval.resources import DEFAULT
from ablate.components.runtime.models import ENGLISH_ONLY_MODELS
from ablate.components.text.cjk import script_counts
from ablate.flows.outputs.index_stats import trec_index_stats
from ablate.flows.plan.design import design_labels
from ablate.flows.run.context import RunContext
from ablate.flows.run.frames import index_stats
from ablate.flows.run.sharded import retrieve_shards

PACKAGES = ("ablate", "prefect", "mlflow", "polars", "scipy", "numpy", "torch",
            "sentence-transformers", "transformers", "gguf", "rank-bm25", "llama-cpp-python")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def _git(args: list[str], cwd: Path) -> str | None:
    """stdout of a git command in `cwd`, or None when git fails or is missing."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=5, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def git_state(experiment_file: Path) -> tuple[str, bool | None]:
    """(commit, dirty) of the git repository that holds the experiment file (not of the
    folder the command runs in): ("unknown", None) outside a repository. Dirty: a tracked
    file differs from the commit, or the experiment file itself is not committed."""
    folder = Path(experiment_file).resolve().parent
    sha = _git(["rev-parse", "HEAD"], folder)
    if sha is None:
        return "unknown", None
    changed = _git(["status", "--porcelain", "--untracked-files=no"], folder)
    tracked = _git(["ls-files", "--error-unmatch", Path(experiment_file).resolve().name], folder)
    return sha.strip(), bool(changed and changed.strip()) or tracked is None


def manifest(ctx: RunContext, sid: str, started: float, counters: dict[str, Any],
             chunkings: dict[str, Any] | None = None) -> dict[str, Any]:
    """The sweep's manifest; `chunkings`: chunking_stats(ctx) if already computed."""
    q = ctx.questions
    sha, dirty = git_state(ctx.loaded.path)
    return {
        "sweep_id": sid, "experiment": ctx.spec.name, "description": ctx.spec.description,
        "experiment_file": str(ctx.loaded.path), "git_sha": sha, "git_dirty": dirty,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.time() - started, 3),
        "seed": ctx.spec.seed, "tier": ctx.tier, "split": ctx.split,
        "dataset": {"path": ctx.spec.dataset.path, "format": ctx.spec.dataset.format,
                    "encoding": ctx.spec.dataset.encoding,
                    "fingerprint": ctx.dataset.fingerprint, "documents": len(ctx.dataset.documents),
                    "questions": len(ctx.dataset.questions)},
        "questions": {"total": len(q), "answerable": sum(x.answerable for x in q),
                      "without_evidence": sum(not x.evidence for x in q),
                      "fingerprint": ctx.questions_fp,
                      "selection": [{"step": name, "questions": n} for name, n in ctx.selection],
                      # a sweep with its own sample (tier or n): its variants' question counts
                      "per_variant": ({v.name: len(ctx.questions_of(v.name)) for v in ctx.variants
                                       if not v.is_baseline} if ctx.variant_questions else {})},
        "analyzer": ctx.analyzer_choice,
        "index_statistics": trec_index_stats(ctx),  # TREC collections only (else None)
        "retrieval_indexes": retrieval_indexes(ctx),
        "language": language_facts(ctx),
        "answer_normalizer": normalizer_counts(ctx),
        "label_threshold": ctx.spec.metrics.label_threshold, "label_mode": ctx.label_mode,
        "ndcg_gain": ctx.spec.metrics.gain,
        "statistics": ctx.spec.stats.model_dump(mode="json"),
        "tokenizer": ctx.tokenizer.name,
        "cache_dir": str(ctx.store.root.resolve()),
        "versions": versions(),
        "plugin_code": plugin_code(ctx),
        "stages": {"planned": ctx.plan.count(), "run": ctx.store.counts(),
                   "seconds": {k: round(v, 3) for k, v in sorted(ctx.timings.items())},
                   "by_component": {k: {"computed": n, "seconds": round(v, 3), "units": u}
                                    for k, (n, v, u) in sorted(ctx.timings_by.items())},
                   "times": {k: list(v) for k, v in sorted(ctx.stage_times.items())},
                   "retrieve_shards": retrieve_shards(ctx)},
        "counters": counters,
        "chunkings": chunking_stats(ctx) if chunkings is None else chunkings,
        "settings": ctx.spec.model_dump(mode="json"),
        "design": design_record(ctx),
    }


def plugin_code(ctx: RunContext) -> dict[str, str]:
    """{kind:name: source digest} of every plugin component the plan runs (a plugin's
    module source, Declaration.source): what `ablate diff` compares as plugin code."""
    return {f"{d.kind}:{d.name}": d.source for node in ctx.plan.nodes.values()
            for d in sorted(node.resolved.components, key=lambda d: (d.kind, d.name)) if d.source}


def retrieval_indexes(ctx: RunContext) -> dict[str, Any]:
    """The statistics each retrieve stage's index recorded (the graph path's nodes, edges,
    mean degree, build seconds): {"retrieve:<path> <key[:10]>": stats}, stages without
    any left out."""
    out: dict[str, Any] = {}
    for key, node in ctx.plan.nodes.items():
        if node.stage != "retrieve" or not ctx.store.stored_complete("retrieve", key):
            continue
        stats = index_stats(ctx.store.read("retrieve", key).select(pl.col("^index_stats$")))
        if stats is not None:
            out[f"{node.label} {key[:10]}"] = stats
    return out


def language_facts(ctx: RunContext) -> dict[str, Any]:
    """The corpus's CJK share and the English-only dense models the variants use on it."""
    n, letters, cjk, _ = script_counts([d.text for d in ctx.dataset.documents])
    dense = {v.config.retrieval.dense_model for v in ctx.variants if reads_embedder(v.config)}
    return {"cjk_share": round(cjk / letters, 4) if letters else 0.0,
            "english_only_dense_models": sorted(dense & ENGLISH_ONLY_MODELS)}


def normalizer_counts(ctx: RunContext) -> dict[str, Any]:
    """How many questions each answer normalisation scores (metrics.answer_normalizer)."""
    given = ctx.spec.metrics.answer_normalizer
    counts = Counter(resolve_normalizer(given, q.answers, q.question) for q in ctx.questions)
    return {"setting": given, "questions": dict(sorted(counts.items()))}


def answer_lengths(ctx: RunContext, per_query: pl.DataFrame) -> dict[str, Any] | None:
    """Median answer and reference tokens per variant over its answered, answerable
    questions, and the variants whose references are much longer than their answers
    (components/metrics/answer_content.length_check); None without answers."""
    if "answer" not in per_query.columns or "answer/refused" not in per_query.columns:
        return None
    asked = {q.qid: q for qs in [ctx.questions, *ctx.question_sets.values()] for q in qs}
    rows = [(v, a, asked[q].answers, asked[q].question) for v, q, a in per_query.filter(
        pl.col("answerable") & (pl.col("answer/refused") == 0.0)).select(
        "variant", "qid", "answer").iter_rows() if q in asked and a is not None]
    return length_check(rows, ctx.spec.metrics.answer_normalizer)


def chunking_stats(ctx: RunContext) -> dict[str, Any]:
    """Per chunking: chunk count and, when a variant of that chunking runs the dense
    embedder, the share of chunks longer than its window and how much of them it does not
    read (word pieces beyond the window, share of the chunking's pieces unseen). Reads the
    stored chunk columns: no chunk objects; the chunkings an embedder reads are counted
    together, each document encoded once (the encoder's span_window_stats)."""
    out: dict[str, Any] = {}
    by_model: dict[str, list[tuple[str, Any]]] = {}  # embedder -> (chunking key, frame)
    for v in ctx.variants:
        key = ctx.plan.by_variant[v.name]["chunk"]
        embedded = [u for u in ctx.variants
                    if ctx.plan.by_variant[u.name]["chunk"] == key and reads_embedder(u.config)]
        if key in out and not (embedded and "embedder" not in out[key]):
            continue
        frame = ctx.store.read("chunk", key)
        out[key] = {"chunking": v.config.chunking.model_dump(mode="json"), "chunks": frame.height}
        if embedded:
            model = embedded[0].config.retrieval.dense_model
            out[key]["embedder"] = model
            by_model.setdefault(model, []).append((key, frame))
    if by_model:
        docs = ctx.dataset.doc_by_id()
    for model, frames in by_model.items():
        enc = DEFAULT.encoder(model)  # its tokenizer and window only: no model is loaded
        spans = [(f["doc_id"].to_list(), f["start"].to_list(), f["end"].to_list()) for _, f in frames]
        for (key, _), window in zip(frames, enc.span_window_stats(lambda d: docs[d].text, spans)):
            out[key].update({"embedder_window": enc.max_seq_length,
                             "share_over_embedder_window": round(window["share"], 4),
                             "pieces_cut_mean": round(window["mean_cut"], 2),
                             "pieces_cut_max": int(window["max_cut"]),
                             "share_of_pieces_unseen": round(window["unseen_share"], 4)})
    return out


def design_record(ctx: RunContext) -> dict[str, Any] | None:
    """The manifest's `design`: kind, fraction, each variable's level labels (the
    baseline's first) and the cells' variant names; None without a design."""
    design = ctx.spec.design
    if design is None:
        return None
    return {"kind": design.kind, "fraction": design.fraction,
            "variables": design_labels(ctx.loaded),
            "cells": [v.name for v in ctx.variants if v.cell is not None]}
