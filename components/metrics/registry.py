"""The metric registry, in the spirit of ir_measures: a metric is a small value with a
canonical name, parameters and a direction, looked up here; scoring, the report, the
gate and MLflow never special-case a metric.

A registered metric declares the stages (column prefixes) it is measured at, whether it
takes a cut-off `@k` (the experiment's `metrics.ks`), its direction (`higher` or `lower`
is better, or `none` for figures that are neither, such as the refusal rate), its range
and code version (part of the score stage's key), and a `compute(view)` function that
returns its columns for one question. Column names: `{stage}/{name}` or
`{stage}/{name}_at_{k}` (e.g. `final/ndcg_at_10`, `answer/f1`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from components.errors import InputError
from components.records import Answer, PackedContext, Question
from components.registry import Registry

Direction = Literal["higher", "lower", "none"]
DIRECTIONS: tuple[str, ...] = ("higher", "lower", "none")


@dataclass
class QuestionView:
    """Everything a metric may read about one question of one variant."""

    question: Question
    groups: list[dict[str, float]]  # per evidence group: chunk id -> covered fraction
    rankings: dict[str, list[str]]  # 'candidates' / 'reranked' / 'final' -> chunk ids
    context: PackedContext | None  # the assembled context (None when none was built)
    generator_context: PackedContext | None  # what the generator read (None: closed book)
    answer: Answer
    params: Mapping[str, Any]  # ks, gain, label_threshold, correct_f1, pricing
    latency: Mapping[str, float] = field(default_factory=dict)  # stage -> seconds
    memo: dict[str, Any] = field(default_factory=dict)
    # the judge stage's judgments of this question (judged metric -> judgment), or None
    # when the experiment has no judge
    judgments: Mapping[str, Any] | None = None

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """A value shared by several metrics of this question, computed once."""
        if name not in self.memo:
            self.memo[name] = make()
        return self.memo[name]


Compute = Callable[[QuestionView], Mapping[str, float]]


@dataclass(frozen=True)
class Metric:
    name: str
    stages: tuple[str, ...]
    at_k: bool
    direction: Direction
    low: float
    high: float
    compute: Compute
    description: str = ""
    needs: tuple[str, ...] = ()  # QuestionView fields it reads that an experiment may lack

    def applies(self, view: "QuestionView") -> bool:
        """False when a field it needs is absent (e.g. no judge): it then gives no columns."""
        return all(getattr(view, n) is not None for n in self.needs)

    def columns(self, ks: Sequence[int]) -> list[str]:
        if self.name == "*":
            return []
        return [column(s, self.name, k) for s in self.stages for k in (ks if self.at_k else (None,))]


def column(stage: str, name: str, k: int | None = None) -> str:
    return f"{stage}/{name}" + (f"_at_{k}" if k is not None else "")


METRICS: Registry[Metric] = Registry("metric", config_field="metrics.key")


def metric(name: str, *, stages: Sequence[str], direction: Direction, low: float = 0.0,
           high: float = 1.0, at_k: bool = False, version: str = "1",
           description: str = "", needs: Sequence[str] = ()) -> Callable[[Compute], Compute]:
    """Decorator registering `compute` as a metric (a plugin uses it the same way).

    The registered name is `{stages[0]}/{name}` for a single-stage metric, else `name`;
    `name` may be `*` for a family whose columns are named at run time (latency).
    `needs` names QuestionView fields that some experiments do not have (`judgments`):
    where one is None the metric is skipped, so it adds no column at all."""
    if direction not in DIRECTIONS:
        raise ValueError(f"metric '{name}': direction must be one of {DIRECTIONS}")

    def deco(fn: Compute) -> Compute:
        reg_name = name if len(stages) > 1 else f"{stages[0]}/{name}"
        value = Metric(name, tuple(stages), at_k, direction, float(low), float(high), fn,
                       description or (fn.__doc__ or "").strip().split("\n")[0], tuple(needs))
        METRICS.register(reg_name, version=version, origin=fn.__module__)(value)
        return fn
    return deco


_AT_K = re.compile(r"^(?P<name>.+)_at_(?P<k>\d+)$")


def lookup(col: str) -> tuple[Metric, int | None]:
    """The metric behind a column name, and its cut-off (InputError when unknown)."""
    import components.builtins  # noqa: F401  (the built-in metrics register on import)
    stage, _, rest = col.partition("/")
    m = _AT_K.match(rest)
    candidates = [(rest, None)] + ([(m["name"], int(m["k"]))] if m else [])
    for value in (METRICS.get(n) for n in METRICS.names()):
        if stage not in value.stages:
            continue
        if value.name == "*":
            return value, None
        for name, k in candidates:
            if value.name == name and value.at_k == (k is not None):
                return value, k
    raise InputError(f"unknown metric '{col}' (e.g. {', '.join(example_columns()[:4])})",
                     field="metric")


def is_metric(col: str) -> bool:
    try:
        lookup(col)
        return True
    except InputError:
        return False


def direction(col: str) -> Direction:
    """'higher', 'lower' or 'none' for a metric column (unknown columns: 'higher')."""
    try:
        return lookup(col)[0].direction
    except InputError:
        return "higher"


def example_columns(ks: Sequence[int] = (1, 5, 10)) -> list[str]:
    """Every column the registered metrics produce at these cut-offs."""
    import components.builtins  # noqa: F401
    out: list[str] = []
    for name in METRICS.names():
        out.extend(METRICS.get(name).columns(ks))
    return out


def score_question(view: QuestionView) -> dict[str, float]:
    """Every applicable registered metric's columns for one question (NaN where undefined)."""
    import components.builtins  # noqa: F401
    row: dict[str, float] = {}
    for name in METRICS.names():
        m = METRICS.get(name)
        if not m.applies(view):
            continue
        for col, value in m.compute(view).items():
            row[col] = math.nan if value is None else float(value)
    return row
