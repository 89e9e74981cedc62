"""The planned sweep: the spec validated, the data set loaded, the questions selected, the
variants expanded and checked, their stage graph keyed, the judge's files read; all of it
before any compute, frozen (PlannedSweep). The run context (flows/run/context.py) executes
it: the result store, the models, the timings and locks are the run's, not the plan's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Dataset, Question
from ablate.components.contract.vocab import BASELINE
from ablate.components.data import load_dataset
from ablate.components.data.clusters import cluster_labels
from ablate.components.data.selection import Selected, read_ids, sample, select
from ablate.components.judge.backends import make_judge
from ablate.components.judge.keys import key_input
from ablate.components.judge.labels import read_labels
from ablate.components.judge.prompts import PromptSet, load_prompts
from ablate.components.pipeline import with_files_from
from ablate.components.retrieval.lexical.analyzers_zh import choose_analyzer
from ablate.components.text.tokenizer import TOKENIZER_NAME
from ablate.flows.plan.generator_fields import check_generator_fields
from ablate.flows.plan.graph import Plan, build_plan
from ablate.flows.plan.preflight import check_experiment_components, check_shards, check_variants
from ablate.flows.plan.slice_check import check_slice_columns
from ablate.flows.plan.spec_load import LoadedSpec, load_spec
from ablate.flows.plan.variant import Variant
from ablate.flows.plan.variants import expand

AUTO = "auto"


def resolve_auto_analyzer(cfg: PipelineConfig, name: str) -> PipelineConfig:
    """`cfg` with analyzer `auto` replaced by the analyzer chosen for this corpus."""
    if cfg.retrieval.analyzer != AUTO or name == AUTO:
        return cfg
    return cfg.model_copy(update={"retrieval": cfg.retrieval.model_copy(update={"analyzer": name})})


def file_fingerprint(path: Path | None) -> str | None:
    """sha256 (24 hex digits) of a file's bytes; None for no file."""
    if path is None:
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:24]


def questions_fingerprint(questions: tuple[Question, ...]) -> str:
    h = hashlib.sha256()
    for q in questions:
        h.update(json.dumps([q.qid, q.question, list(q.answers), q.answerable,
                             [[[s.doc_id, s.start, s.end, s.grade] for s in g] for g in q.evidence]],
                            separators=(",", ":")).encode())
    return h.hexdigest()[:24]


@dataclass(frozen=True)
class RunOptions:
    """What the command line may change about a spec (part of the sweep's identity)."""

    tier: str | None = None
    split: str | None = None
    cache_dir: str | None = None
    # a sequential run's look: each variant's questions so far (the first n of its sample)
    sizes: tuple[tuple[str, int], ...] | None = None


@dataclass(frozen=True)
class PlannedSweep:
    """Everything decided before any compute: the spec, the data set, the selected
    questions (each variant's own, when a sweep samples its own), the variants and their
    stage graph, the judge's prompts and labels. Frozen: the run (flows/run/context.py)
    only executes it."""

    loaded: LoadedSpec
    options: RunOptions
    dataset: Dataset
    questions: tuple[Question, ...]
    questions_fp: str
    variants: list[Variant]
    plan: Plan
    tier: str
    split: str
    analyzer_choice: dict[str, str] | None = None  # what `auto` resolved to, and why
    selection: tuple[tuple[str, int], ...] = ()  # (step, questions after it)
    # questions by fingerprint (the union under `questions_fp`); a variant of a sweep with
    # its own sample -> its questions' fingerprint (absent: the union)
    question_sets: dict[str, tuple[Question, ...]] = field(default_factory=dict)
    variant_questions: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # one line each, printed by the CLI
    judge_prompts: PromptSet | None = None  # the judge's prompt version, when there is a judge
    calibration_path: Path | None = None  # the judge's calibration set, when given
    labels: pl.DataFrame | None = None  # judge.labels: verdicts for judge-corrected estimates
    labels_path: Path | None = None

    @property
    def spec(self):
        return self.loaded.spec

    def questions_of(self, variant: str) -> tuple[Question, ...]:
        """The questions `variant` is run and compared on."""
        fp = self.variant_questions.get(variant)
        return self.question_sets[fp] if fp else self.questions

    def experiment_inputs(self) -> dict[str, Any]:
        """The experiment-level inputs that stage keys may name (pipeline.StageDef.experiment)."""
        return {"data": self.dataset.fingerprint, "questions": self.questions_fp,
                "tokenizer": TOKENIZER_NAME, "metrics": self.metrics_params(),
                "labels": self.label_mode, "judge": self.judge_input(),
                "calibration": file_fingerprint(self.calibration_path)}

    def judge_input(self) -> dict[str, Any] | None:
        """What a judge stage key records of the judge, from the declarations of its
        backend and judged metrics, and its prompts' content hash
        (ablate.components.judge.keys); None without a judge."""
        judge = self.spec.judge
        if judge is None or self.judge_prompts is None:
            return None
        return key_input(judge, self.judge_prompts.fingerprint)

    @property
    def label_mode(self) -> str:
        """metrics.labels, else `document` for BEIR and TREC (document-level qrels), else `span`."""
        given = self.spec.metrics.labels
        return given or ("document" if self.dataset.source.startswith(("beir:", "trec:"))
                         else "span")

    def metrics_params(self) -> dict[str, Any]:
        m = self.spec.metrics
        # a TREC collection also gets trec_eval's measures (components/metrics/trec.py)
        trec = {"trec": True} if self.dataset.source.startswith("trec:") else {}
        # the prices (costs:) change the score stage's cost/* columns only: in its key
        # when one is set, so an experiment without prices keeps every key
        costs = {"costs": self.spec.costs.prices()} if self.spec.costs.any() else {}
        return {"ks": list(m.ks), "gain": m.gain, "label_threshold": m.label_threshold,
                "correct_f1": m.correct_f1, "correct_by": m.correct_by,
                "answer_normalizer": m.answer_normalizer, **trec, **costs}




def plan_sweep(spec_path: str | Path, options: RunOptions) -> PlannedSweep:
    """Validate everything that can be validated before any compute, and plan the sweep."""
    loaded = load_spec(spec_path)
    spec = loaded.spec
    notices: list[str] = []
    if spec.stats.sequential and spec.design is not None:
        raise loaded.error("stats.sequential cannot be combined with a factorial design "
                           "(every cell must run on the same questions)", ("stats", "sequential"))
    folder = loaded.path.parent.resolve()
    data: list[Dataset] = []
    analyzer_choice: dict[str, str] | None = None

    def adjust(cfg: PipelineConfig) -> PipelineConfig:
        """Paths relative to the experiment file, and analyzer `auto` resolved for this
        corpus (which loads the data set the first time a config needs it)."""
        nonlocal analyzer_choice
        if cfg.retrieval.analyzer == AUTO and analyzer_choice is None:
            data.append(data[0] if data else load_data(loaded))
            name, reason = choose_analyzer([d.text for d in data[0].documents])
            analyzer_choice = {"analyzer": name, "reason": reason}
        chosen_name = analyzer_choice["analyzer"] if analyzer_choice else AUTO
        cfg = resolve_auto_analyzer(cfg, chosen_name)
        try:
            return with_files_from(cfg, folder)
        except InputError:  # a component name no registry knows: check_variants says
            return cfg      # which, at its line in the experiment file

    variants = expand(loaded, notices, adjust)  # once: every check runs on the final configs
    check_variants(loaded, variants)
    check_experiment_components(loaded)
    check_generator_fields(loaded, variants, notices)
    dataset = data[0] if data else load_data(loaded)
    check_shards(loaded, len(dataset.documents))
    check_slice_columns(loaded, dataset.questions)
    tier = options.tier or spec.tier
    split = options.split or spec.split
    ids = None
    if spec.questions.ids_file is not None:
        ids_path = loaded.resolve(spec.questions.ids_file)
        if not ids_path.is_file():
            raise loaded.error(f"no such file: {ids_path}", ("questions", "ids_file"))
        ids = read_ids(ids_path)
    chosen = select(dataset.questions, split=split, split_share=spec.split_share, tier=tier,
                    seed=spec.seed, smoke_size=spec.smoke_size,
                    regression_size=spec.regression_size, ids=ids,
                    answerable_only=spec.questions.answerable_only,
                    max_questions=spec.questions.max)
    samples = variant_samples(variants, chosen, spec, options)
    questions = union_of(chosen.pool, samples.values()) if samples else chosen.questions
    if not questions:
        steps = ", ".join(f"{name}: {n}" for name, n in chosen.steps)
        where = ("questions",) if "questions" in spec.model_fields_set else ("dataset", "path")
        raise loaded.error(f"no questions to run ({steps})", where)
    check_clusters(loaded, questions)
    qfp = questions_fingerprint(questions)
    question_sets = {qfp: questions}
    variant_questions: dict[str, str] = {}
    for v in variants:
        own = samples.get(v.name)
        if own is not None and own != questions:
            fp = questions_fingerprint(own)
            question_sets[fp] = own
            variant_questions[v.name] = fp
    judge_prompts = calibration_path = labels_path = labels = None
    if spec.judge is not None:
        judge_prompts, calibration_path = judge_files(loaded)
        labels_path, labels = judge_labels(loaded, dataset, variants)
    planned = PlannedSweep(loaded=loaded, options=options, dataset=dataset, questions=questions,
                           questions_fp=qfp, variants=variants, plan=Plan(), tier=tier,
                           split=split, selection=chosen.steps, notices=notices,
                           analyzer_choice=analyzer_choice, question_sets=question_sets,
                           variant_questions=variant_questions, judge_prompts=judge_prompts,
                           calibration_path=calibration_path, labels=labels,
                           labels_path=labels_path)
    return replace(planned, plan=build_plan(variants, planned.experiment_inputs(),
                                            variant_questions))


def check_clusters(loaded: LoadedSpec, questions: tuple[Question, ...]) -> None:
    """`stats.cluster` gives every question a cluster and more than one cluster (else one
    line at check time, before any compute: never a silent fall-back to independent
    questions)."""
    choice = loaded.spec.stats.cluster
    if choice == "none" or len(questions) < 2:
        return
    where = ("stats", "cluster")
    given = cluster_labels(questions, choice)
    missing = [q.qid for q, c in zip(questions, given) if c is None]
    if missing:
        raise loaded.error(f"question '{missing[0]}' has no '{choice}' field "
                           f"({len(missing)} of {len(questions)} lack it); give every "
                           "question one, or use stats.cluster: auto or none", where)
    labels = set(given)
    if len(labels) == 1:
        raise loaded.error(f"every question is in one cluster ('{labels.pop()}'), so no test "
                           "can compare clusters; use stats.cluster: none to treat the "
                           "questions as independent", where)


def variant_samples(variants: list[Variant], chosen: Selected, spec: Any,
                    options: RunOptions) -> dict[str, tuple[Question, ...]]:
    """Each variant's own questions when some sweep sets its own `tier` or `n` (else {}):
    its sweep's sample, else the experiment's tier; the baseline gets their union. A
    `--tier` on the command line puts every variant on that tier. A look of a sequential
    run (`options.sizes`) gives each variant the first n of the same order."""
    if options.sizes is not None:  # a look of a sequential run
        sizes = dict(options.sizes)
        out = {v.name: sample(chosen.pool, tier=None, n=sizes[v.name], seed=spec.seed,
                              smoke_size=spec.smoke_size, regression_size=spec.regression_size)
               for v in variants if v.name in sizes}
        out[BASELINE] = union_of(chosen.pool, out.values())
        return out
    if options.tier is not None or not any(v.sample for v in variants):
        return {}
    out = {}
    for v in variants:
        if v.sample is None:
            out[v.name] = chosen.questions
        else:
            out[v.name] = sample(chosen.pool, tier=v.sample[0], n=v.sample[1], seed=spec.seed,
                                 smoke_size=spec.smoke_size, regression_size=spec.regression_size)
    out[BASELINE] = union_of(chosen.pool, out.values())
    return out


def union_of(pool: tuple[Question, ...], sets) -> tuple[Question, ...]:
    """The questions of any of `sets`, in pool order."""
    qids = {q.qid for qs in sets for q in qs}
    return tuple(q for q in pool if q.qid in qids)


def judge_files(loaded: LoadedSpec) -> tuple[PromptSet, Path | None]:
    """The judge's prompts and calibration file, checked (errors name the YAML line)."""
    judge = loaded.spec.judge
    assert judge is not None
    try:
        prompts = load_prompts(judge.prompts, loaded.path.parent)
    except InputError as exc:
        raise loaded.error(exc.one_line(), ("judge", "prompts")) from None
    try:
        made = make_judge(judge)  # a missing model file, URL or key fails here, before compute
        key_input(judge, prompts.fingerprint)  # an unreadable declared file too
    except InputError as exc:
        raise loaded.error(exc.message, tuple((exc.field or "judge").split("."))) from None
    getattr(made, "close", lambda: None)()
    calib = None
    if judge.calibration is not None:
        calib = loaded.resolve(judge.calibration)
        if not calib.is_file():
            raise loaded.error(f"calibration file not found: {calib}", ("judge", "calibration"))
    return prompts, calib


def judge_labels(loaded: LoadedSpec, dataset: Dataset, variants: list[Variant]
                 ) -> tuple[Path | None, pl.DataFrame | None]:
    """The `judge.labels` file, read and checked against the data set's question ids and
    the judge's metrics (a bad label names its file and line; a missing file, the YAML
    line); (None, None) when not given."""
    judge = loaded.spec.judge
    if judge is None or judge.labels is None:
        return None, None
    path = loaded.resolve(judge.labels)
    if not path.is_file():
        raise loaded.error(f"labels file not found: {path}", ("judge", "labels"))
    return path, read_labels(path, known_qids={q.qid for q in dataset.questions},
                             metrics=[f"judge/{m}" for m in judge.metrics],
                             variants=[v.name for v in variants])


def load_data(loaded: LoadedSpec) -> Dataset:
    """The spec's data set. A path that is missing, or is not a data set of the format,
    is an error at the spec's `dataset.path` line; a bad record inside the data names
    its own file and line."""
    spec = loaded.spec
    data_path = loaded.resolve(spec.dataset.path)
    if not data_path.exists():
        raise loaded.error(f"no such file or folder: {data_path}", ("dataset", "path"))
    try:
        return load_dataset(data_path, format=spec.dataset.format,
                            beir_split=spec.dataset.beir_split, encoding=spec.dataset.encoding)
    except InputError as exc:
        if exc.field == "encoding" and exc.line is None:
            raise loaded.error(exc.message, ("dataset", "encoding")) from None
        if exc.path is not None and Path(exc.path) == data_path and exc.line is None:
            raise loaded.error(f"{exc.message} ({data_path})", ("dataset", "path")) from None
        raise
