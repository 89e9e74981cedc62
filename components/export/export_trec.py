"""Export ranked runs and span labels as TREC run and qrels files.

So results can be checked with standard tools (trec_eval, pytrec_eval, ranx). Evaluators
re-sort a run by score, so write distinct scores when the order matters.

Ids: TREC files are whitespace-separated, so every qid and chunk id is written through
`encode_id`, a reversible percent-encoding (`urllib.parse.unquote` decodes it) that leaves
ids made of safe characters unchanged; `write_id_map` lists the ids that changed.

Qrels hold integer relevance for the chunks whose label (best over the groups) reaches the
label threshold; chunks below it are absent (not relevant). Grades (`grades=`):
- "binary": 1 for every relevant chunk;
- "exact" (what `ablate export` writes): the labels themselves, per question multiplied by
  the smallest integer scale that makes all of that question's labels integers (labels
  are covered fractions of spans, so rationals with small denominators); hit, precision,
  MRR and linear-gain NDCG do not change when one question's gains are multiplied by a
  constant, so an evaluator reading these integers reproduces ablate's numbers exactly.
  A fixed scale (say label x 1000, rounded) would not: it moves NDCG by up to ~1e-3;
- a number s: round(label * s).
Recall in ablate is over evidence groups, and full support means every group matched:
`write_group_qrels` / `write_group_run` write one pseudo-query per (question, group),
`qid~g`, holding that group's relevant chunks and the question's ranking, so
recall@K = mean of hit@K over a question's pseudo-queries and full support = their minimum.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Mapping, MutableMapping, Sequence
from urllib.parse import quote

from ablate.components.runtime.atomic import atomic_write

# Characters written as they are; everything else (white space, '%', '#', '~', non-ASCII,
# controls ...) is percent-encoded as UTF-8 bytes. '~' is reserved as the group separator.
SAFE_CHARS = "-._:/+=@,"
GROUP_SEP = "~"
MAX_GRADE = 2**31 - 1      # trec_eval and pytrec_eval read relevance as a C int
MAX_DENOMINATOR = 10**7    # labels are covered/length (x grade): denominators are lengths

Labels = Mapping[str, Sequence[Mapping[str, float]]]


def encode_id(value: str, id_map: MutableMapping[str, str] | None = None) -> str:
    """A TREC-safe form of `value` (unchanged when already safe); records changed ids."""
    if not value:
        raise ValueError("an empty id cannot be written to a TREC file")
    out = quote(value, safe=SAFE_CHARS)
    if out != value and id_map is not None:
        id_map[out] = value
    return out


def _escape(value: str) -> str:
    return (value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def write_id_map(path: str | Path, id_map: Mapping[str, str]) -> Path:
    """TSV 'encoded<TAB>original' (header line; \\ \\t \\n \\r escaped in the original)."""
    path = Path(path)
    lines = ["encoded\toriginal"] + [f"{e}\t{_escape(o)}" for e, o in sorted(id_map.items())]
    return atomic_write(path, "".join(line + "\n" for line in lines))


def _tag(tag: str) -> str:
    if not tag or any(ch.isspace() for ch in tag):
        raise ValueError(f"run tag {tag!r} is empty or holds whitespace (not TREC-safe)")
    return tag


def write_trec_run(path: str | Path, runs: Mapping[str, Sequence[tuple[str, float]]],
                   tag: str = "ablate", id_map: MutableMapping[str, str] | None = None) -> Path:
    """One line per (qid, chunk): 'qid Q0 chunk_id rank score tag', rank from 1, qids
    sorted; written atomically (never a partial file, whatever stops the write)."""
    path = Path(path)
    tag = _tag(tag)
    lines = []
    for qid in sorted(runs):
        q = encode_id(qid, id_map)
        for rank, (cid, score) in enumerate(runs[qid], start=1):
            lines.append(f"{q} Q0 {encode_id(cid, id_map)} {rank} {float(score):.10g} {tag}")
    return atomic_write(path, "".join(line + "\n" for line in lines))


def relevant_labels(groups: Sequence[Mapping[str, float]], threshold: float) -> dict[str, float]:
    """chunk -> best label among the groups it is relevant to (label >= threshold)."""
    best: dict[str, float] = {}
    for group in groups:
        for cid, v in group.items():
            if v >= threshold and v > best.get(cid, 0.0):
                best[cid] = v
    return best


def exact_integer_grades(values: Mapping[str, float]) -> tuple[dict[str, int], Fraction] | None:
    """(integer grade per chunk, scale) with grade = label x scale exactly (to float
    precision), the smallest such integers; None when no scale keeps them <= MAX_GRADE."""
    fracs = {}
    for cid, v in values.items():
        fr = Fraction(v).limit_denominator(MAX_DENOMINATOR)
        if fr <= 0 or abs(float(fr) - v) > 1e-12 * abs(v):
            return None
        fracs[cid] = fr
    if not fracs:
        return {}, Fraction(1)
    den = math.lcm(*(f.denominator for f in fracs.values()))
    ints = {cid: f.numerator * (den // f.denominator) for cid, f in fracs.items()}
    g = math.gcd(*ints.values())
    ints = {cid: v // g for cid, v in ints.items()}
    if max(ints.values()) > MAX_GRADE:
        return None
    return ints, Fraction(den, g)


def qrels_grades(groups: Sequence[Mapping[str, float]], threshold: float,
                 grades: str | float = "exact") -> tuple[dict[str, int], Fraction | None]:
    """Integer relevance of each relevant chunk of one question and the scale used
    (None when the exact scale overflows and label x 1e6 / max label was rounded)."""
    best = relevant_labels(groups, threshold)
    if grades == "binary":
        return {cid: 1 for cid in best}, Fraction(1)
    if grades == "exact":
        exact = exact_integer_grades(best)
        if exact is not None:
            return exact
        top = max(best.values())
        return {cid: max(1, round(v / top * 10**6)) for cid, v in best.items()}, None
    scale = float(grades)
    return {cid: max(1, round(v * scale)) for cid, v in best.items()}, Fraction(scale)


def write_trec_qrels(path: str | Path, labels: Labels, threshold: float,
                     grades: str | float = "binary",
                     id_map: MutableMapping[str, str] | None = None,
                     scales: MutableMapping[str, Fraction | None] | None = None) -> Path:
    """One line per relevant (qid, chunk): 'qid 0 chunk_id relevance', sorted by qid, chunk.

    `scales`, when given, receives the scale used per question (see `qrels_grades`)."""
    path = Path(path)
    lines = []
    for qid in sorted(labels):
        ints, scale = qrels_grades(labels[qid], threshold, grades)
        if scales is not None:
            scales[qid] = scale
        q = encode_id(qid, id_map)
        for cid in sorted(ints):
            lines.append(f"{q} 0 {encode_id(cid, id_map)} {ints[cid]}")
    return atomic_write(path, "".join(line + "\n" for line in lines))


def group_qid(qid: str, group: int, id_map: MutableMapping[str, str] | None = None) -> str:
    """The pseudo-query of one evidence group: '<encoded qid>~<group>'."""
    return f"{encode_id(qid, id_map)}{GROUP_SEP}{group}"


def write_group_qrels(path: str | Path, labels: Labels, threshold: float,
                      id_map: MutableMapping[str, str] | None = None) -> Path:
    """Binary qrels of one pseudo-query per (question, evidence group)."""
    path = Path(path)
    lines = []
    for qid in sorted(labels):
        for g, group in enumerate(labels[qid]):
            gq = group_qid(qid, g, id_map)
            for cid in sorted(c for c, v in group.items() if v >= threshold):
                lines.append(f"{gq} 0 {encode_id(cid, id_map)} 1")
    return atomic_write(path, "".join(line + "\n" for line in lines))


def write_group_run(path: str | Path, runs: Mapping[str, Sequence[tuple[str, float]]],
                    labels: Labels, tag: str = "ablate",
                    id_map: MutableMapping[str, str] | None = None) -> Path:
    """Each question's ranking repeated under each of its groups' pseudo-queries."""
    path = Path(path)
    tag = _tag(tag)
    lines = []
    for qid in sorted(runs):
        for g in range(len(labels.get(qid, ()))):
            gq = group_qid(qid, g, id_map)
            for rank, (cid, score) in enumerate(runs[qid], start=1):
                lines.append(f"{gq} Q0 {encode_id(cid, id_map)} {rank} {float(score):.10g} {tag}")
    return atomic_write(path, "".join(line + "\n" for line in lines))
