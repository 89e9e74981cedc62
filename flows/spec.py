"""Experiment specs: YAML (safe loading only) validated with pydantic.

Every error names the YAML file, the line and the dotted field it is about.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from components.config import PipelineConfig
from components.judge.config import JudgeConfig
from components.errors import InputError
from components.registry import registry
from components.vocab import (ANSWER_NORMALIZERS, CI_METHODS, DEFAULT_KEY_METRICS, FAMILIES,
                              LABEL_MODES, NDCG_GAINS, SPLITS, TIERS)


def _registered(kind: str, name: str) -> str:
    reg = registry(kind)
    if name not in reg:
        raise ValueError(f"unknown {kind} '{name}' (known: {', '.join(reg.names())})")
    return name


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Spec):
    path: str
    format: Literal["auto", "jsonl", "squad", "beir"] = "auto"
    beir_split: str = "test"


class MetricsSpec(_Spec):
    ks: tuple[int, ...] = (1, 5, 10)
    gain: Literal[NDCG_GAINS] = "linear"  # type: ignore[valid-type]
    label_threshold: float = Field(0.5, gt=0, le=1)
    # chunk relevance: "span" (covered fraction of the gold span) or "document" (every chunk
    # of a relevant document carries its grade); default: document for BEIR, else span
    labels: Literal[LABEL_MODES] | None = None  # type: ignore[valid-type]
    correct_f1: float = Field(0.5, gt=0, le=1)
    # answer EM/F1 normalisation: squad (English), cmrc (CMRC 2018: CJK characters as
    # tokens), auto (per question: cmrc when the question or every gold answer is Chinese)
    answer_normalizer: Literal[ANSWER_NORMALIZERS] = "auto"  # type: ignore[valid-type]
    key: tuple[str, ...] = DEFAULT_KEY_METRICS

    @field_validator("ks")
    @classmethod
    def _ks_ok(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v or any(k < 1 for k in v):
            raise ValueError("ks must be positive integers")
        return tuple(sorted(set(v)))

    @model_validator(mode="after")
    def _keys_known(self) -> "MetricsSpec":
        """Every key metric is a column some registered metric produces at these ks."""
        from components.metrics.registry import example_columns
        known = example_columns(self.ks)
        for k in self.key:
            if k not in known:
                near = difflib.get_close_matches(k, known, n=1)
                hint = f"; did you mean {near[0]}?" if near else ""
                raise ValueError(f"unknown metric '{k}' at ks {list(self.ks)}{hint}")
        return self


class StatsSpec(_Spec):
    test: str = "permutation"  # a registered statistical test
    correction: str = "holm"  # a registered correction
    alpha: float = Field(0.05, gt=0, lt=1)
    resamples: int = Field(10_000, ge=100)
    bootstrap_resamples: int = Field(10_000, ge=100)
    ci_method: Literal[CI_METHODS] = "bca"  # type: ignore[valid-type]
    family: Literal[FAMILIES] = "per_metric"  # type: ignore[valid-type]

    @field_validator("test")
    @classmethod
    def _test_ok(cls, v: str) -> str:
        return _registered("statistical test", v)

    @field_validator("correction")
    @classmethod
    def _correction_ok(cls, v: str) -> str:
        from components.stats.correction import check_method
        try:
            return check_method(v)
        except InputError as exc:
            raise ValueError(exc.message) from None


class SweepSpec(_Spec):
    variable: str
    values: list[Any] = Field(min_length=1)


class VariantSpec(_Spec):
    name: str = Field(min_length=1)
    set: dict[str, Any] = Field(min_length=1)


class RunnerSpec(_Spec):
    kind: Literal["threads", "dask"] = "threads"
    workers: int = Field(2, ge=1, le=64)
    address: str | None = None  # dask scheduler address; None = local cluster


class ExperimentSpec(_Spec):
    name: str = Field(min_length=1)
    description: str = ""
    plugins: list[str] = Field(default_factory=list)  # modules or .py files registering components
    dataset: DatasetSpec
    tier: Literal[TIERS] = "smoke"  # type: ignore[valid-type]
    split: Literal[SPLITS] = "dev"  # type: ignore[valid-type]
    smoke_size: int = Field(50, ge=2)
    regression_size: int = Field(500, ge=2)
    seed: int = 0
    metrics: MetricsSpec = MetricsSpec()
    stats: StatsSpec = StatsSpec()
    baseline: PipelineConfig = PipelineConfig()
    sweeps: list[SweepSpec] = Field(default_factory=list)
    variants: list[VariantSpec] = Field(default_factory=list)
    runner: RunnerSpec = RunnerSpec()
    # the judge of the judged metrics (experiment-level: every variant has the same judge)
    judge: JudgeConfig | None = None
    out: str = "runs"
    cache_dir: str = ".ablate/cache"


class LoadedSpec(BaseModel):
    """A validated spec plus what is needed to point errors at YAML lines."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    spec: ExperimentSpec
    path: Path
    node: Any  # the yaml node tree

    def line_of(self, loc: tuple[Any, ...]) -> int | None:
        return line_of(self.node, loc)

    def error(self, message: str, loc: tuple[Any, ...]) -> InputError:
        return InputError(message, path=str(self.path), line=self.line_of(loc),
                          field=".".join(str(p) for p in loc))

    def resolve(self, relative: str) -> Path:
        """A path from the spec, relative to the spec file's folder."""
        p = Path(relative)
        return p if p.is_absolute() else (self.path.parent / p)


def line_of(node: Any, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the deepest YAML node on the path `loc` (key lines for mappings)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(part):
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def read_yaml(path: Path) -> tuple[Any, Any]:
    """(data, node tree) of a YAML file, safe loading only (no tags, no code)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        _reject_duplicate_keys(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise InputError(f"invalid YAML: {exc.problem or exc}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", path=str(path)) from None
    finally:
        loader.dispose()
    return data, node


def _reject_duplicate_keys(node: Any, path: Path) -> None:
    """YAML lets a repeated key silently override the first; in an experiment file that
    hides a mistake, so it is an error naming the second occurrence."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in n.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        raise InputError("duplicate key", path=str(path),
                                         line=key.start_mark.line + 1, field=key.value)
                    seen.add(key.value)
                stack.append(value)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


def _load_plugins(refs: Any, path: Path, node: Any) -> None:
    """Installed (entry-point) plugins, then the spec's own, before anything is validated
    against the registries."""
    from components.plugins import load_entry_points, load_plugins
    load_entry_points()
    if refs is None:
        return
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise InputError("plugins must be a list of module names or .py paths", path=str(path),
                         line=line_of(node, ("plugins",)), field="plugins")
    for i, ref in enumerate(refs):
        try:
            load_plugins([ref], path.parent)
        except InputError as exc:
            raise InputError(exc.message, path=str(path), line=line_of(node, ("plugins", i)),
                             field=f"plugins.{i}") from None


def load_spec(path: str | Path) -> LoadedSpec:
    """Read and validate an experiment file; raise InputError naming file, line and field."""
    path = Path(path)
    data, node = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError("an experiment file must be a YAML mapping", path=str(path), line=1)
    _load_plugins(data.get("plugins"), path, node)
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "missing":
            msg = "required field is missing"
        raise InputError(msg, path=str(path), line=line_of(node, loc),
                         field=".".join(str(p) for p in loc)) from None
    return LoadedSpec(spec=spec, path=path, node=node)
