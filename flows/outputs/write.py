"""Collect a finished sweep into its output folder: per-query table, statistics (computed by
flows/outputs/analysis.py), manifest (flows/outputs/manifest.py), variants, reports. The folder is written beside its final place and
renamed into it, so a killed run never leaves half-written output. Replacing an existing
folder takes two renames (old aside, new in): between them the folder is briefly absent,
never mixed. When the statistics, the manifest or the report fail, the folder still lands
with what was made, its manifest's `incomplete` naming the parts missing, and RunFailed
says why and which command makes the rest.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.contract.dotted import value_label
from ablate.components.contract.errors import InputError, RunFailed, cause, no_space
from ablate.components.contract.vocab import BASELINE
from ablate.components.data.question_columns import column_value
from ablate.components.metrics.consistency import with_consistency
from ablate.components.metrics.registry import is_timing, metric_directions
from ablate.components.model_identity import resolved_models
from ablate.components.report.evidence import load_evidence
from ablate.components.report.sweep_data import FACTORIAL_FILE, WORTH_FILE, SweepResults
from ablate.components.runtime.sweep_files import RECORD, SweepFolder, file_record
from ablate.components.stats.slices import SLICES_FILE
from ablate.flows.outputs.analysis import rerun_hint, statistics, stats_hint, tested
from ablate.flows.outputs.analysis_code import analysis_version
from ablate.flows.outputs.evidence import write_evidence
from ablate.flows.outputs.judging import judge_manifest
from ablate.flows.outputs.manifest import answer_lengths, chunking_stats, manifest
from ablate.flows.outputs.self_test import self_test_record
from ablate.flows.outputs.timings import with_reused
from ablate.flows.outputs.worth import compute_worth, worth_expected
from ablate.flows.plan.design import design_labels
from ablate.flows.plan.sweep_plan import file_fingerprint
from ablate.flows.run.context import RunContext
from ablate.flows.run.frames import frame_answers

ID_COLUMNS = ("variant", "qid", "answerable", "cluster", "type", "bucket", "answer", "confidence")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "experiment"


def sweep_id(ctx: RunContext) -> str:
    """Same spec, options, data, questions (and judge labels) -> same id (so reruns find
    their runs). Alert rules change no result: they are left out."""
    labels = {} if ctx.labels_path is None else {"labels": file_fingerprint(ctx.labels_path)}
    spec = ctx.spec.model_dump(mode="json", exclude={"alerts"})
    blob = json.dumps({"spec": spec, "tier": ctx.tier,
                       "split": ctx.split, "data": ctx.dataset.fingerprint,
                       "questions": ctx.questions_fp, **labels}, sort_keys=True)
    return f"{slug(ctx.spec.name)}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def variant_records(ctx: RunContext) -> list[dict[str, Any]]:
    """variants.json: per variant its name, swept variable and value, config and stage
    keys; with a factorial design, each cell's level per design variable (`factors`)."""
    labels = design_labels(ctx.loaded)

    def factors(cell: tuple[int, ...] | None) -> dict[str, Any]:
        if cell is None:
            return {}
        return {"factors": {var: labels[var][lv] for var, lv in zip(labels, cell)}}
    return [{"name": v.name, "variable": v.variable, "value": v.value,
             "value_label": value_label(v.variable, v.value),
             **factors(v.cell),
             "config_id": v.config_id, "stage_keys": ctx.plan.by_variant[v.name],
             "config": v.config.model_dump(mode="json"),
             "models": resolved_models(v.config)} for v in ctx.variants]


SPREAD = "sd::"  # between-repeat spread columns of the score stage (generator.repeats > 1)


def with_slice_columns(per_query: pl.DataFrame, ctx: RunContext) -> pl.DataFrame:
    """per_query with each `report.slices` column it lacks (a questions file's own column,
    `query_kind`), as text, null where a question has no value (question_columns)."""
    missing = [c for c in ctx.spec.report.slices if c not in per_query.columns]
    if not missing:
        return per_query
    questions = {q.qid: q for q in ctx.dataset.questions}
    qids = per_query["qid"].to_list()
    return per_query.with_columns(pl.Series(c, [_text(column_value(questions[q], c)) if q in questions
                                                else None for q in qids], dtype=pl.Utf8)
                                  for c in missing)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def collect_per_query(ctx: RunContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per_query, timings): one row per variant x question, in variant order then qid.
    Between-repeat spreads are kept apart (repeat_spread)."""
    frames = []
    for v in ctx.variants:
        key = ctx.plan.by_variant[v.name]["score"]
        frames.append(ctx.store.read("score", key).with_columns(variant=pl.lit(v.name)))
    allq = pl.concat(frames, how="diagonal_relaxed")
    lat = [c for c in allq.columns if is_timing(c)]  # latency/, index/
    metrics = sorted(c for c in allq.columns if "/" in c and c not in lat
                     and not c.startswith(SPREAD))
    ids = [c for c in ID_COLUMNS if c in allq.columns]
    per_query = with_slice_columns(allq.select(ids + metrics), ctx)
    timings = allq.select(["variant", "qid"] + lat)
    perturbed = {v.name for v in ctx.variants if v.config.query.perturbation != "none"}
    if ctx.variants[0].config.query.perturbation != "none":  # the baseline itself is perturbed
        perturbed = set()
    per_query = with_consistency(per_query, BASELINE, perturbed, ctx.spec.metrics.answer_normalizer)
    return per_query, timings


def batch_mean_latencies(ctx: RunContext) -> list[str]:
    """Latency columns whose per-question figure is a batch time split evenly (declared by
    the component as `latency="batch_mean"`), so p50 = p95 there: a mean, not a spread."""
    out = set()
    for node in ctx.plan.nodes.values():
        if any(d.info.get("latency") == "batch_mean" for d in node.resolved.components):
            out.add(f"{node.stage}_{node.part}" if node.part else node.stage)
    return sorted(out)


def repeat_spread(ctx: RunContext) -> dict[str, Any]:
    """Per variant run with generator.repeats > 1: the repeats, and per metric the mean
    over questions of the between-repeat standard deviation (what one run would vary by)."""
    out: dict[str, Any] = {}
    for v in ctx.variants:
        n = v.config.generator.repeats
        if n < 2:
            continue
        frame = ctx.store.read("score", ctx.plan.by_variant[v.name]["score"])
        sds = {c[len(SPREAD):]: frame[c].drop_nans().mean() for c in frame.columns
               if c.startswith(SPREAD)}
        out[v.name] = {"repeats": n, "seeds": [v.config.generator.seed + r for r in range(n)],
                       "mean_sd": {m: round(float(s), 6) for m, s in sorted(sds.items())
                                   if isinstance(s, (int, float)) and s > 0}}
    return out


def no_effect_variants(ctx: RunContext) -> list[str]:
    """Variants whose final contexts and answers (retrieval only: contexts) equal the
    baseline's, question by question (without a context stage: whose reranked rankings do)."""
    def signature(name: str) -> tuple:
        keys = ctx.plan.by_variant[name]
        out: list[tuple] = []
        if "assemble" in keys:
            contexts = ctx.store.read("assemble", keys["assemble"]).select("qid", "passages")
            out.append(tuple(contexts.sort("qid")["passages"].to_list()))
        else:
            ranked = ctx.store.read("rerank", keys["rerank"]).select("qid", "chunk_ids")
            out.append(tuple(tuple(c) for c in ranked.sort("qid")["chunk_ids"].to_list()))
        if "generate" in keys:
            answers = frame_answers(ctx.store.read("generate", keys["generate"]))
            out.append(tuple((q, a.text, a.refused, a.citations)
                             for q, a in sorted(answers.items())))
        return tuple(out)
    base = signature(BASELINE)
    return [v.name for v in ctx.variants if not v.is_baseline and signature(v.name) == base]


OUTPUT_FILES = ("manifest.json", "variants.json", "per_query.parquet", "stats.parquet",
                "timings.parquet", "report.md", "report.html", "summary.txt")


def outputs_in_place(ctx: RunContext, out_root: Path) -> Path | None:
    """The sweep folder when it already holds this sweep's complete outputs: the same
    sweep id (same spec, options, data and questions), every output file, each as the
    manifest records it (sha256: a damaged or missing one is written again, issue 58.1),
    no part recorded `incomplete` (an analysis that failed is retried), made by the same
    analysis code (flows/outputs/analysis_code.py), and every variant with the stage keys
    this plan gives it (so the same code and components).
    Else None. With no stage computed, such a folder is what a new analysis would write
    again (the numbers are a function of the stage results and the seed)."""
    folder = Path(out_root) / sweep_id(ctx)
    if not all((folder / name).is_file() for name in OUTPUT_FILES):
        return None
    files = SweepFolder(folder)
    try:
        man = files.manifest
        records = files.json("variants.json")
    except InputError:
        return None
    if man.get("sweep_id") != folder.name or man.get("incomplete"):
        return None
    if man.get("analysis_code") != analysis_version():  # new statistics or report code
        return None
    if not man.get(RECORD) or files.damaged_files():
        return None
    if ctx.spec.design is not None and not (folder / FACTORIAL_FILE).is_file():
        return None
    if worth_expected(ctx) and not (folder / WORTH_FILE).is_file():
        return None
    keys = {r.get("name"): r.get("stage_keys") for r in records if isinstance(r, dict)}
    return folder if keys == ctx.plan.by_variant else None


def _manifest(ctx: RunContext, sid: str, started: float, counters: dict[str, Any],
              chunkings: dict[str, Any], sequential: dict[str, Any] | None) -> dict[str, Any]:
    """manifest() with what only the sweep folder records: the sequential looks, the
    variants without effect, repeat spreads, batch-mean latencies and the judge."""
    man = manifest(ctx, sid, started, counters, chunkings)
    if sequential is not None:
        man["sequential"] = sequential
    man["no_effect"] = no_effect_variants(ctx)
    man["repeats"] = repeat_spread(ctx)
    man["latency_batch_means"] = batch_mean_latencies(ctx)
    man["judge"] = judge_manifest(ctx)
    return man


def _failure(ctx: RunContext, folder: Path, failed: dict[str, Exception],
             per_query: pl.DataFrame) -> RunFailed:
    """The RunFailed of a folder that landed without the parts in `failed` (by name).
    Never raises: when what stopped the statistics stops their command too, the hint is
    the run's (every stage reused)."""
    if "stats" in failed:
        try:
            hint = stats_hint(ctx, folder, per_query)
        except Exception:  # noqa: BLE001 - one line, never a traceback
            hint = rerun_hint(ctx)
        return RunFailed(f"statistics failed ({cause(failed['stats'])}); per_query.parquet "
                         f"is in {folder}", hint=hint)
    if "manifest" in failed:
        return RunFailed(f"manifest failed ({cause(failed['manifest'])}); per_query.parquet "
                         f"and stats.parquet are in {folder}", hint=rerun_hint(ctx))
    return RunFailed(f"report failed ({cause(failed['report'])}); per_query.parquet and "
                     f"stats.parquet are in {folder}",
                     hint=shlex.join(["ablate", "report", str(folder)]))


def _put_in_place(tmp: Path, final: Path) -> None:
    """Rename the written folder into place (the old one aside first, then removed)."""
    if final.exists():
        old = final.parent / f".{final.name}.old-{os.getpid()}"
        os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, final)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")


def write_outputs(ctx: RunContext, out_root: Path, started: float, counters: dict[str, Any],
                  sequential: dict[str, Any] | None = None) -> Path:
    """Write the sweep folder (complete before it is renamed into place); return its path.
    A failed part (statistics, manifest, report) leaves the folder in place with the
    others, its manifest's `incomplete` naming what is missing, and raises RunFailed;
    any other failure leaves nothing and raises RunFailed too."""
    sid = sweep_id(ctx)
    final = out_root / sid
    tmp = out_root / f".{sid}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    pool = ThreadPoolExecutor(1)
    failed: dict[str, Exception] = {}
    worth = None
    try:
        # the chunkings' word-piece counts (~1 s of tokenizing, which runs without the GIL)
        # are made beside the statistics
        chunkings = pool.submit(chunking_stats, ctx)
        per_query, timings = collect_per_query(ctx)
        timings = with_reused(ctx, timings)  # reused/<stage>: latencies recorded earlier
        variants = variant_records(ctx)
        per_query.write_parquet(tmp / "per_query.parquet", statistics=False)
        timings.write_parquet(tmp / "timings.parquet", statistics=False)
        try:
            stats, factorial, sliced = statistics(ctx, per_query, variants, sequential)
            worth = compute_worth(ctx, per_query, variants, tested(per_query, "none")[0])
        except Exception as exc:  # noqa: BLE001 - the folder lands without them
            failed["stats"] = exc
        try:
            man = _manifest(ctx, sid, started, counters, chunkings.result(), sequential)
            man["answer_lengths"] = answer_lengths(ctx, per_query)
        except Exception as exc:  # noqa: BLE001 - the folder lands with a bare manifest
            failed["manifest"] = exc
            man = {"sweep_id": sid, "experiment": ctx.spec.name,
                   "experiment_file": str(ctx.loaded.path),
                   "settings": ctx.spec.model_dump(mode="json")}
        if "stats" not in failed:
            man["self_test"] = self_test_record(ctx, per_query, tested(per_query, ctx.spec.stats.cluster))
            stats.write_parquet(tmp / "stats.parquet", statistics=False)
            if factorial is not None:
                factorial.write_parquet(tmp / FACTORIAL_FILE, statistics=False)
            if worth is not None:
                worth.write_parquet(tmp / WORTH_FILE, statistics=False)
            if sliced is not None:
                sliced.write_parquet(tmp / SLICES_FILE, statistics=False)
        if not failed:
            try:
                write_evidence(ctx, tmp)  # questions and contexts for the drill-down
                results = SweepResults(man, variants, per_query, stats, timings,
                                       tuple(man["no_effect"]), factorial,
                                       evidence=load_evidence(tmp), worth=worth, slices=sliced)
                from ablate.components.report.build import build_report, write_files  # matplotlib
                write_files(tmp, build_report(results, ctx.spec.metrics.key))
            except Exception as exc:  # noqa: BLE001 - `ablate report` rebuilds it
                failed["report"] = exc
        if failed:
            man["incomplete"] = [*failed, *([] if "report" in failed else ["report"])]
        # a plugin's metric keeps its direction where the plugin is not loaded (report, gate)
        man["metric_directions"] = metric_directions(per_query.columns)
        man["analysis_code"] = analysis_version()
        _write_json(tmp / "variants.json", variants)
        man[RECORD] = file_record(tmp)  # every other file's sha256: damage is seen
        _write_json(tmp / "manifest.json", man)
        _put_in_place(tmp, final)
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        why = f"no space left on the output device ({out_root})" if no_space(exc) else cause(exc)
        raise RunFailed(f"analysis failed ({why}); nothing new written",
                        hint=rerun_hint(ctx)) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        pool.shutdown(wait=True)
    if failed:
        raise _failure(ctx, final, failed, per_query) from next(iter(failed.values()))
    return final
