"""The built-in metrics, registered in the metric registry (see registry.py).

Retrieval metrics at three stages (docs/metrics.md): `candidates` (after fusion),
`reranked` and `final` (the chunks packed into the prompt); answer metrics (SQuAD v2
rules), refusal indicators, tokens, cost and latency per question.
"""

from __future__ import annotations

import math

from ablate.components.contract.records import Answer
from ablate.components.metrics.answer import answer_metrics, resolve_normalizer
from ablate.components.metrics.answer_content import content_metrics, longer_reference
from ablate.components.metrics.cost import stage_costs
from ablate.components.metrics.registry import QuestionView, metric
from ablate.components.metrics.retrieval import group_recall, retrieval_metrics, span_coverage

RETRIEVAL_STAGES = ("candidates", "reranked", "final")


def _retrieval(view: QuestionView, stage: str) -> dict[str, float]:
    p = view.params
    return view.once(f"retrieval:{stage}", lambda: retrieval_metrics(
        view.rankings.get(stage, []), view.groups, p["ks"], p["label_threshold"], p["gain"]))


def _retrieval_metric(name: str, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"{stage}/{name}_at_{k}": _retrieval(view, stage)[f"{name}_at_{k}"]
                for stage in RETRIEVAL_STAGES for k in view.params["ks"]}
    compute.__module__ = __name__
    metric(name, stages=RETRIEVAL_STAGES, direction="higher", at_k=True,
           description=description)(compute)


_retrieval_metric("hit", "1 when a relevant chunk is in the top k")
_retrieval_metric("recall", "evidence groups matched in the top k / all groups")
_retrieval_metric("precision", "relevant chunks in the top k / k")
_retrieval_metric("mrr", "1 / rank of the first relevant chunk in the top k")
_retrieval_metric("ndcg", "normalised DCG of the top k with graded gains")
_retrieval_metric("full_support", "1 when every evidence group is matched in the top k")


@metric("group_recall", stages=("candidates", "final"), direction="higher")
def _group_recall(view: QuestionView) -> dict[str, float]:
    """Share of the evidence groups (multi-hop: supporting paragraphs) with a relevant
    chunk among all fused candidates / in the final context (no cut-off)."""
    thr = view.params["label_threshold"]
    return {f"{stage}/group_recall": group_recall(view.rankings.get(stage, []), view.groups, thr)
            for stage in ("candidates", "final")}


@metric("span_coverage", stages=("final",), direction="higher")
def _span_coverage(view: QuestionView) -> dict[str, float]:
    """Share of gold span characters present in the prompt."""
    ctx = view.context
    return {"final/span_coverage": span_coverage(ctx.passages if ctx else (), view.question)}


@metric("context_tokens", stages=("final",), direction="none", high=math.inf)
def _context_tokens(view: QuestionView) -> dict[str, float]:
    """Tokens of the assembled context (experiment tokenizer)."""
    return {"final/context_tokens": float(view.context.n_tokens) if view.context else 0.0}


@metric("context_chunks", stages=("final",), direction="none", high=math.inf)
def _context_chunks(view: QuestionView) -> dict[str, float]:
    """Chunks in the assembled context (what the budget let in)."""
    return {"final/context_chunks": float(len(view.context.chunk_ids)) if view.context else 0.0}


def _given_answer(view: QuestionView) -> Answer:
    """The answer the answer-stage metrics score; a view without one (no generate stage)
    has no answer metrics (score_question does not compute them from such a view)."""
    if view.answer is None:
        raise ValueError(f"question '{view.question.qid}': the answer metrics need the "
                         "generate stage's answer, and the pipeline has none")
    return view.answer


def _answer(view: QuestionView) -> dict[str, float]:
    p = view.params
    pricing = p.get("pricing") or {}

    def scored() -> dict[str, float]:
        out = answer_metrics(
            view.question, _given_answer(view), view.generator_context,
            f1_threshold=p.get("correct_f1", 0.5),
            cost_per_1k_in=pricing.get("in", 0.0), cost_per_1k_out=pricing.get("out", 0.0),
            normalizer=p.get("answer_normalizer", "auto"))
        if p.get("correct_by", "f1") == "auto" and out["correct"] == out["correct"]:
            out["correct"] = _longer_reference_correct(view, out["correct"])
        return out
    return view.once("answer", scored)


def _longer_reference_correct(view: QuestionView, correct: float) -> float:
    """metrics.correct_by auto: where every reference is longer than the answer, correct
    means content precision at least metrics.correct_f1 (answer_content.longer_reference)."""
    q, answer = view.question, _given_answer(view)
    if not q.answerable or answer.refused:
        return correct
    norm = resolve_normalizer(view.params.get("answer_normalizer", "auto"), q.answers, q.question)
    if not longer_reference(answer.text, q.answers, norm):
        return correct
    precision = view.once("content", lambda: _content(view))["content_precision"]
    return float(precision >= view.params.get("correct_f1", 0.5))


def _answer_metric(name: str, direction: str, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"answer/{name}": _answer(view)[name]}
    compute.__module__ = __name__
    register = metric(name, stages=("answer",), direction=direction,  # type: ignore[arg-type]
                      description=description)
    register(compute)


_answer_metric("em", "higher", "exact match with a reference answer (normalised)")
_answer_metric("f1", "higher", "token F1 with the best reference answer")
_answer_metric("correct", "higher", "answered correctly (EM, or F1 above metrics.correct_f1; "
               "content precision where the reference is long: metrics.correct_by)")
_answer_metric("refused", "none", "the generator refused")
_answer_metric("lexical_support", "higher",
               "share of answer tokens found in the context (a proxy, not faithfulness)")
_answer_metric("generation_error", "lower",
               "the generator failed (timeout, HTTP error, empty output after retries)")


def _content(view: QuestionView) -> dict[str, float]:
    """The content-token scores (answer_content): NaN for a failed generation."""
    answer, q = _given_answer(view), view.question
    if answer.error is not None:
        return dict.fromkeys(("content_precision", "content_recall", "content_f1"), math.nan)
    norm = resolve_normalizer(view.params.get("answer_normalizer", "auto"), q.answers, q.question)
    return content_metrics(answer.text, q.answers, q.question, norm,
                           answerable=q.answerable, refused=bool(answer.refused))


def _content_metric(name: str, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"answer/{name}": view.once("content", lambda: _content(view))[name]}
    compute.__module__ = __name__
    metric(name, stages=("answer",), direction="higher", description=description)(compute)


_content_metric("content_precision", "share of the answer's words not in the question that "
                "the reference holds (length-robust)")
_content_metric("content_recall", "share of the reference's words not in the question that "
                "the answer holds")
_content_metric("content_f1", "token F1 with the question's own words removed from both sides")


REFUSAL_COLUMNS = ("refusal/answer_coverage", "refusal/false_acceptance",
                   "refusal/false_refusal", "refusal/answer_risk")


def refusal_indicators(answerable: bool, refused: bool, correct: bool,
                       error: bool = False) -> dict[str, float]:
    """Indicators whose means are the refusal rates of a set, each defined (not NaN) only
    on its own denominator: coverage over all questions, false acceptance over unanswerable
    ones, false refusal over answerable ones, risk over answered ones. As columns they get
    paired tests like every other metric. A failed generation (`error`) neither answered
    nor refused: every indicator is NaN."""
    if error:
        return dict.fromkeys(REFUSAL_COLUMNS, math.nan)
    return {
        "refusal/answer_coverage": float(not refused),
        "refusal/false_acceptance": float(not refused) if not answerable else math.nan,
        "refusal/false_refusal": float(refused) if answerable else math.nan,
        "refusal/answer_risk": float(not correct) if not refused else math.nan,
    }


def _refusal(view: QuestionView) -> dict[str, float]:
    a = _answer(view)
    return refusal_indicators(view.question.answerable, a["refused"] == 1.0, a["correct"] == 1.0,
                              error=_given_answer(view).error is not None)


def _refusal_metric(name: str, direction: str, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"refusal/{name}": view.once("refusal", lambda: _refusal(view))[f"refusal/{name}"]}
    compute.__module__ = __name__
    register = metric(name, stages=("refusal",), direction=direction,  # type: ignore[arg-type]
                      description=description)
    register(compute)


_refusal_metric("answer_coverage", "higher", "answered (not refused), over all questions")
_refusal_metric("false_acceptance", "lower", "answered an unanswerable question")
_refusal_metric("false_refusal", "lower", "refused an answerable question")
_refusal_metric("answer_risk", "lower", "answered wrongly, over answered questions")


@metric("in", stages=("tokens",), direction="lower", high=math.inf)
def _tokens_in(view: QuestionView) -> dict[str, float]:
    """Prompt tokens sent to the generator."""
    return {"tokens/in": _answer(view)["tokens_in"]}


@metric("out", stages=("tokens",), direction="lower", high=math.inf)
def _tokens_out(view: QuestionView) -> dict[str, float]:
    """Tokens the generator returned."""
    return {"tokens/out": _answer(view)["tokens_out"]}


@metric("usd", stages=("cost",), direction="lower", high=math.inf,
        reads=("generator.cost_per_1k_in", "generator.cost_per_1k_out"))
def _cost(view: QuestionView) -> dict[str, float]:
    """Money spent on the answer at the generator's prices (the same as cost/generate)."""
    return {"cost/usd": _answer(view)["cost"]}


def _stage_costs(view: QuestionView) -> dict[str, float]:
    return view.once("costs", lambda: stage_costs(
        view.usage, view.params.get("pricing") or {}, view.answer, view.judgments is not None))


_GENERATOR_PRICES = ("generator.cost_per_1k_in", "generator.cost_per_1k_out")


def _cost_metric(name: str, needs: tuple[str, ...], description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        return {f"cost/{name}": _stage_costs(view)[f"cost/{name}"]}
    compute.__module__ = __name__
    reads = _GENERATOR_PRICES if name in ("generate", "total") else ()
    metric(name, stages=("cost",), direction="lower", high=math.inf, needs={"cost": needs},
           reads=reads, description=description)(compute)


_cost_metric("embed", (), "US dollars of embedding the query (costs.embed_per_1k_tokens)")
_cost_metric("search", (), "US dollars of the vector searches (costs.vector_search)")
_cost_metric("rerank", (), "US dollars of reranking the candidates (costs.rerank_call)")
_cost_metric("generate", ("generate",), "US dollars of the generator's tokens (its prices)")
_cost_metric("judge", ("judge",), "US dollars of the judge's tokens (costs.judge_*_per_1k)")
_cost_metric("total", (), "US dollars of serving the question: embed, search, rerank and "
             "generate (the judge's cost/judge stands beside it)")


@metric("*", stages=("latency",), direction="lower", high=math.inf, timing=True)
def _latency(view: QuestionView) -> dict[str, float]:
    """Seconds per question per stage (written to timings.parquet, not compared)."""
    return {f"latency/{stage}": value for stage, value in view.latency.items()}
