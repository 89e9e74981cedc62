"""Per-process run context: the data set, selected questions, store and loaded models.

Stage tasks receive only keys; they find large data here (built once per process, so a
Dask worker builds its own from the same spec).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.data import load_dataset
from components.data.tiers import select_questions
from components.records import Dataset, Question
from components.tokenizer import TOKENIZER_NAME, Tokenizer, get_tokenizer
from flows.graph import Plan, build_plan
from flows.preflight import check_variants
from flows.spec import LoadedSpec, load_spec
from flows.store import Store
from flows.variants import Variant, expand


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


@dataclass
class RunContext:
    loaded: LoadedSpec
    options: RunOptions
    dataset: Dataset
    questions: tuple[Question, ...]
    questions_fp: str
    variants: list[Variant]
    plan: Plan
    store: Store
    tokenizer: Tokenizer
    tier: str
    split: str
    memo: dict[str, Any] = field(default_factory=dict)
    locks: dict[str, threading.Lock] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    stage_times: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> wall start, end
    counters: dict[str, int] = field(default_factory=dict)
    heavy: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(1))
    started: float = field(default_factory=time.time)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def spec(self):
        return self.loaded.spec

    def lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self.locks.setdefault(name, threading.Lock())

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + n

    def experiment_inputs(self) -> dict[str, Any]:
        """The experiment-level inputs that stage keys may name (pipeline.StageDef.experiment)."""
        return {"data": self.dataset.fingerprint, "questions": self.questions_fp,
                "tokenizer": TOKENIZER_NAME, "metrics": self.metrics_params(),
                "labels": self.label_mode}

    @property
    def label_mode(self) -> str:
        """metrics.labels, else `document` for BEIR (document-level qrels), else `span`."""
        given = self.spec.metrics.labels
        return given or ("document" if self.dataset.source.startswith("beir:") else "span")

    def metrics_params(self) -> dict[str, Any]:
        m = self.spec.metrics
        return {"ks": list(m.ks), "gain": m.gain, "label_threshold": m.label_threshold,
                "correct_f1": m.correct_f1}


def build_context(spec_path: str | Path, options: RunOptions) -> RunContext:
    """Validate everything that can be validated before any compute, and plan the sweep."""
    loaded = load_spec(spec_path)
    spec = loaded.spec
    variants = expand(loaded)
    check_variants(loaded, variants)
    data_path = loaded.resolve(spec.dataset.path)
    dataset = load_dataset(data_path, format=spec.dataset.format, beir_split=spec.dataset.beir_split)
    tier = options.tier or spec.tier
    split = options.split or spec.split
    questions = select_questions(dataset.questions, tier=tier, split=split, seed=spec.seed,
                                 smoke_size=spec.smoke_size, regression_size=spec.regression_size)
    if not questions:
        raise loaded.error(f"no questions to run: the data set has none for tier '{tier}', "
                           f"split '{split}'", ("dataset", "path"))
    qfp = questions_fingerprint(questions)
    root = Path(options.cache_dir or spec.cache_dir)
    if not root.is_absolute() and options.cache_dir is None:
        root = Path.cwd() / root
    ctx = RunContext(loaded=loaded, options=options, dataset=dataset, questions=questions,
                     questions_fp=qfp, variants=variants, plan=Plan(), store=Store(root),
                     tokenizer=get_tokenizer(), tier=tier, split=split)
    ctx.plan = build_plan(variants, ctx.experiment_inputs())
    return ctx


_CONTEXTS: dict[tuple[str, RunOptions], RunContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def get_context(spec_path: str, options: RunOptions) -> RunContext:
    """The process's context for a spec (built once per process)."""
    key = (str(Path(spec_path).resolve()), options)
    with _CONTEXTS_LOCK:
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            ctx = build_context(spec_path, options)
            _CONTEXTS[key] = ctx
        return ctx


def forget_contexts() -> None:
    with _CONTEXTS_LOCK:
        _CONTEXTS.clear()
