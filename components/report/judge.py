"""The judge in the report: how far to trust the judged metrics.

From the manifest's `judge` section (flows/outputs/judging.py): the judge's calibration beside
every judged metric, for the calibration kind of its verdicts (as the metric declares it):
agreement and kappa with their 95% intervals, items without a usable verdict (counted as
disagreements), whether the labels are synthetic; a judged metric is flagged "not to be
trusted" when ITS kind's agreement (point estimate, failures counted) is below the 0.8
target, or the calibration set has no item of its kind. Warnings too when no calibration
was run, when calibration items are about questions the sweep runs on (not held out), the
counts of questions lost to judge failures, and a self-preference flag when the judge's
model also generates in the sweep.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ablate.components.metrics.judged import judging_of
from ablate.components.report.numbers import fmt

TARGET = 0.8  # on agreement (not kappa), per kind: ablate.components.judge.agreement


def kind_of(metric: str) -> str | None:
    """The calibration kind behind a judged metric column's verdicts, as the metric
    declares it (`judge/faithfulness`: support); None for any other column."""
    stage, _, name = metric.partition("/")
    judging = judging_of(name) if stage == "judge" else None
    return judging.calibration if judging is not None else None


def _calibration(manifest: dict[str, Any]) -> dict[str, Any] | None:
    return ((manifest or {}).get("judge") or {}).get("calibration")


def _target(cal: dict[str, Any]) -> float:
    return float(cal.get("target", TARGET))


def _low(cal: dict[str, Any], kind: str | None) -> bool:
    """Whether a kind is below target (or has no item): its metrics are not to be trusted."""
    s = cal.get("by_kind", {}).get(kind) if kind else None
    return s is None or not (s["agreement"] >= _target(cal))


def _ci(s: dict[str, Any], key: str, digits: int = 3) -> str:
    ci = s.get(f"{key}_ci")
    return f" [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]" if ci else ""


def _kind_figures(s: dict[str, Any]) -> str:
    missing = s.get("no_verdict", s["items"] - s["judged"])
    return (f"agreement {fmt(s['agreement'])}{_ci(s, 'agreement')}, kappa "
            f"{fmt(s['kappa'], 2)}{_ci(s, 'kappa', 2)}, n={s['items']}"
            + (f", {missing} without a verdict (counted as disagreements)" if missing else ""))


def _synthetic(cal: dict[str, Any]) -> str:
    syn, n = cal.get("synthetic", 0), cal["items"]
    return ("synthetic labels" if syn == n else f"synthetic labels on {syn} of {n} items"
            if syn else "")


def metric_note(metric: str, manifest: dict[str, Any]) -> str | None:
    """One line on the judge's calibration for a judged metric's table (None otherwise)."""
    judge = (manifest or {}).get("judge")
    kind = kind_of(metric)
    if judge is None:
        return None
    if kind is None:  # judged, but not a verdict (RAGAS answer relevancy: a cosine)
        return (f"_Judged by {judge['backend']}: {metric} is not a yes/no verdict, so no "
                "calibration set measures it: **not calibrated**._") if metric.startswith(
                    "judge/") else None
    cal = _calibration(manifest)
    if cal is None:
        return f"_Judged by {judge['backend']}: **not calibrated** (no calibration set given)._"
    k = cal.get("by_kind", {}).get(kind)
    if k is None:
        return (f"_Judge calibration: the set has no {kind} items, the verdicts behind "
                f"{metric}: **not calibrated, not to be trusted**._")
    syn = _synthetic(cal)
    return (f"_Judge calibration: {kind} verdicts (behind {metric}) {_kind_figures(k)}"
            + (f"; {syn}" if syn else "")
            + (f"; **below the {_target(cal):.0%} agreement needed: not to be trusted**"
               if _low(cal, kind) else "") + "._")


def _sweep_kinds(judge: dict[str, Any]) -> dict[str, list[str]]:
    """Calibration kind -> the sweep's judged metrics made of its verdicts."""
    out: dict[str, list[str]] = {}
    for per in judge.get("counts", {}).values():
        for m in per:
            kind = kind_of(f"judge/{m}")
            if kind and f"judge/{m}" not in out.get(kind, []):
                out.setdefault(kind, []).append(f"judge/{m}")
    return out


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
    else:
        for kind, metrics in _sweep_kinds(judge).items():
            if not _low(cal, kind):
                continue
            s = cal.get("by_kind", {}).get(kind)
            said = (f"the calibration set has no {kind} items" if s is None else
                    f"its {kind} verdicts agree with the labels on {fmt(s['agreement'])}"
                    f"{_ci(s, 'agreement')} of {s['items']} items (failures counted)")
            out.append(f"Judge below calibration target for {', '.join(metrics)}: {said}, below "
                       f"the {_target(cal):.0%} agreement needed to trust it; read them as "
                       "unvalidated.")
        over = cal.get("overlap") or {}
        if over.get("items"):
            out.append(f"Judge calibration not held out: {over['items']} calibration items "
                       f"({over['questions']} questions) are about questions this sweep runs "
                       "on; its agreement is not a held-out figure.")
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


def _calibration_lines(cal: dict[str, Any]) -> list[str]:
    kinds = "; ".join(f"{k} {_kind_figures(s)}, confusion TT/TF/FT/FF {_conf(s)}"
                      + ("" if s["agreement"] >= _target(cal) else " **(below target)**")
                      for k, s in cal["by_kind"].items())
    langs = "; ".join(f"{g} {fmt(s['agreement'])}{_ci(s, 'agreement')} (n={s['items']})"
                      for g, s in cal.get("by_lang", {}).items())
    missing = cal.get("no_verdict", cal["items"] - cal["judged"])
    syn = _synthetic(cal)
    lines = [f"- **Calibration** agreement {fmt(cal['agreement'])}{_ci(cal, 'agreement')}, kappa "
             f"{fmt(cal['kappa'], 2)}{_ci(cal, 'kappa', 2)} on {cal['items']} labelled items "
             f"({missing} without a usable verdict, counted as disagreements; "
             f"{cal['failures']} judge failures)" + (f", {syn}" if syn else "") + f": {kinds}"]
    if langs:
        lines.append(f"- **Calibration by language** {langs}")
    if cal.get("intervals"):
        lines.append(f"- **Calibration intervals** {cal['intervals']}; {cal.get('clusters')} "
                     "question clusters. The target is on agreement (not kappa), per kind: "
                     f"a judged metric whose kind is below {_target(cal):.0%} is not evidence.")
    return lines


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
        lines += _calibration_lines(cal)
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
            flag = " **not to be trusted**" if cal and kind and _low(cal, kind) else ""
            lines.append(f"| {variant} | {col} | {fmt(math.nan if mean is None else mean)} | "
                         f"{c['judged']} | {c['undefined']} | {c['failed']} | "
                         f"{fmt(k['agreement']) + _ci(k, 'agreement') + ' (' + str(kind) + ')' if k else '–'}"
                         f"{flag} |")
    return lines + [""]


def _conf(s: dict[str, Any]) -> str:
    c = s["confusion"]
    return (f"{c['label_true']['judge_true']}/{c['label_true']['judge_false']}/"
            f"{c['label_false']['judge_true']}/{c['label_false']['judge_false']}")
