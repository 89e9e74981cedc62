"""The experiment file's analysis sections: how answers and rankings are scored
(`metrics:`), how each variant is tested against the baseline (`stats:`), and what the
report adds (`report:`). Each field's docstring is its entry in docs/experiment-file.md."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import (
    ANSWER_NORMALIZERS,
    CI_METHODS,
    CLUSTER_CHOICES,
    DEFAULT_KEY_METRICS,
    FAMILIES,
    LABEL_MODES,
    NDCG_GAINS,
)
from ablate.flows.plan.spec_base import Section, registered
from ablate.flows.plan.spec_errors import did_you_mean


class MetricsSpec(Section):
    """How answers and rankings are scored (see docs/metrics.md)."""

    ks: tuple[int, ...] = (1, 5, 10)
    """Cut-offs k of the retrieval metrics (`hit_at_k`, `ndcg_at_k`, ...)."""
    gain: Literal[NDCG_GAINS] = "linear"  # type: ignore[valid-type]
    """NDCG gain: `linear` (gain g) or `exponential` (2^g - 1)."""
    label_threshold: float = Field(0.5, gt=0, le=1)
    """A chunk is relevant to an evidence group when it covers at least this fraction of
    the group's best span."""
    labels: Literal[LABEL_MODES] | None = None  # type: ignore[valid-type]
    """Chunk relevance: `span` (covered fraction of the gold span) or `document` (every
    chunk of a relevant document carries its grade); unset: `document` for BEIR, else `span`."""
    correct_f1: float = Field(0.5, gt=0, le=1)
    """An answer counts as correct (`answer/correct`) with exact match or token F1 at least this."""
    correct_by: Literal["auto", "f1"] = "auto"
    """What `answer/correct` (and so the failure buckets, answer risk and the risk-coverage
    table) read: `f1` (EM, or token F1 at least `correct_f1`); `auto` the same, except
    where every reference has more tokens than the answer: there token F1 penalises a
    short right answer and rewards restating the question, and the answer is correct when
    its `answer/content_precision` (its words not in the question that the reference
    holds) reaches `correct_f1`."""
    answer_normalizer: Literal[ANSWER_NORMALIZERS] = "auto"  # type: ignore[valid-type]
    """Answer EM/F1 normalisation: `squad` (English, the SQuAD v2 script), `cmrc` (CMRC
    2018: CJK characters as tokens, Chinese punctuation removed), `auto` (per question:
    `cmrc` when the question or every gold answer is Chinese)."""
    key: tuple[str, ...] = DEFAULT_KEY_METRICS
    """The key metrics: the report's headline table, findings and `ablate gate` default to
    these. Any metric column at the chosen `ks` (docs/metrics.md lists them)."""

    @field_validator("ks")
    @classmethod
    def _ks_ok(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v or any(k < 1 for k in v):
            raise ValueError("ks must be positive integers")
        return tuple(sorted(set(v)))

    @field_validator("key")
    @classmethod
    def _keys_known(cls, v: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """Every key metric is a column some registered metric produces at these ks."""
        from ablate.components.metrics.registry import example_columns
        ks = info.data.get("ks")
        if ks is None:  # ks itself is invalid: that error is reported
            return v
        known = example_columns(ks)
        for k in v:
            if k not in known:
                raise ValueError(f"unknown metric '{k}' at ks {list(ks)}{did_you_mean(k, known)}")
        return v


class StatsSpec(Section):
    """Paired tests of every variant against the baseline (see docs/statistics.md)."""

    test: str = "permutation"
    """The paired test giving the p-value."""
    correction: str = "holm"
    """Multiple-comparison correction of the p-values within a family."""
    alpha: float = Field(0.05, gt=0, lt=1)
    """Significance level, applied to the corrected p-values."""
    resamples: int = Field(10_000, ge=100)
    """Random sign flips of the permutation test when an exact enumeration is too large."""
    bootstrap_resamples: int = Field(10_000, ge=100)
    """Resamples of the cluster bootstrap interval (`ci_method` bca or percentile)."""
    ci_method: Literal[CI_METHODS] = "inversion"  # type: ignore[valid-type]
    """The interval of the mean difference: the inversion of the test itself (default; it
    excludes 0 exactly when the comparison is significant), or the cluster bootstrap
    (bias-corrected and accelerated, percentile), or the cluster-robust t."""
    cluster: Literal[CLUSTER_CHOICES] = "auto"  # type: ignore[valid-type]
    """The unit of analysis: `auto` (questions sharing a document form a cluster: the
    native `cluster` field, else the gold document, else the question), `none` (every
    question independent), or a per-question column (`type`) naming the clusters."""
    family: Literal[FAMILIES] = "per_metric"  # type: ignore[valid-type]
    """The correction family: all variants on one metric (`per_metric`), or every
    variant x metric comparison at once (`all`)."""
    sequential: bool = False
    """Sequential stopping: questions are added `batch` at a time and a variant stops as
    soon as each of its key-metric comparisons is decided (group-sequential, Lan-DeMets
    O'Brien-Fleming alpha spending, Bonferroni over the key comparisons; docs/statistics.md)."""
    batch: int = Field(50, ge=10)
    """Questions added per look of a sequential run."""

    @field_validator("test")
    @classmethod
    def _test_ok(cls, v: str) -> str:
        return registered("statistical test", v)

    @field_validator("correction")
    @classmethod
    def _correction_ok(cls, v: str) -> str:
        from ablate.components.stats.correction import CORRECTIONS, check_method
        try:
            return check_method(v)
        except InputError as exc:
            raise ValueError(exc.message.replace(
                f"'{v}'", f"'{v}'{did_you_mean(v.lower(), CORRECTIONS.names())}", 1)) from None


class ReportSpec(Section):
    """What the report adds (see docs/outputs.md#slices)."""

    slices: tuple[str, ...] = ()
    """Question columns whose values each get the key comparisons on their own questions,
    clustered and tested, corrected in families of their own (per key metric and slice
    column), never changing the main verdicts (slices.parquet): `type` (e.g. yes/no vs
    span questions; HotpotQA's bridge vs comparison), `answerable`, any further column of
    a native questions file (`level`, `hops`, a team's own), or `query_kind`, the
    rule-based tag (exact_match, negation, multi_entity, other) of questions whose file
    has no such column (docs/outputs.md#slices)."""

    @field_validator("slices")
    @classmethod
    def _slices_ok(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(not c.strip() for c in v):
            raise ValueError("a slice column name is empty")
        if len(set(v)) != len(v):
            raise ValueError("slice columns repeat")
        return v
