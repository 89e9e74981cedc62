"""The judge in the report: how far to trust the judged metrics.

From the manifest's `judge` section (flows/outputs/judging.py): the judge's calibration beside
every judged metric (the calibration kind of its verdicts, as the metric declares it), a warning
when agreement is below the 0.8 needed to trust a judge, or when no calibration was run,
the counts of questions judged, undefined and lost to judge failures, and a
self-preference flag when the judge's model also generates in the sweep.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ablate.components.metrics.judged import judging_of
from ablate.components.report.numbers import fmt

TARGET = 0.8


def kind_of(metric: str) -> str | None:
    """The calibration kind behind a judged metric column's verdicts, as the metric
    declares it (`judge/faithfulness`: support); None for any other column."""
    stage, _, name = metric.partition("/")
    judging = judging_of(name) if stage == "judge" else None
    return judging.calibration if judging is not None else None


def _calibration(manifest: dict[str, Any]) -> dict[str, Any] | None:
    return ((manifest or {}).get("judge") or {}).get("calibration")


def metric_note(metric: str, manifest: dict[str, Any]) -> str | None:
    """One line on the judge's calibration for a judged metric's table (None otherwise)."""
    judge = (manifest or {}).get("judge")
    kind = kind_of(metric)
    if judge is None or kind is None:
        return None
    cal = _calibration(manifest)
    if cal is None:
        return f"_Judged by {judge['backend']}: **not calibrated** (no calibration set given)._"
    k = cal.get("by_kind", {}).get(kind)
    part = (f"{kind} verdicts {fmt(k['agreement'])} (kappa {fmt(k['kappa'], 2)}, n={k['judged']})"
            if k else f"no {kind} items")
    low = not (cal["agreement"] >= TARGET)
    return (f"_Judge calibration: agreement {fmt(cal['agreement'])} overall (kappa "
            f"{fmt(cal['kappa'], 2)}), {part}" + (f"; **below {TARGET:.0%}: not to be trusted**"
                                                  if low else "") + "._")


def judge_warnings(manifest: dict[str, Any] | None) -> list[str]:
    """Findings warnings about the judge (calibration, failures, self-preference)."""
    judge = (manifest or {}).get("judge")
    if judge is None:
        return []
    out = []
    cal = judge.get("calibration")
    if cal is None:
        out.append("Judge not calibrated: no calibration set was given (`judge.calibration`), "
                   "so nothing says how far the judged metrics can be trusted.")
    elif not (cal["agreement"] >= TARGET):
        out.append(f"Judge below calibration target: it agrees with {fmt(cal['agreement'])} of "
                   f"{cal['judged']} labelled items (kappa {fmt(cal['kappa'], 2)}), below the "
                   f"{TARGET:.0%} needed to trust it; read the judged metrics as unvalidated.")
    failed = {v: sum(c["failed"] for c in per.values()) for v, per in judge.get("counts", {}).items()}
    bad = [f"{v} ({n})" for v, n in failed.items() if n]
    if bad:
        out.append("Judge failures (unusable verdicts after one retry; excluded, never scored): "
                   + ", ".join(bad) + " question-metric pairs.")
    if judge.get("self_preference"):
        out.append("Self-preference: the judge's model also generates in "
                   f"{', '.join(judge['self_preference'])}; its judged scores there may be "
                   "inflated.")
    return out


def judge_section(manifest: dict[str, Any], per_query: pl.DataFrame) -> list[str]:
    """The report's Judge section (no lines without a judge)."""
    judge = (manifest or {}).get("judge")
    if judge is None:
        return []
    cfg = judge.get("config", {})
    where = cfg.get("model") or "bundled SmolLM2-135M-Instruct"
    if cfg.get("base_url"):
        where = f"{cfg['model']} at {cfg['base_url']} ({cfg.get('json_mode')})"
    lines = ["## Judge", "",
             f"- **Judge** {judge['backend']}: {where}; prompts {judge['prompts']['version']} "
             f"(`{judge['prompts']['fingerprint']}`), language {cfg.get('language')}, claims "
             f"by {cfg.get('claims')}, temperature {cfg.get('temperature')}, seed {cfg.get('seed')}"]
    cal = judge.get("calibration")
    if cal is None:
        lines.append("- **Calibration** none: set `judge.calibration` to a labelled set")
    else:
        kinds = "; ".join(f"{k} {fmt(s['agreement'])} (kappa {fmt(s['kappa'], 2)}, n={s['judged']}, "
                          f"confusion TT/TF/FT/FF {_conf(s)})" for k, s in cal["by_kind"].items())
        lines.append(f"- **Calibration** agreement {fmt(cal['agreement'])}, kappa "
                     f"{fmt(cal['kappa'], 2)} on {cal['judged']} of {cal['items']} labelled items "
                     f"({cal['failures']} judge failures): {kinds}"
                     + ("" if cal["agreement"] >= TARGET else
                        f". **Below the {TARGET:.0%} needed to trust the judge: the judged "
                        "metrics below are not evidence.**"))
    if judge.get("self_preference"):
        lines.append(f"- **Self-preference** the judge's model generates in "
                     f"{', '.join(judge['self_preference'])}")
    lines += ["", "| variant | metric | mean | judged | undefined | judge failures | calibration |",
              "|---|---|---:|---:|---:|---:|---|"]
    for variant, per in judge.get("counts", {}).items():
        rows = per_query.filter(pl.col("variant") == variant)
        for m, c in per.items():
            col = f"judge/{m}"
            mean = (rows[col].fill_nan(None).mean() if col in rows.columns else None)
            kind = kind_of(col)
            k = cal.get("by_kind", {}).get(kind) if cal and kind else None
            lines.append(f"| {variant} | {col} | {fmt(math.nan if mean is None else mean)} | "
                         f"{c['judged']} | {c['undefined']} | {c['failed']} | "
                         f"{fmt(k['agreement']) + ' (' + str(kind) + ')' if k else '–'} |")
    return lines + [""]


def _conf(s: dict[str, Any]) -> str:
    c = s["confusion"]
    return (f"{c['label_true']['judge_true']}/{c['label_true']['judge_false']}/"
            f"{c['label_false']['judge_true']}/{c['label_false']['judge_false']}")
