"""Export ranked runs and span labels as TREC run and qrels files.

So results can be checked with standard tools (trec_eval, ranx, pytrec_eval). Ids must
hold no whitespace. Evaluators re-sort a run by score, so write distinct scores when the
order matters. Qrels hold integer relevance: chunks whose label (best over the groups)
reaches `threshold` get 1, or round(label * grade_scale) when grade_scale is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence


def _check_id(value: str, what: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(f"{what} {value!r} is empty or holds whitespace (not TREC-safe)")
    return value


def write_trec_run(path: str | Path, runs: Mapping[str, Sequence[tuple[str, float]]],
                   tag: str = "ablate") -> Path:
    """One line per (qid, chunk): 'qid Q0 chunk_id rank score tag', rank from 1, qids sorted."""
    path = Path(path)
    lines = []
    for qid in sorted(runs):
        for rank, (cid, score) in enumerate(runs[qid], start=1):
            lines.append(f"{_check_id(qid, 'qid')} Q0 {_check_id(cid, 'chunk id')} {rank} "
                         f"{float(score):.10g} {_check_id(tag, 'tag')}")
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_trec_qrels(path: str | Path, labels: Mapping[str, Sequence[Mapping[str, float]]],
                     threshold: float, grade_scale: float | None = None) -> Path:
    """One line per relevant (qid, chunk): 'qid 0 chunk_id relevance', sorted by qid, chunk."""
    path = Path(path)
    lines = []
    for qid in sorted(labels):
        best: dict[str, float] = {}
        for group in labels[qid]:
            for cid, v in group.items():
                if v >= threshold and v > best.get(cid, 0.0):
                    best[cid] = v
        for cid in sorted(best):
            rel = 1 if grade_scale is None else round(best[cid] * grade_scale)
            lines.append(f"{_check_id(qid, 'qid')} 0 {_check_id(cid, 'chunk id')} {rel}")
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
