"""Cost per question of every online stage (docs/metrics.md#cost-per-question): what the
run recorded for the question (its usage) at the experiment's prices (`costs:`), in US
dollars.

Usage of one question (`QuestionView.usage`; the generator's tokens are its answer's):

- `embed_tokens`: query tokens embedded, the question's tokens (experiment tokenizer) once
  per vector path;
- `vector_searches`: one per vector path that returned a ranking for the question;
- `rerank_calls`: candidates reranked (`rerank.depth`, or fewer candidates; 0 without a
  reranker);
- `judge_in`, `judge_out`: the judge's tokens over every verdict behind the question's
  judged metrics (cached ones at the tokens they cost when asked).

Prices (`QuestionView.params["pricing"]`): `embed` per 1,000 tokens, `search` per vector
search, `rerank` per candidate, `in` / `out` per 1,000 generator tokens, `judge_in` /
`judge_out` per 1,000 judge tokens. A price of 0 costs 0 whatever was recorded; a price
set for a count the run did not record (a judge result stored before its tokens were) is
NaN, undefined rather than free. `cost/total` is what serving the question costs: the sum
of the pipeline's stages the variant has (embed, search, rerank, generate). The judge is
the evaluation's cost, not the pipeline's: `cost/judge` stands beside the total, outside
it, so the trade-off front (components/report/tradeoff.py) compares what variants cost
to serve.
"""

from __future__ import annotations

import math
from typing import Callable, Collection, Mapping, Sequence

from ablate.components.contract.records import Answer, Question

USAGE = ("embed_tokens", "vector_searches", "rerank_calls", "judge_in", "judge_out")
STAGES = ("embed", "search", "rerank", "generate", "judge")


def _priced(count: float | None, price: float, per: float = 1.0) -> float:
    if not price:
        return 0.0
    if count is None or count != count:
        return math.nan
    return float(count) * price / per


def stage_costs(usage: Mapping[str, float], pricing: Mapping[str, float],
                answer: Answer | None, judged: bool) -> dict[str, float]:
    """{"cost/embed", "cost/search", "cost/rerank", "cost/generate", "cost/judge",
    "cost/total"} of one question (module doc; the total leaves the judge out); `cost/generate` is NaN without an answer
    (no generate stage), `cost/judge` without a judge (`judged` False)."""
    p = {k: float(v or 0.0) for k, v in pricing.items()}
    out = {
        "cost/embed": _priced(usage.get("embed_tokens"), p.get("embed", 0.0), 1000.0),
        "cost/search": _priced(usage.get("vector_searches"), p.get("search", 0.0)),
        "cost/rerank": _priced(usage.get("rerank_calls"), p.get("rerank", 0.0)),
        "cost/generate": math.nan,
        "cost/judge": math.nan,
    }
    if answer is not None:
        out["cost/generate"] = (_priced(answer.tokens_in, p.get("in", 0.0), 1000.0)
                                + _priced(answer.tokens_out, p.get("out", 0.0), 1000.0))
    if judged:
        out["cost/judge"] = (_priced(usage.get("judge_in"), p.get("judge_in", 0.0), 1000.0)
                             + _priced(usage.get("judge_out"), p.get("judge_out", 0.0), 1000.0))
    parts = [out["cost/embed"], out["cost/search"], out["cost/rerank"]]
    parts += [out["cost/generate"]] if answer is not None else []
    out["cost/total"] = sum(parts)
    return out


def query_usage(questions: Sequence[Question], count: Callable[[str], int],
                searched: Mapping[str, Collection[str]], reranked: Mapping[str, int]
                ) -> dict[str, dict[str, float]]:
    """qid -> the retrieval side of its usage (module doc): `count` is the run's tokenizer
    count (ablate.components.text.tokenizer.Tokenizer.count), `searched` each vector path's
    questions (those it returned a ranking for), `reranked` the candidates each question's
    reranker scored (absent: none)."""
    out: dict[str, dict[str, float]] = {}
    for q in questions:
        searches = sum(q.qid in got for got in searched.values())
        out[q.qid] = {"embed_tokens": float(count(q.question) * searches) if searches else 0.0,
                      "vector_searches": float(searches),
                      "rerank_calls": float(reranked.get(q.qid, 0))}
    return out
