"""Rough time estimates for a planned sweep, from the manifests of earlier runs.

Each earlier run's `manifest.json` records, per stage and component (`generate:smollm2`,
`retrieve:default+dense`), how many stages it computed, the seconds they took and their
units of work (older manifests: per stage only, or without units). A rate per unit of work
follows: per document for `chunk`, per question for every other stage, counting the
questions each stage ran on (a sweep on its own tier runs on fewer than the baseline); a
manifest without units counts every stage at the run's questions.
A stage still to compute is estimated at its component's rate, else (only from manifests
written before per-component timings, which have nothing finer) at its stage's rate, else
it is counted as unknown and named: components of one stage differ by orders of magnitude
(SmolLM2 against the extractive generator), so one never stands in for another. Earlier
runs on the same data set (fingerprint) are preferred; others are used only when there
are none.

This is stage compute time, summed: stages run side by side on `runner.workers`
threads, and cached chunk embeddings or generations make a stage faster than its rate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable


@dataclass(frozen=True)
class Estimate:
    seconds: float  # summed compute of the stages with a rate
    estimated: int  # stages with a rate
    unknown: tuple[str, ...]  # timing keys without any rate
    runs: int  # earlier runs the rates come from
    same_data: bool  # those runs used the same data set


@dataclass
class _Sum:
    seconds: float = 0.0
    units: float = 0.0

    def rate(self) -> float | None:
        return self.seconds / self.units if self.units > 0 else None


@dataclass
class Rates:
    by_key: dict[str, _Sum] = field(default_factory=dict)
    by_stage: dict[str, _Sum] = field(default_factory=dict)
    runs: int = 0
    same_data: bool = False


def _unit(stage: str, documents: int, questions: int) -> int:
    return documents if stage == "chunk" else questions


def read_manifests(out_root: Path) -> list[dict[str, Any]]:
    """Manifests of the finished sweeps under an output root (unreadable ones skipped)."""
    found: list[dict[str, Any]] = []
    root = Path(out_root)
    if not root.is_dir():
        return found
    for path in sorted(root.glob("*/manifest.json")):
        if path.parent.name.startswith("."):
            continue  # a sweep folder being written or replaced
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found


def _entries(m: dict[str, Any]) -> list[tuple[str, int, float, float | None]]:
    """(timing key, stages computed, seconds, units of work or None when not recorded)
    of one manifest. A manifest written before per-component timings were recorded gives
    its per-stage totals (key = the stage)."""
    stages = m.get("stages", {})
    if stages.get("by_component"):
        return [(k, int(e.get("computed", 0)), float(e.get("seconds", 0.0)),
                 float(e["units"]) if e.get("units") is not None else None)
                for k, e in stages["by_component"].items()]
    run, seconds = stages.get("run", {}), stages.get("seconds", {})
    return [(stage, int(run.get(stage, {}).get("computed", 0)), float(sec), None)
            for stage, sec in seconds.items()]


def rates(manifests: Iterable[dict[str, Any]], fingerprint: str) -> Rates:
    usable = [m for m in manifests if any(e[1] for e in _entries(m))]
    same = [m for m in usable if m.get("dataset", {}).get("fingerprint") == fingerprint]
    chosen = same or usable
    out = Rates(runs=len(chosen), same_data=bool(same))
    for m in chosen:
        documents = int(m.get("dataset", {}).get("documents") or 0)
        questions = int(m.get("questions", {}).get("total") or 0)
        for key, computed, seconds, recorded in _entries(m):
            stage = key.split(":", 1)[0]
            units = (recorded if recorded is not None
                     else computed * _unit(stage, documents, questions))
            table, name = (out.by_key, key) if ":" in key else (out.by_stage, stage)
            acc = table.setdefault(name, _Sum())
            acc.seconds += seconds
            acc.units += units
    return out


def estimate(todo: Iterable[str], rates_: Rates, documents: int, questions: int) -> Estimate:
    """Estimate the stages `todo` (timing keys, one per stage still to compute), every
    one on `questions` (or, for `chunk`, `documents`)."""
    return estimate_work([(k, _unit(k.split(":", 1)[0], documents, questions)) for k in todo],
                         rates_)


def estimate_work(todo: Iterable[tuple[str, float]], rates_: Rates) -> Estimate:
    """Estimate the stages `todo`: (timing key, units of work: flows/run/stage_timing.work_units),
    one per stage still to compute."""
    seconds, estimated, unknown = 0.0, 0, []
    for key, units in todo:
        stage = key.split(":", 1)[0]
        rate = None
        for table, name in ((rates_.by_key, key), (rates_.by_stage, stage)):
            if name in table and table[name].rate() is not None:
                rate = table[name].rate()
                break
        if rate is None:
            unknown.append(key)
            continue
        seconds += rate * units
        estimated += 1
    return Estimate(seconds, estimated, tuple(unknown), rates_.runs, rates_.same_data)


def duration(seconds: float) -> str:
    """A short human duration: '40 s', '3.5 min', '1.2 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
