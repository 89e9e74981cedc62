"""Regressions as files: a TREC collection, a lexical pipeline and the figures a published
run reached, checked by `ablate reproduce FILE [--data DIR] [--run FILE]`.

A regression file (experiments/regressions/*.yaml) holds:

    name: cacm-bm25
    source: where the expected figures were published
    data_hint: where to get the files (they are never shipped)
    collection: {path: corpus/uncompressed, format: html}   # or json (JsonCollection)
    topics: {path: topics.cacm.txt, format: cacm}           # trec, cacm, tsv or auto
    qrels: qrels.cacm.txt
    encoding: utf-8                                         # of all three; latin-1 for old ones
    pipeline: {retrieval: {analyzer: lucene_english, depth: 1000,
                           bm25: {variant: lucene, k1: 0.9, b: 0.4}}}
    expected:
      metrics: {map: 0.3123, P_30: 0.1942}                  # trec_eval's names
      index: {documents: 3204, unique_terms: 14363, total_terms: 320968}
    tolerance: 0.0005

Paths are relative to the data folder. Every topic is searched; only judged topics are
scored (trec_eval's rule). Metrics pass within `tolerance`; index statistics must be equal.
The file is read and checked by components/export/regression_file.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Ranking
from ablate.components.data import trec
from ablate.components.export.regression_file import INDEX_STATS, Regression, load
from ablate.components.metrics import trec as trec_metrics

__all__ = ["INDEX_STATS", "Outcome", "Regression", "load", "run", "table", "as_run",
           "distinct_scores", "index_stats", "input_paths"]


@dataclass
class Outcome:
    """Observed figures beside the expected ones."""

    rows: list[tuple[str, float, float, bool]] = field(default_factory=list)  # name, exp, obs, ok
    rankings: dict[str, Ranking] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(ok for *_, ok in self.rows)


def _need(data: Path, rel: str, reg: Regression, what: str) -> Path:
    where = data / rel
    if not where.exists():
        hint = f" ({reg.data_hint})" if reg.data_hint else ""
        raise InputError(f"the {what} of regression '{reg.name}' is not there: put it at "
                         f"{where}{hint}", path=str(reg.path), field=what)
    return where


def input_paths(reg: Regression, data: str | Path) -> list[Path]:
    """The files (and collection folder) a regression reads: an output must not be one."""
    data = Path(data)
    return [reg.path, data / reg.collection[0], data / reg.topics[0], data / reg.qrels]


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
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    from ablate.components.retrieval.lexical.bm25 import BM25Index
    data = Path(data)
    docs = trec.read_collection(_need(data, reg.collection[0], reg, "collection"), reg.collection[1],
                                reg.encoding)
    topics = trec.read_topics(_need(data, reg.topics[0], reg, "topics"), reg.topics[1], reg.encoding)
    qrels = trec.read_qrels(_need(data, reg.qrels, reg, "qrels"), reg.encoding)
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
