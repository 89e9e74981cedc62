"""Collect a finished sweep into its output folder: per-query table, statistics, manifest,
variants, reports. The folder is written beside its final place and renamed into it, so a
killed run never leaves half-written output. Replacing an existing folder takes two
renames (old aside, new in): between them the folder is briefly absent, never mixed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from components.model_identity import resolved_models
from components.models import dense_model_path
from components.report.build import build_report, write_files
from components.retrieval.dense import DenseEncoder
from components.report.sweep_data import SweepResults
from components.stats import compare_variants
from flows.context import RunContext
from flows.stages import frame_answers
from components.config import format_value
from components.vocab import BASELINE

ID_COLUMNS = ("variant", "qid", "answerable", "cluster", "type", "bucket", "answer")
PACKAGES = ("ablate", "prefect", "mlflow", "polars", "scipy", "numpy", "torch",
            "sentence-transformers", "rank-bm25", "llama-cpp-python")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "experiment"


def sweep_id(ctx: RunContext) -> str:
    """Same spec, options, data and questions -> same id (so reruns find their runs)."""
    blob = json.dumps({"spec": ctx.spec.model_dump(mode="json"), "tier": ctx.tier,
                       "split": ctx.split, "data": ctx.dataset.fingerprint,
                       "questions": ctx.questions_fp}, sort_keys=True)
    return f"{slug(ctx.spec.name)}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def git_sha(root: Path | None = None) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def variant_records(ctx: RunContext) -> list[dict[str, Any]]:
    return [{"name": v.name, "variable": v.variable, "value": v.value,
             "value_label": "" if v.variable is None else format_value(v.value),
             "config_id": v.config_id, "stage_keys": ctx.plan.by_variant[v.name],
             "config": v.config.model_dump(mode="json"),
             "models": resolved_models(v.config)} for v in ctx.variants]


def collect_per_query(ctx: RunContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per_query, timings): one row per variant x question, in variant order then qid."""
    frames = []
    for v in ctx.variants:
        key = ctx.plan.by_variant[v.name]["score"]
        frames.append(ctx.store.read("score", key).with_columns(variant=pl.lit(v.name)))
    allq = pl.concat(frames, how="diagonal_relaxed")
    lat = [c for c in allq.columns if c.startswith("latency/")]
    metrics = sorted(c for c in allq.columns if "/" in c and c not in lat)
    ids = [c for c in ID_COLUMNS if c in allq.columns]
    per_query = allq.select(ids + metrics)
    timings = allq.select(["variant", "qid"] + lat)
    return per_query, timings


def no_effect_variants(ctx: RunContext) -> list[str]:
    """Variants whose final contexts and answers equal the baseline's, question by question."""
    def signature(name: str) -> tuple:
        keys = ctx.plan.by_variant[name]
        contexts = ctx.store.read("assemble", keys["assemble"]).select("qid", "chunk_ids", "passages")
        answers = frame_answers(ctx.store.read("generate", keys["generate"]))
        return (tuple(contexts.sort("qid")["passages"].to_list()),
                tuple((q, a.text, a.refused) for q, a in sorted(answers.items())))
    base = signature(BASELINE)
    return [v.name for v in ctx.variants if not v.is_baseline and signature(v.name) == base]


def compute_stats(ctx: RunContext, per_query: pl.DataFrame) -> pl.DataFrame:
    s = ctx.spec.stats
    metrics = [c for c in per_query.columns if "/" in c]
    cluster = "cluster" if per_query["cluster"].null_count() < per_query.height else None
    return compare_variants(per_query, baseline=BASELINE, metrics=metrics, test=s.test,
                            correction=s.correction, alpha=s.alpha, resamples=s.resamples,
                            bootstrap_resamples=s.bootstrap_resamples, ci_method=s.ci_method,
                            seed=ctx.spec.seed, cluster_col=cluster, family=s.family)


def manifest(ctx: RunContext, sid: str, started: float, counters: dict[str, Any]) -> dict[str, Any]:
    q = ctx.questions
    return {
        "sweep_id": sid, "experiment": ctx.spec.name, "description": ctx.spec.description,
        "experiment_file": str(ctx.loaded.path), "git_sha": git_sha(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.time() - started, 3),
        "seed": ctx.spec.seed, "tier": ctx.tier, "split": ctx.split,
        "dataset": {"path": ctx.spec.dataset.path, "format": ctx.spec.dataset.format,
                    "fingerprint": ctx.dataset.fingerprint, "documents": len(ctx.dataset.documents),
                    "questions": len(ctx.dataset.questions)},
        "questions": {"total": len(q), "answerable": sum(x.answerable for x in q),
                      "without_evidence": sum(not x.evidence for x in q),
                      "fingerprint": ctx.questions_fp},
        "label_threshold": ctx.spec.metrics.label_threshold, "label_mode": ctx.label_mode,
        "ndcg_gain": ctx.spec.metrics.gain,
        "statistics": ctx.spec.stats.model_dump(mode="json"),
        "tokenizer": ctx.tokenizer.name,
        "cache_dir": str(ctx.store.root.resolve()),
        "versions": versions(),
        "stages": {"planned": ctx.plan.count(), "run": ctx.store.counts(),
                   "seconds": {k: round(v, 3) for k, v in sorted(ctx.timings.items())},
                   "times": {k: list(v) for k, v in sorted(ctx.stage_times.items())}},
        "counters": counters,
        "chunkings": chunking_stats(ctx),
        "settings": ctx.spec.model_dump(mode="json"),
    }


def chunking_stats(ctx: RunContext) -> dict[str, Any]:
    """Per chunking: chunk count and share longer than the dense embedder's window."""
    out = {}
    for v in ctx.variants:
        key = ctx.plan.by_variant[v.name]["chunk"]
        if key in out:
            continue
        frame = ctx.store.read("chunk", key)
        enc = DenseEncoder(dense_model_path(v.config.retrieval.dense_model), None)
        out[key] = {"chunking": v.config.chunking.model_dump(mode="json"), "chunks": frame.height,
                    "share_over_embedder_window": round(enc.truncated_share(frame["n_tokens"]), 4)}
    return out


def write_outputs(ctx: RunContext, out_root: Path, started: float, counters: dict[str, Any]) -> Path:
    """Write the sweep folder (complete before it is renamed into place); return its path."""
    sid = sweep_id(ctx)
    final = out_root / sid
    tmp = out_root / f".{sid}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        per_query, timings = collect_per_query(ctx)
        stats = compute_stats(ctx, per_query)
        variants = variant_records(ctx)
        man = manifest(ctx, sid, started, counters)
        no_effect = no_effect_variants(ctx)
        man["no_effect"] = no_effect
        per_query.write_parquet(tmp / "per_query.parquet", statistics=False)
        stats.write_parquet(tmp / "stats.parquet", statistics=False)
        timings.write_parquet(tmp / "timings.parquet", statistics=False)
        (tmp / "manifest.json").write_text(json.dumps(man, indent=2, default=str) + "\n")
        (tmp / "variants.json").write_text(json.dumps(variants, indent=2, default=str) + "\n")
        results = SweepResults(man, variants, per_query, stats, timings, tuple(no_effect))
        write_files(tmp, build_report(results, ctx.spec.metrics.key))
        if final.exists():
            old = out_root / f".{sid}.old-{os.getpid()}"
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
