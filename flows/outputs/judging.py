"""The judge's part of a sweep's manifest: what judged, how far to trust it (calibration),
what it could not judge (per variant and metric: judged, undefined, judge failures), and
whether it judges its own model's answers (self-preference)."""

from __future__ import annotations

import json
from typing import Any

from ablate.components.contract.errors import InputError
from ablate.components.generation import GENERATORS
from ablate.components.judge.calibration import overlap, read_items, summarize, with_items
from ablate.components.judge.keys import recorded_config
from ablate.components.judge.probes import self_preference
from ablate.flows.run.context import RunContext
from ablate.flows.run.stages import judge_of


def generator_models(ctx: RunContext) -> dict[str, str | None]:
    """Variant -> its generator's model key (None: no model, or not buildable here)."""
    out: dict[str, str | None] = {}
    for v in ctx.variants:
        try:
            gen = GENERATORS.get(v.config.generator.name)(v.config.generator, v.config.prompt)
            out[v.name] = gen.model_key()
        except InputError:
            out[v.name] = None
    return out


def judgment_counts(ctx: RunContext) -> dict[str, dict[str, dict[str, int]]]:
    """Variant -> judged metric -> {judged, undefined, failed, error} question counts. With
    generator.repeats a question is judged when any of its repeats is (its metric is their
    mean), else counted by its worst repeat: error, then failed, then undefined."""
    worst = ("error", "failed", "undefined")
    out: dict[str, dict[str, dict[str, int]]] = {}
    for v in ctx.variants:
        frame = ctx.store.read("judge", ctx.plan.by_variant[v.name]["judge"])
        seen: dict[tuple[str, str], set[str]] = {}
        for qid, raw in zip(frame["qid"], frame["judgments"]):
            for m, j in json.loads(raw).items():
                seen.setdefault((m, qid), set()).add({"ok": "judged"}.get(j["status"], j["status"]))
        counts: dict[str, dict[str, int]] = {
            m: {"judged": 0, "undefined": 0, "failed": 0, "error": 0} for m in ctx.spec.judge.metrics}
        for (m, _), statuses in seen.items():
            status = ("judged" if "judged" in statuses
                      else next(s for s in worst if s in statuses))
            counts[m][status] += 1
        out[v.name] = counts
    return out


def judge_manifest(ctx: RunContext) -> dict[str, Any] | None:
    """The manifest's `judge` section (None without a judge)."""
    judge_cfg = ctx.spec.judge
    if judge_cfg is None:
        return None
    judge = judge_of(ctx)
    prompts = ctx.judge_prompts
    assert prompts is not None  # read with the judge section (plan.sweep_plan.judge_files)
    calibration = None
    if ctx.calibration_path is not None:
        key = ctx.plan.by_variant[ctx.variants[0].name]["calibrate"]
        rows = ctx.store.read("calibrate", key).to_dicts()
        items = read_items(ctx.calibration_path)  # question ids (clusters), synthetic flags
        calibration = summarize(with_items(rows, items)) | {
            "file": str(ctx.calibration_path),
            "overlap": overlap(items, [q.qid for q in ctx.questions])}
    mine = judge.model_key()
    gens = generator_models(ctx)
    return {
        "backend": judge_cfg.backend, "config": recorded_config(judge_cfg),
        "identity": judge.cache_identity, "model": mine,
        "prompts": {"version": prompts.version, "fingerprint": prompts.fingerprint},
        "calibration": calibration,
        "counts": judgment_counts(ctx),
        "self_preference": self_preference(mine, gens),
    }
