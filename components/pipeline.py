"""The stage graph of one variant, derived from component declarations (see
docs/pipeline.md and docs/extending.md).

Each stage names the components it runs for a config (chosen by config fields such as
`chunking.method` or `generator.name`); their declarations, folded together with the
components they name in turn (`uses`), give the fields the stage reads, whether it is
model-bound and whether it reads the assembled context. A stage key hashes exactly
those field values, the components' identities, the keys of its inputs and the
experiment-level inputs it names; the stage computes from `project(config, reads)`,
a config in which every other field holds its default. So no field can change a
stage's output without changing its key: a stale cache hit is impossible by
construction. Nothing here branches on a component's name.

A pipeline runs only the stages it needs (`present_stages`): a stage whose components
all declare `produces=False` (the `none` generator of a retrieval-only study) is left
out, and so is every stage that needs it as a required input. The score stage takes the
inputs that remain and runs only the metrics whose `needs` they cover, so a
retrieval-only variant is scored on its candidates, reranked rankings and final context:
the context is assembled under the token budget with or without a generator, so a
chunk-size sweep compares every chunking on the same number of tokens (`final/*`),
where `candidates/*@k` compares k chunks of different sizes.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.registry import Declaration, registry
from ablate.components.runtime.digest import content_digest

_MISSING = object()
# (registry kind, component name, the config field that chose it or None)
Choice = tuple[str, str, "str | None"]


@dataclass(frozen=True)
class StageDef:
    name: str
    version: str  # bump when the stage's own code changes its output
    inputs: tuple[str, ...]  # upstream stages (every part of a per-part stage)
    select: Callable[[PipelineConfig, "str | None"], tuple[Choice, ...]]
    reads: tuple[str, ...] = ()  # fields the stage's own code reads
    experiment: tuple[str, ...] = ()  # experiment-level inputs (data, questions, ...)
    per: str | None = None  # a list field: one node per element (retrieval paths)
    context_input: str | None = None  # input kept only when a component reads the context
    # components chosen by experiment-level inputs (the judge backend), not by the config
    experiment_select: Callable[[dict], tuple[Choice, ...]] | None = None
    # the stage exists only when this experiment-level input is set (e.g. `judge`)
    needs_input: str | None = None
    optional: tuple[str, ...] = ()  # inputs it does without when they are left out


@dataclass(frozen=True)
class Resolved:
    """A stage's components for one config, with everything their declarations imply."""

    components: tuple[Declaration, ...]
    reads: tuple[str, ...]
    settings: tuple[str, ...]
    files: tuple[str, ...]
    model_bound: bool
    reads_context: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.components)

    def first(self, kind: str) -> Declaration:
        return next(d for d in self.components if d.kind == kind)


def field_names(value: Any) -> list[str]:
    """The component names a `uses` field holds: a name, a list of names or a dict's keys."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return sorted(value)
    return sorted(str(v) for v in value)


def own_reads(decl: Declaration, cfg: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The fields one component's own declaration adds to the reads of every stage that
    runs it: its `reads` and its `uses` fields (which name the components it uses); with
    `cfg` (a dumped config), not a `uses` field that names only `neutral` components there."""
    uses = tuple(fld for fld, kind in decl.uses
                 if cfg is None or not _neutral_choice(cfg, fld, kind))
    return tuple(decl.reads) + uses


def _neutral_choice(cfg: dict[str, Any], fld: str, kind: str) -> bool:
    """Whether the `uses` field `fld` of `cfg` names components of `kind`, all `neutral`."""
    names = field_names(get_dotted(cfg, fld))
    reg = registry(kind)
    return bool(names) and all(n in reg and reg.declaration(n).neutral for n in names)


def resolve(cfg: PipelineConfig, choices: Sequence[Choice]) -> Resolved:
    """Fold the declarations of the chosen components and of every component they use."""
    data = cfg.model_dump(mode="json")
    seen: dict[str, Declaration] = {}
    reads: set[str] = set()
    settings: set[str] = set()
    files: set[str] = set()
    todo: list[tuple[str, str]] = []
    for kind, name, chosen_by in choices:
        todo.append((kind, name))
        if chosen_by:
            reads.add(chosen_by)
    while todo:
        kind, name = todo.pop(0)
        decl = registry(kind).declaration(name)
        if decl.identity in seen:
            continue
        seen[decl.identity] = decl
        reads.update(own_reads(decl, data))
        settings.update(decl.settings)
        files.update(decl.files)
        for fld, used_kind in decl.uses:
            todo.extend((used_kind, n) for n in field_names(get_dotted(data, fld)))
    decls = tuple(seen.values())
    return Resolved(decls, tuple(sorted(reads)), tuple(sorted(settings - reads)),
                    tuple(sorted(files)), any(d.model_bound for d in decls),
                    any(d.reads_context for d in decls))


def _set_dotted(data: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def project(cfg: PipelineConfig, fields: Sequence[str]) -> PipelineConfig:
    """`cfg` with every field outside `fields` (and the sections they name) at its default."""
    src = cfg.model_dump(mode="python")
    out = PipelineConfig().model_dump(mode="python")
    for f in fields:
        value = get_dotted(src, f, _MISSING)
        if value is not _MISSING:  # e.g. `options.<name>` of a plugin the spec leaves unset
            _set_dotted(out, f, copy.deepcopy(value))
    return PipelineConfig.model_validate(out)


def read_values(cfg: PipelineConfig, fields: Sequence[str],
                files: Sequence[str] = ()) -> dict[str, Any]:
    """{field: value} of the fields a stage reads, as canonical JSON values, plus the
    sha256 of each file a declared `files` field names (so editing it is a new key)."""
    data = cfg.model_dump(mode="json")
    out = {f: get_dotted(data, f) for f in fields}
    for f in files:
        path = get_dotted(data, f)
        if path:
            out[f"file:{f}"] = content_digest(str(path))
    return out


def contribution(decl: Declaration, cfg: PipelineConfig) -> dict[str, Any]:
    """One component's own share of the key of any stage that runs it under `cfg`: its
    identity and `read_values` of its `own_reads` and declared `files` (settings never
    enter). A stage key hashes the union of the contributions of the components `resolve`
    finds (those they use included) with the stage's own reads."""
    return {"identity": decl.identity,
            "reads": read_values(cfg, own_reads(decl, cfg.model_dump(mode="json")), decl.files)}


def file_fields(cfg: PipelineConfig) -> set[str]:
    """Every declared `files` field of the components this config runs."""
    out: set[str] = set()
    for sd in STAGES:
        for part in stage_parts(sd, cfg):
            out.update(resolve(cfg, sd.select(cfg, part)).files)
    return out


def with_files_from(cfg: PipelineConfig, folder: Path) -> PipelineConfig:
    """`cfg` with every relative path in a declared `files` field taken from `folder` when
    it names something there (a model field may hold a name, such as a bundled model's, or
    a path from the working folder)."""
    data = cfg.model_dump(mode="python")
    changed = False
    for f in sorted(file_fields(cfg)):
        value = get_dotted(data, f)
        if (isinstance(value, str) and value and not Path(value).is_absolute()
                and (folder / value).exists()):
            _set_dotted(data, f, str((folder / value).resolve()))
            changed = True
    return PipelineConfig.model_validate(data) if changed else cfg


def stage_key(stage: StageDef, resolved: Resolved, values: dict[str, Any], inputs: dict[str, Any],
              experiment: dict[str, Any], part: str | None, package_version: str) -> str:
    """Hash of everything a stage's output can depend on (a `neutral` component adds
    nothing: the keys of configs that choose it are those from before its field existed)."""
    blob = json.dumps({
        "stage": stage.name, "code": f"{stage.version}/{package_version}", "part": part,
        "components": sorted(d.identity for d in resolved.components if not d.neutral),
        "reads": values,
        "inputs": inputs, "experiment": {k: experiment[k] for k in stage.experiment},
    }, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


# ---- the stages ---------------------------------------------------------------------------

def _one(kind: str, fld: str) -> Callable[[PipelineConfig, str | None], tuple[Choice, ...]]:
    def select(cfg: PipelineConfig, part: str | None) -> tuple[Choice, ...]:
        return ((kind, str(get_dotted(cfg.model_dump(mode="json"), fld)), fld),)
    return select


def _path(cfg: PipelineConfig, part: str | None) -> tuple[Choice, ...]:
    return (("retrieval path", str(part), None),)


def _fuser(cfg: PipelineConfig, part: str | None) -> tuple[Choice, ...]:
    from ablate.components.retrieval.fusion import fuser_choice
    name, chosen_by = fuser_choice(cfg)
    return (("fuser", name, chosen_by),)


def _none(cfg: PipelineConfig, part: str | None) -> tuple[Choice, ...]:
    return ()


def _metrics(cfg: PipelineConfig, part: str | None) -> tuple[Choice, ...]:
    """Every registered metric whose needed stages this pipeline runs (a judge stage
    counts as present here; judged metrics are dropped at scoring when there is none)."""
    present = set(present_stages(cfg)) | {"judge"}
    reg = registry("metric")
    return tuple(("metric", name, None) for name in reg.names()
                 if reg.get(name).feedable(tuple(present)))


def _judge(experiment: dict) -> tuple[Choice, ...]:
    """The judge backend the experiment's `judge` input names."""
    return (("judge", str(experiment["judge"]["config"]["backend"]), None),)


# the stages that read the question text (a perturbed query is another input for them)
QUERY = ("query.perturbation",)

STAGES: tuple[StageDef, ...] = (
    StageDef("chunk", "1", (), _one("chunker", "chunking.method"),
             experiment=("data", "tokenizer")),
    StageDef("label", "1", ("chunk",), _none, experiment=("questions", "labels")),
    StageDef("retrieve", "1", ("chunk",), _path, reads=QUERY, experiment=("questions",),
             per="retrieval.paths"),
    StageDef("fuse", "1", ("retrieve",), _fuser),
    StageDef("rerank", "1", ("fuse", "chunk"), _one("reranker", "rerank.method"), reads=QUERY,
             experiment=("questions",)),
    StageDef("assemble", "1", ("rerank", "chunk"), _none, reads=("context", "rerank.depth"),
             experiment=("tokenizer",)),
    StageDef("generate", "1", ("assemble",), _one("generator", "generator.name"),
             reads=("generator.repeats",) + QUERY, experiment=("questions",),
             context_input="assemble"),
    # judged metrics: keyed by the judge (config, backend, prompt version and fingerprint),
    # the context and the answers; exists only when the experiment has a `judge:` section.
    # Version 2: every repeat's answer judged (a row per question and repeat); version 1
    # judged repeat 0 only, so its stored results are not reused
    StageDef("judge", "2", ("assemble", "generate"), _none, reads=QUERY,
             experiment=("questions", "judge"),
             experiment_select=_judge, needs_input="judge"),
    # the judge's agreement with a labelled calibration set (one node for the whole sweep)
    StageDef("calibrate", "1", (), _none, experiment=("judge", "calibration"),
             experiment_select=_judge, needs_input="calibration"),
    StageDef("score", "4", ("label", "retrieve", "fuse", "rerank", "assemble", "generate",
                            "judge"),
             _metrics, reads=("rerank.depth", "generator.cost_per_1k_in",
                              "generator.cost_per_1k_out"),
             experiment=("questions", "metrics"), optional=("assemble", "generate", "judge")),
    # "4": the bucket of a wrong answer is answer_wrong (was generation_error; issue 54)
)
STAGE_NAMES = tuple(s.name for s in STAGES)


def stage_parts(sd: StageDef, cfg: PipelineConfig) -> list[str | None]:
    """A stage's parts under `cfg`: one per element of its `per` list field, else [None]."""
    if not sd.per:
        return [None]
    values = get_dotted(cfg.model_dump(mode="json"), sd.per)
    if not isinstance(values, list):
        raise TypeError(f"stage {sd.name}: config field {sd.per} is not a list ({values!r})")
    return [str(p) for p in values]


def present_stages(cfg: PipelineConfig, experiment: dict | None = None) -> tuple[str, ...]:
    """The stages this config's pipeline runs, in order (see the module docstring); a
    stage that needs an experiment-level input (the judge) only when the experiment has it."""
    dropped: set[str] = {sd.name for sd in STAGES if sd.needs_input and (
        experiment is None or experiment.get(sd.needs_input) is None)}
    for sd in STAGES:
        if sd.name == "score" or sd.name in dropped:  # score selects metrics by the stages present
            continue
        decls = [d for part in stage_parts(sd, cfg)
                 for d in resolve(cfg, sd.select(cfg, part)).components]
        if decls and not any(d.produces for d in decls):
            dropped.add(sd.name)
    changed = True
    while changed:
        changed = False
        for sd in STAGES:
            if sd.name in dropped:
                continue
            required = [s for s in sd.inputs if s not in sd.optional]
            if any(s in dropped for s in required):
                dropped.add(sd.name)
                changed = True
    return tuple(s.name for s in STAGES if s.name not in dropped)


def stage_def(name: str) -> StageDef:
    return next(s for s in STAGES if s.name == name)
