"""The metric registry, in the spirit of ir_measures: a metric is a small value with a
canonical name, parameters and a direction, looked up here; scoring, the report, the
gate and MLflow never special-case a metric.

A registered metric declares the stages (column prefixes) it is measured at, whether it
takes a cut-off `@k` (the experiment's `metrics.ks`), its direction (`higher` or `lower`
is better, or `none` for figures that are neither, such as the refusal rate), its range
and code version (part of the score stage's key), and a `compute(view)` function that
returns its columns for one question. Column names: `{stage}/{name}` or
`{stage}/{name}_at_{k}` (e.g. `final/ndcg_at_10`, `answer/f1`).

A metric also names, per column stage, the pipeline stages whose output it reads
(`needs`; by default `NEEDS` below): the score stage of a pipeline that leaves a stage
out (a retrieval-only study has no generate stage) runs only the metrics it can feed
and keeps only their columns it can feed, so `answer/f1` is absent there rather than
scored on nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.contract.registry import Registry, require_builtins

Direction = Literal["higher", "lower", "none"]
DIRECTIONS: tuple[str, ...] = ("higher", "lower", "none")


@dataclass(frozen=True)
class PathView:
    """One retrieval path's output for one question, as its retrieve stage stored it."""

    chunk_ids: tuple[str, ...]  # its ranking, best first
    # an approximate index's: the chunk ids the exact (flat) search over the same vectors
    # returned; None for an exact index (or a result stored before this was recorded)
    exact_ids: tuple[str, ...] | None = None
    build_s: float = math.nan  # seconds to build the path's index (offline; the stage's)
    search_s: float = math.nan  # seconds of searching the index per question


@dataclass
class QuestionView:
    """Everything a metric may read about one question of one variant."""

    question: Question
    groups: list[dict[str, float]]  # per evidence group: chunk id -> covered fraction
    rankings: dict[str, list[str]]  # 'candidates' / 'reranked' / 'final' -> chunk ids
    context: PackedContext | None  # the assembled context (None when none was built)
    generator_context: PackedContext | None  # what the generator read (None: closed book)
    answer: Answer | None  # None when the pipeline has no generate stage (retrieval only)
    params: Mapping[str, Any]  # ks, gain, label_threshold, correct_f1, pricing (metrics.cost)
    latency: Mapping[str, float] = field(default_factory=dict)  # stage -> seconds
    memo: dict[str, Any] = field(default_factory=dict)
    # the judge stage's judgments of this question (judged metric -> judgment), or None
    # when the experiment has no judge
    judgments: Mapping[str, Any] | None = None
    # retrieval path -> its own output for this question (before fusion)
    paths: Mapping[str, PathView] = field(default_factory=dict)
    # what the run recorded of this question's online work, for the cost metrics
    # (ablate.components.metrics.cost.USAGE: embed_tokens, vector_searches, rerank_calls,
    # judge_in, judge_out)
    usage: Mapping[str, float] = field(default_factory=dict)

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """A value shared by several metrics of this question, computed once."""
        if name not in self.memo:
            self.memo[name] = make()
        return self.memo[name]


Compute = Callable[[QuestionView], Mapping[str, float]]

# Pipeline stages (ablate.components.pipeline.STAGES) whose output each column stage reads; a
# column stage not listed here (a plugin's own) needs every stage a pipeline may leave out.
NEEDS: dict[str, tuple[str, ...]] = {
    "candidates": (), "reranked": (), "latency": (),
    "final": ("assemble",),
    "answer": ("generate",), "refusal": ("generate",), "tokens": ("generate",),
    "cost": ("generate",), "judge": ("judge",),
}
OPTIONAL_STAGES = ("assemble", "generate")
# The pipeline stage whose output each column stage is measured on: the column can change
# only when that stage (or one upstream of it) computes something else, or when a field
# the metric itself `reads` in the score stage differs (see ablate.components.report.relevance).
SOURCES: dict[str, tuple[str, ...]] = {
    "candidates": ("label", "fuse"), "reranked": ("label", "rerank"),
    "final": ("label", "assemble"), "answer": ("generate",), "refusal": ("generate",),
    "tokens": ("generate",), "cost": ("generate", "judge"), "judge": ("judge",),
    "robustness": ("generate",), "citation": ("label", "generate"),
    "dense": ("retrieve",),
}


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
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (column stage, pipeline stages read)
    reads: tuple[str, ...] = ()  # config fields the score stage reads for it (prices)
    # defined against the baseline's output (its baseline value is fixed by definition): no
    # paired test against the baseline (see compared())
    relative: bool = False
    # seconds that vary run to run (latency, index build): written to timings.parquet and
    # MLflow, never to per_query.parquet or the statistics (see is_timing())
    timing: bool = False

    def feedable(self, available: Sequence[str]) -> tuple[str, ...]:
        """Its column stages whose needed pipeline stages are all among `available`."""
        have = set(available)
        needs = dict(self.needs)
        return tuple(s for s in self.stages if set(needs.get(s, OPTIONAL_STAGES)) <= have)

    def columns(self, ks: Sequence[int]) -> list[str]:
        if self.name == "*":
            return []
        return [column(s, self.name, k) for s in self.stages for k in (ks if self.at_k else (None,))]


def column(stage: str, name: str, k: int | None = None) -> str:
    return f"{stage}/{name}" + (f"_at_{k}" if k is not None else "")


METRICS: Registry[Metric] = Registry("metric", config_field="metrics.key")


def metric(name: str, *, stages: Sequence[str], direction: Direction, low: float = 0.0,
           high: float = 1.0, at_k: bool = False, version: str = "1",
           description: str = "", needs: Mapping[str, Sequence[str]] | None = None,
           reads: Sequence[str] = (), relative: bool = False,
           timing: bool = False) -> Callable[[Compute], Compute]:
    """Decorator registering `compute` as a metric (a plugin uses it the same way).

    The registered name is `{stages[0]}/{name}` for a single-stage metric, else `name`;
    `name` may be `*` for a family whose columns are named at run time (latency).
    `needs`: per column stage, the pipeline stages whose output it reads (default: NEEDS;
    a column stage not there needs every stage a pipeline may leave out).
    `reads`: config fields the score stage reads to compute it (a price), so a sweep of
    such a field is known to change it although no pipeline stage's output changes.
    `relative`: its value is defined against the baseline's output, so the baseline's own
    value is fixed by definition (answer consistency: 1) and a paired test of a variant
    against the baseline has no valid null; the statistics leave it out (compared()).
    `timing`: its columns are seconds that vary run to run (timings.parquet, is_timing())."""
    if direction not in DIRECTIONS:
        raise ValueError(f"metric '{name}': direction must be one of {DIRECTIONS}")

    def deco(fn: Compute) -> Compute:
        reg_name = name if len(stages) > 1 else f"{stages[0]}/{name}"
        given = dict(needs or {})
        needed = tuple((s, tuple(given.get(s, NEEDS.get(s, OPTIONAL_STAGES)))) for s in stages)
        value = Metric(name, tuple(stages), at_k, direction, float(low), float(high), fn,
                       description or (fn.__doc__ or "").strip().split("\n")[0], needed,
                       tuple(reads), relative, timing)
        METRICS.register(reg_name, version=version, origin=fn.__module__)(value)
        return fn
    return deco


_AT_K = re.compile(r"^(?P<name>.+)_at_(?P<k>\d+)$")


def lookup(col: str) -> tuple[Metric, int | None]:
    """The metric behind a column name, and its cut-off (InputError when unknown)."""
    require_builtins()
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


def depends_on(col: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(pipeline stages whose output a column is measured on, config fields its metric
    reads); a latency column names its own stage label, `:` written `_`
    (`latency/retrieve_bm25` is `retrieve:bm25`); None for an unknown column or a
    plugin's own column stage (then any change may change it)."""
    stage, _, rest = col.partition("/")
    if stage == "latency":
        return ((rest,), ())
    try:
        m = lookup(col)[0]
    except InputError:
        return None
    return (SOURCES[stage], m.reads) if stage in SOURCES else None


def compared(col: str) -> bool:
    """Whether the statistics compare a metric column with the baseline (paired test, CI,
    MDE): every column but a `relative` metric's (and a plugin's unknown column is compared)."""
    try:
        return not lookup(col)[0].relative
    except InputError:
        return True


def is_timing(col: str) -> bool:
    """Whether a column is a `timing` metric's (latency/, index/): timings.parquet's."""
    try:
        return lookup(col)[0].timing
    except InputError:
        return False


def is_metric(col: str) -> bool:
    try:
        lookup(col)
        return True
    except InputError:
        return False


# Directions a sweep recorded in its manifest (`metric_directions`), for metrics whose
# plugin is not loaded in this process (`ablate report`, `gate`, `stats` on a sweep folder).
_RECORDED: dict[str, Direction] = {}


def remember_directions(recorded: dict[str, str]) -> None:
    """Take a sweep's recorded metric directions (ablate.components.report.sweep_data.load_sweep)."""
    _RECORDED.update({c: d for c, d in recorded.items() if d in DIRECTIONS})  # type: ignore[misc]


def metric_directions(columns: Sequence[str]) -> dict[str, Direction]:
    """{column: direction} of the metric columns among `columns` (a sweep's manifest)."""
    return {c: direction(c) for c in columns if is_metric(c)}


def direction(col: str) -> Direction:
    """'higher', 'lower' or 'none' for a metric column: the registry's, else the one a
    loaded sweep recorded for it (a plugin's metric), else 'higher'."""
    try:
        return lookup(col)[0].direction
    except InputError:
        return _RECORDED.get(col, "higher")


def example_columns(ks: Sequence[int] = (1, 5, 10)) -> list[str]:
    """Every column the registered metrics produce at these cut-offs."""
    require_builtins()
    out: list[str] = []
    for name in METRICS.names():
        out.extend(METRICS.get(name).columns(ks))
    return out


def score_question(view: QuestionView, names: Sequence[str] | None = None,
                   available: Sequence[str] | None = None) -> dict[str, float]:
    """The columns of the named metrics (default: every registered one) for one
    question (NaN where undefined); with `available` (the pipeline stages whose output
    the view holds), only the columns of stages those feed."""
    require_builtins()
    row: dict[str, float] = {}
    for name in (METRICS.names() if names is None else names):
        m = METRICS.get(name)
        keep = set(m.stages if available is None else m.feedable(available))
        if not keep:  # no column of it survives: not computed (its inputs may be missing)
            continue
        for col, value in m.compute(view).items():
            if col.partition("/")[0] in keep:
                row[col] = math.nan if value is None else float(value)
    return row
