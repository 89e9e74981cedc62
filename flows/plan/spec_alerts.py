"""The experiment file's `alerts:` section: rules read after every scheduled run of the
experiment, over the series of its runs (the statistics: components/stats/alert_rules.py
and components/stats/monitor.py; docs/statistics.md#alerts-over-many-runs). Each field's
docstring is its entry in docs/experiment-file.md."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from ablate.components.contract.config import SettingError
from ablate.flows.plan.spec_base import Section
from ablate.flows.plan.spec_errors import did_you_mean

KINDS = ("below", "declines", "gate", "drop")
# the fields only some kinds read (a field set on another kind is an error)
ONLY = {"alpha": ("below", "drop"), "anytime": ("drop",), "reference": ("drop",),
        "questions": ("drop",)}


class AlertRule(Section):
    """One alert rule: exactly one of `below`, `declines`, `gate` or `drop`, with the key
    metric it watches (`metric`; none for `gate`). A rule that fires is an alert (or,
    `below` only, a warning)."""

    metric: str | None = None
    """The metric column the rule watches (any metric column at the chosen `metrics.ks`,
    as for `metrics.key`); not set on a `gate` rule."""
    below: float | None = None
    """Threshold: alert when the latest run's interval (its upper bound) is below this
    value, warn when only its mean is. Each run is one test at `alpha`: looked at every
    night, false alarms add up (use `drop` for an anytime guarantee)."""
    declines: int | None = Field(None, ge=1)
    """Alert when the metric's mean fell from run to run this many times in a row."""
    gate: bool | None = None
    """`gate: true`: alert when the latest run's gate (`ablate gate`) failed."""
    drop: float | None = Field(None, ge=0)
    """The margin of the drop rule: alert when the series of runs shows the metric below
    `reference` minus this margin (in the metric's units)."""
    anytime: bool = True
    """Drop rules: `true` (default) tests the whole series with an e-process, so the
    probability of ever raising a false alarm stays at most `alpha` however many runs are
    looked at; `false` tests the latest run alone at `alpha` (its false alarms add up
    over nights)."""
    alpha: float = Field(0.05, gt=0, lt=1)
    """`below`: the interval is the two-sided 1 - alpha one (unless the run recorded its
    own); `drop`: the false-alarm probability the rule keeps."""
    reference: float | None = None
    """Drop rules: the level a drop is measured from; unset: the first run's mean (its own
    error then counts as part of the drop: choose a margin that covers it)."""
    questions: Literal["shared", "fresh"] = "shared"
    """Drop rules: how the runs' errors depend on each other. `shared` (default): runs
    over mostly the same questions; valid under any dependence, an alarm needs a drop of
    ~4 to 5 standard errors past the margin in a run or two. `fresh`: every run draws
    new questions (conditionally independent errors); evidence adds up over runs, so a
    drop of one standard error is found in tens of runs. `fresh` on shared questions
    does not keep `alpha`."""

    @property
    def kind(self) -> str:
        """Which of KINDS this rule is."""
        return next(k for k in KINDS if getattr(self, k) is not None)

    @model_validator(mode="after")
    def _one_kind(self) -> "AlertRule":
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"an alert rule sets exactly one of {', '.join(KINDS)} "
                             f"(this one: {', '.join(kinds) or 'none'})")
        kind = kinds[0]
        if kind == "gate":
            if self.gate is not True:
                raise SettingError("a gate rule is `gate: true` (delete the rule to have none)",
                                   "gate")
            if self.metric is not None:
                raise SettingError("a gate rule reads the gate's verdict: no metric", "metric")
        elif self.metric is None:
            raise SettingError(f"a {kind} rule needs a metric", "metric")
        for name, kinds_ok in ONLY.items():
            if name in self.model_fields_set and kind not in kinds_ok:
                raise SettingError(f"only a {' or '.join(kinds_ok)} rule reads `{name}` "
                                   f"(this is a {kind} rule)", name)
        return self


def _error(message: str, loc: tuple[Any, ...], value: Any) -> ValidationError:
    return ValidationError.from_exception_data("AlertRule", [InitErrorDetails(
        type=PydanticCustomError("value_error", "{message}", {"message": message}),
        loc=loc, input=value)])


def check_alerts(rules: list[AlertRule], ks: tuple[int, ...] | None) -> list[AlertRule]:
    """Every rule's metric is a metric column at these ks, and no rule repeats another
    (errors at `alerts.<i>.metric`, `alerts.<i>`)."""
    if ks is not None:  # ks itself invalid: that error is reported
        from ablate.components.metrics.registry import example_columns
        known = example_columns(ks)
        for i, rule in enumerate(rules):
            if rule.metric is not None and rule.metric not in known:
                raise _error(f"unknown metric '{rule.metric}' at ks {list(ks)}"
                             f"{did_you_mean(rule.metric, known)}", (i, "metric"), rule.metric)
    seen: dict[AlertRule, int] = {}
    for i, rule in enumerate(rules):
        if rule in seen:
            raise _error(f"the same rule as alerts.{seen[rule]}", (i,), None)
        seen[rule] = i
    return rules
