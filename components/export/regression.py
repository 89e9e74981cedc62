"""Regressions as files: a TREC collection, a lexical pipeline and the figures a published
run reached, checked by `ablate reproduce FILE [--data DIR] [--run FILE]`.

A regression file (experiments/regressions/*.yaml) holds:

    name: cacm-bm25
    source: where the expected figures were published
    data_hint: where to get the files (they are never shipped)
    collection: {path: corpus/uncompressed, format: html}   # or json (JsonCollection)
    topics: {path: topics.cacm.txt, format: cacm}           # trec, cacm, tsv or auto
    qrels: qrels.cacm.txt
    pipeline: {retrieval: {analyzer: lucene_english, depth: 1000,
                           bm25: {variant: lucene, k1: 0.9, b: 0.4}}}
    expected:
      metrics: {map: 0.3123, P_30: 0.1942}                  # trec_eval's names
      index: {documents: 3204, unique_terms: 14363, total_terms: 320968}
    tolerance: 0.0005

Paths are relative to the data folder. Every topic is searched; only judged topics are
scored (trec_eval's rule). Metrics pass within `tolerance`; index statistics must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml
from pydantic import ValidationError

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Ranking
from ablate.components.data import trec
from ablate.components.metrics import trec as trec_metrics

INDEX_STATS = ("documents", "unique_terms", "total_terms")
KEYS = {"name", "description", "source", "data_hint", "collection", "topics", "qrels",
        "pipeline", "expected", "tolerance"}


@dataclass(frozen=True)
class Regression:
    name: str
    path: Path
    collection: tuple[str, str]  # (path, format)
    topics: tuple[str, str]
    qrels: str
    cfg: PipelineConfig
    metrics: dict[str, float]
    index: dict[str, int]
    tolerance: float
    source: str = ""
    data_hint: str = ""


@dataclass
class Outcome:
    """Observed figures beside the expected ones."""

    rows: list[tuple[str, float, float, bool]] = field(default_factory=list)  # name, exp, obs, ok
    rankings: dict[str, Ranking] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(ok for *_, ok in self.rows)


def _file_part(spec: Any, key: str, path: Path, default_format: str) -> tuple[str, str]:
    if isinstance(spec, str):
        return spec, default_format
    if isinstance(spec, dict) and isinstance(spec.get("path"), str) and set(spec) <= {"path", "format"}:
        return spec["path"], str(spec.get("format", default_format))
    raise InputError("expected a path, or {path, format}", path=str(path), field=key)


def load(path: str | Path) -> Regression:
    """Read and check a regression file (InputError naming the file and field)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such regression file", path=str(p))
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', exc)}", path=str(p),
                         line=None if line is None else line + 1) from None
    if not isinstance(raw, dict):
        raise InputError("a regression file holds a mapping", path=str(p))
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})",
                         path=str(p))
    for key in ("name", "collection", "topics", "qrels", "pipeline", "expected"):
        if key not in raw:
            raise InputError("missing", path=str(p), field=key)
    try:
        cfg = PipelineConfig.model_validate(raw["pipeline"])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = "pipeline." + ".".join(str(x) for x in err["loc"])
        raise InputError(err["msg"], path=str(p), field=where) from None
    if cfg.retrieval.paths != ("bm25",):
        raise InputError("a regression runs the bm25 path alone (retrieval.paths: [bm25])",
                         path=str(p), field="pipeline.retrieval.paths")
    expected = raw["expected"]
    if not isinstance(expected, dict) or not isinstance(expected.get("metrics", {}), dict):
        raise InputError("expected {metrics: {...}, index: {...}}", path=str(p), field="expected")
    metrics = {str(k): v for k, v in (expected.get("metrics") or {}).items()}
    for k, v in metrics.items():
        if k not in trec_metrics.MEASURES:
            raise InputError(f"unknown measure (known: {', '.join(trec_metrics.MEASURES)})",
                             path=str(p), field=f"expected.metrics.{k}")
        if not isinstance(v, (int, float)):
            raise InputError("not a number", path=str(p), field=f"expected.metrics.{k}")
    index = {str(k): v for k, v in (expected.get("index") or {}).items()}
    for k, v in index.items():
        if k not in INDEX_STATS or not isinstance(v, int):
            raise InputError(f"an index statistic ({', '.join(INDEX_STATS)}) as an integer",
                             path=str(p), field=f"expected.index.{k}")
    tol = raw.get("tolerance", 0.0005)
    if not isinstance(tol, (int, float)) or tol < 0:
        raise InputError("a non-negative number", path=str(p), field="tolerance")
    qrels = raw["qrels"]
    if not isinstance(qrels, str):
        raise InputError("a path", path=str(p), field="qrels")
    return Regression(str(raw["name"]), p, _file_part(raw["collection"], "collection", p, "auto"),
                      _file_part(raw["topics"], "topics", p, "auto"), qrels, cfg,
                      {k: float(v) for k, v in metrics.items()}, index, float(tol),
                      str(raw.get("source", "")), str(raw.get("data_hint", "")))


def _need(data: Path, rel: str, reg: Regression, what: str) -> Path:
    where = data / rel
    if not where.exists():
        hint = f" ({reg.data_hint})" if reg.data_hint else ""
        raise InputError(f"the {what} of regression '{reg.name}' is not there: put it at "
                         f"{where}{hint}", path=str(reg.path), field=what)
    return where


def index_stats(tokens: Sequence[Sequence[str]]) -> dict[str, int]:
    """Documents, unique terms and total terms (tokens after analysis), as Lucene counts."""
    vocab: set[str] = set()
    total = 0
    for t in tokens:
        vocab.update(t)
        total += len(t)
    return {"documents": len(tokens), "unique_terms": len(vocab), "total_terms": total}


def run(reg: Regression, data: str | Path, say: Callable[[str], None] | None = None) -> Outcome:
    """Index the collection, search every topic, score the judged ones (`say`: progress)."""
    from ablate.components.retrieval.analyzer import get_analyzer
    from ablate.components.retrieval.bm25 import BM25Index
    data = Path(data)
    docs = trec.read_collection(_need(data, reg.collection[0], reg, "collection"), reg.collection[1])
    topics = trec.read_topics(_need(data, reg.topics[0], reg, "topics"), reg.topics[1])
    qrels = trec.read_qrels(_need(data, reg.qrels, reg, "qrels"))
    r = reg.cfg.retrieval
    if r.analyzer == "auto":
        raise InputError("name the analyzer (retrieval.analyzer), not auto", path=str(reg.path),
                         field="pipeline.retrieval.analyzer")
    analyzer = get_analyzer(r.analyzer, r.analyzer_options)
    if say is not None:
        say(f"indexing {len(docs)} documents, searching {len(topics)} topics "
            f"({len(qrels)} judged) ...")
    tokens = [analyzer(d.contents) for d in docs]
    stats = index_stats(tokens)
    index = BM25Index([d.doc_id for d in docs], tokens, k1=r.bm25.k1, b=r.bm25.b,
                      epsilon=r.bm25.epsilon, variant=r.bm25.variant, delta=r.bm25.delta)
    del tokens
    qids = sorted(topics, key=_topic_order)
    found = index.search_many([analyzer(topics[q]) for q in qids], r.depth)
    out = Outcome(rankings=dict(zip(qids, found)))
    per_topic = trec_metrics.evaluate({q: [d for d, _ in rk] for q, rk in out.rankings.items()},
                                      qrels, tuple(reg.metrics))
    for m, want in reg.metrics.items():
        got = trec_metrics.mean(per_topic, m)
        out.rows.append((m, want, got, abs(got - want) <= reg.tolerance + 1e-12))
    for s, want_i in reg.index.items():
        out.rows.append((s, float(want_i), float(stats[s]), stats[s] == want_i))
    return out


def _topic_order(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def distinct_scores(ranking: Ranking) -> Ranking:
    """Scores that keep this order under trec_eval (which re-sorts by score, ties by
    docno descending): Anserini's rule, each score rounded to 1e-4 and the n-th of a run
    of ties lowered by n x 1e-6; when a run is too long for that (100 or more ties),
    the rank order as scores (n, n-1, ... 1)."""
    out: list[tuple[str, float]] = []
    dup = 0
    for i, (d, s) in enumerate(ranking):
        v = round(float(s), 4)
        if i and round(float(ranking[i - 1][1]), 4) - v < 1e-4 / 2:
            dup += 1
        else:
            dup = 0
        out.append((d, v - dup * 1e-6))
    printed = [float(f"{v:.10g}") for _, v in out]
    if any(a <= b for a, b in zip(printed, printed[1:])):
        n = len(ranking)
        return [(d, float(n - i)) for i, (d, _) in enumerate(ranking)]
    return out


def table(reg: Regression, out: Outcome) -> str:
    """Observed beside expected, one row per figure, and the verdict."""
    lines = [f"regression {reg.name}" + (f" ({reg.source})" if reg.source else ""),
             f"{'figure':<14}{'expected':>12}{'observed':>12}{'diff':>10}  ok"]
    for name, want, got, ok in out.rows:
        if name in INDEX_STATS:
            lines.append(f"{name:<14}{int(want):>12}{int(got):>12}{int(got - want):>10}  "
                         f"{'yes' if ok else 'NO'}")
        else:
            lines.append(f"{name:<14}{want:>12.4f}{got:>12.6f}{got - want:>+10.6f}  "
                         f"{'yes' if ok else 'NO'}")
    lines.append(f"{'PASS' if out.passed else 'FAIL'}: metrics within {reg.tolerance:g}, "
                 "index statistics equal" if reg.index else
                 f"{'PASS' if out.passed else 'FAIL'}: metrics within {reg.tolerance:g}")
    return "\n".join(lines)


def as_run(rankings: Mapping[str, Ranking]) -> dict[str, Ranking]:
    """The rankings with distinct_scores, for a TREC run file."""
    return {q: distinct_scores(r) for q, r in rankings.items()}
