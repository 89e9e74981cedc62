"""Bias probes: does the judge prefer longer answers, or a passage's position?

Built from the experiment's own questions first, then the data set's others when those are
too few (answerable ones whose gold span lies in one sentence; see calibset.anchors_of),
nothing asked beyond the sweep's own prompts:
- length bias (answer relevancy): the gold answer, then the same answer followed by two
  true sentences from another article (irrelevant to the question). A padded answer must
  not score higher; the probe counts how often it does, and compares the mean scores.
- position bias (the support verdict behind faithfulness and context recall): a claim
  judged against three passages, the gold paragraph first and then last (two paragraphs of
  other articles around it). Both the gold sentence (supported) and the swapped sentence
  of the calibration set (not supported) are asked. The verdict should not depend on the
  order; the probe counts the verdicts that flip and the agreement with the label in each
  order.
- self-preference is a property of the sweep, not a measurement: `self_preference` names the
  variants whose generator is the judge's own model (the report flags them).
Judge failures are counted and left out of every comparison.
"""

from __future__ import annotations

import math
import random
from typing import Any, Mapping, Sequence

from ablate.components.contract.records import Dataset, Question
from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.calibset import anchors_of, partner_of, swap
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import Ask, JudgeCache, ask_many
from ablate.components.metrics.judged import SCORES
from ablate.components.text.sentences import sentence_spans


def _context(passages: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, 1))


def _case(a: dict[str, Any], pool: dict[str, dict[str, Any]], pool_by_doc: dict[str, list[str]],
          everyone: list[str], rng: random.Random, tries: int = 3) -> dict[str, Any] | None:
    """One question's case, or None when no swap or no two distractor articles are found."""
    qid = a["q"].qid
    others = [pool[o] for o in pool_by_doc[a["doc"]] if o != qid]
    swapped = swap(a, others, rng)
    if swapped is None:
        return None
    for _ in range(tries):
        d1 = partner_of(a, pool, everyone, rng)
        d2 = partner_of(a, pool, everyone, rng)
        if d1 is not None and d2 is not None and d1["doc"] != d2["doc"]:
            spans = sentence_spans(d1["paragraph"])
            padding = " ".join(d1["paragraph"][s:e] for s, e in spans[:2])
            return {"qid": qid, "question": a["q"].question.strip(), "answer": a["answer"].strip(),
                    "padding": padding, "claims": [(a["sentence"], True), (swapped, False)],
                    "gold": a["paragraph"], "distractors": [d1["paragraph"], d2["paragraph"]]}
    return None


def probe_cases(dataset: Dataset, questions: Sequence[Question], n: int, seed: int = 0
                ) -> list[dict[str, Any]]:
    """Up to n cases: question, gold answer, padding, claims, gold and distractor paragraphs.
    The sweep's questions come first (in a seeded order); when they give fewer than n cases
    (a smoke sample), the data set's other answerable questions follow. Each case draws from
    its own seeded generator, so a question's case is the same whatever else is probed."""
    anchors, _ = anchors_of(dataset, questions)
    pool, pool_by_doc = anchors_of(dataset)  # swaps, distractors, padding: any question
    order = random.Random(seed)
    first = sorted(anchors)
    order.shuffle(first)
    rest = sorted(set(pool) - set(anchors))
    order.shuffle(rest)
    everyone = sorted(pool)
    cases: list[dict[str, Any]] = []
    for qid in first + rest:
        if len(cases) >= n:
            break
        case = _case(pool[qid], pool, pool_by_doc, everyone, random.Random(f"{seed}:{qid}"))
        if case is not None:
            cases.append(case)
    return cases


def run_probes(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig,
               cases: Sequence[Mapping[str, Any]], cache: JudgeCache | None = None,
               progress: Any = None) -> dict[str, Any]:
    """Length and position figures over the cases (module doc)."""
    length: dict[str, Any] = {"higher": 0, "same": 0, "lower": 0, "failures": 0, "original": [],
                              "padded": []}
    position = {"pairs": 0, "flips": 0, "failures": 0, "agree_first": 0, "agree_last": 0}
    for n, c in enumerate(cases, 1):
        lang = language(cfg.language, c["question"])
        q = {"question": c["question"]}
        asks = [Ask("relevance", lang, q | {"answer": c["answer"]}),
                Ask("relevance", lang, q | {"answer": f"{c['answer']}. {c['padding']}"})]
        first = [c["gold"], *c["distractors"]]
        last = [*c["distractors"], c["gold"]]
        for claim, _ in c["claims"]:
            asks += [Ask("support", lang, q | {"statement": claim, "context": _context(first)}),
                     Ask("support", lang, q | {"statement": claim, "context": _context(last)})]
        v = ask_many(judge, prompts, asks, cfg.max_claims, cfg.max_new_tokens, cache)
        if v[0].ok and v[1].ok:
            a, b = SCORES[v[0].value], SCORES[v[1].value]
            length["original"].append(a)
            length["padded"].append(b)
            length["higher" if b > a else "lower" if b < a else "same"] += 1
        else:
            length["failures"] += 1
        for k, (_, label) in enumerate(c["claims"]):
            x, y = v[2 + 2 * k], v[3 + 2 * k]
            if not (x.ok and y.ok):
                position["failures"] += 1
                continue
            position["pairs"] += 1
            position["flips"] += x.value != y.value
            position["agree_first"] += (x.value == "yes") == label
            position["agree_last"] += (y.value == "yes") == label
        if progress is not None:
            progress(n, len(cases), c)
    return {"cases": len(cases), "length": _length_summary(length),
            "position": _position_summary(position)}


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _length_summary(d: dict[str, Any]) -> dict[str, Any]:
    n = d["higher"] + d["same"] + d["lower"]
    return {"pairs": n, "failures": d["failures"], "padded_higher": d["higher"],
            "same": d["same"], "padded_lower": d["lower"],
            "rate_padded_higher": d["higher"] / n if n else math.nan,
            "mean_original": _mean(d["original"]), "mean_padded": _mean(d["padded"]),
            "biased": bool(n and d["higher"] > d["lower"])}


def _position_summary(d: dict[str, Any]) -> dict[str, Any]:
    n = d["pairs"]
    return {"pairs": n, "failures": d["failures"], "flips": d["flips"],
            "flip_rate": d["flips"] / n if n else math.nan,
            "agreement_gold_first": d["agree_first"] / n if n else math.nan,
            "agreement_gold_last": d["agree_last"] / n if n else math.nan,
            "biased": bool(n and d["flips"] > 0)}


def self_preference(judge_model: str, generators: Mapping[str, str | None]) -> list[str]:
    """The variants (name -> generator model key) whose generator is the judge's model."""
    return sorted(v for v, key in generators.items() if key is not None and key == judge_model)


def render(result: dict[str, Any], self_pref: Sequence[str] | None = None) -> str:
    """Plain-text figures of a probe run (the `ablate judge probe` output)."""
    def f(x: float) -> str:
        return "–" if isinstance(x, float) and math.isnan(x) else f"{x:.3f}"
    ln, po = result["length"], result["position"]
    out = [f"cases: {result['cases']}",
           f"length bias (answer relevancy, answer vs the same answer + 2 irrelevant true "
           f"sentences): padded higher {ln['padded_higher']}/{ln['pairs']} "
           f"(rate {f(ln['rate_padded_higher'])}), same {ln['same']}, lower {ln['padded_lower']}; "
           f"mean {f(ln['mean_original'])} -> {f(ln['mean_padded'])}; failures {ln['failures']}"
           + ("  BIASED" if ln["biased"] else ""),
           f"position bias (support verdict, gold passage first vs last): flips "
           f"{po['flips']}/{po['pairs']} (rate {f(po['flip_rate'])}); agreement with the label "
           f"{f(po['agreement_gold_first'])} (first) vs {f(po['agreement_gold_last'])} (last); "
           f"failures {po['failures']}" + ("  ORDER-DEPENDENT" if po["biased"] else "")]
    if self_pref is not None:
        out.append("self-preference: " + (f"the judge's model also generates in {', '.join(self_pref)}"
                                          if self_pref else "the judge's model generates in no variant"))
    return "\n".join(out)
