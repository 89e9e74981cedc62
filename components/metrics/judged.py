"""Judged metrics: metric-registry entries scored from the judge stage's verdicts, each
declaring what it asks the judge.

A judged metric is defined in one place, by `judged_metric` on its `asks` function:
- `asks(case)`: what the judge is asked about one question (a Case of
  ablate.components.judge.case: question, answer, the context the generator read, the
  assembled context, the judge config, the prompt language). It returns the judgment
  itself when nothing needs asking (undefined: a refusal, closed book, no reference
  answer; or defined by rule: an empty context supports nothing), else an Asking: the
  judge's tasks to ask and what to make of their verdicts (a judgment, or a follow-up
  Asking: faithfulness asks for claims, then whether each is supported);
- `score(judgment)`: its score from an `ok` judgment (the verdicts);
- `reads`: the `judge.*` fields its asks read (e.g. `judge.claims`), part of the judge
  stage's key; `calibration`: the calibration kind its verdicts are (support, relevance,
  usefulness: the report shows that agreement beside it); `order`: its place among the
  judged metrics (the judge config's default lists them in this order);
- `embeds`: its asks compare texts by embedding (the Case's `cosines`, by the
  `judge.embedder` model): the judge stage then gets the embedder, and the embedder's
  identity (its model folder's digest) is part of the judge stage's key.

It registers `judge/<name>` in the metric registry like any metric, its declaration
(`Judging`) held by the registered compute function, so the registry is the one list of
judged metrics (a test's or a plugin's registration leaves with the registry's entry).
The judge (ablate.components.judge.run) asks what the chosen judged metrics declare and
knows none by name; this module imports nothing of the judge.

A judgment that is undefined or failed (a judge failure) scores NaN: excluded from the
statistics and counted, never 0 or 1. Without a judge (`view.judgments` is None) judged
metrics are skipped; a judged metric the judge config leaves out gives no column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ablate.components.contract.registry import require_builtins
from ablate.components.metrics.registry import METRICS, Direction, QuestionView, metric

# a verdict word as a score (relevance: yes / partly / no; support, usefulness: yes / no)
SCORES = {"yes": 1.0, "partly": 0.5, "no": 0.0}


def share_yes(verdicts: Sequence[str]) -> float:
    """Share of `yes` verdicts (NaN for none)."""
    return sum(v == "yes" for v in verdicts) / len(verdicts) if verdicts else math.nan


def mean_cosine(judgment: Mapping[str, Any]) -> float:
    """RAGAS answer relevancy of a judgment: 0 when the answer is noncommittal, else the
    mean cosine of the generated questions with the question (NaN without cosines)."""
    if judgment.get("noncommittal"):
        return 0.0
    cosines = judgment.get("cosines")
    return sum(cosines) / len(cosines) if cosines else math.nan


def rank_weighted_precision(useful: Sequence[bool]) -> float:
    """RAGAS context precision of a ranked list of usefulness verdicts (NaN for none)."""
    if not useful:
        return math.nan
    hits = 0
    total = 0.0
    for k, u in enumerate(useful, 1):
        if u:
            hits += 1
            total += hits / k  # precision@k, counted where v_k = 1
    return total / hits if hits else 0.0


@dataclass(frozen=True)
class Judging:
    """What a judged metric asks the judge and how it scores the verdicts (module doc)."""

    name: str
    asks: Callable[[Any], Any]  # Case -> judgment dict | Asking (ablate.components.judge.case)
    score: Callable[[Mapping[str, Any]], float]
    reads: tuple[str, ...] = ()  # judge.* fields its asks read (keyed)
    calibration: str | None = None  # the calibration kind of its verdicts
    order: int = 100
    embeds: bool = False  # its asks use the judge.embedder (keyed by its identity)


def judged_metric(name: str, *, score: Callable[[Mapping[str, Any]], float], description: str,
                  reads: Sequence[str] = (), calibration: str | None = None, order: int = 100,
                  embeds: bool = False, direction: Direction = "higher", low: float = 0.0,
                  high: float = 1.0, version: str = "1"
                  ) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorator on a judged metric's `asks` function: registers `judge/<name>` in the
    metric registry, scored by `score` from its judgment (NaN unless the judgment is
    `ok`). `version`: bump it when a change of its asks or score changes its values."""
    bad = [f for f in reads if not f.startswith("judge.")]
    if bad:
        raise ValueError(f"judged metric '{name}': reads names judge fields, got '{bad[0]}'")

    def deco(asks: Callable[[Any], Any]) -> Callable[[Any], Any]:
        judging = Judging(name, asks, score, tuple(reads), calibration, order, embeds)

        def compute(view: QuestionView) -> dict[str, float]:
            j = (view.judgments or {}).get(name)
            if j is None:  # not judged: no column
                return {}
            return {f"judge/{name}": score(j) if j.get("status") == "ok" else math.nan}
        compute.__module__ = asks.__module__  # its origin (a plugin's source is keyed)
        compute.judging = judging  # type: ignore[attr-defined]
        metric(name, stages=("judge",), direction=direction, low=low, high=high,
               version=version, description=description)(compute)
        return asks
    return deco


def judged_metrics() -> list[Judging]:
    """Every registered judged metric, in order (then by name)."""
    require_builtins()
    found = (getattr(METRICS.get(n).compute, "judging", None) for n in METRICS.names())
    return sorted((j for j in found if j is not None), key=lambda j: (j.order, j.name))


def judged_names() -> tuple[str, ...]:
    """The names of the registered judged metrics, in order."""
    return tuple(j.name for j in judged_metrics())


def judging_of(name: str) -> Judging | None:
    """A judged metric's declaration by name (`faithfulness`), None when none is registered."""
    return next((j for j in judged_metrics() if j.name == name), None)
