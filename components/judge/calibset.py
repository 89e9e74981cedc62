"""A calibration set whose labels are true by construction, built from an extractive QA
data set (SQuAD v2, DRCD: documents whose paragraphs are joined by blank lines, gold
answers as character spans). Every item is marked `"synthetic": true`.

For each sampled answerable question (seeded; one whose answer span lies inside one
sentence; one question per article), with P its paragraph, S the sentence holding its
answer span A and G all its gold answers, the negatives are hard ones, from the same
article:
- support, true: the claim is S itself, the context is P (a copied sentence is supported);
- support, false: a near-miss of S against the same P (components/judge/nearmiss.py: A
  swapped for another answer of the article, a number, date or month changed, or S
  negated; the constructions rotate from question to question; `negative` names it);
- relevance, true: S as the answer to the question (it contains the gold answer);
- relevance, false: the gold sentence of another question of the same article as the
  answer (on topic, answering something else): it holds no text of G (and no digit when A
  is a number);
- usefulness, true: P for the question with A as the reference answer;
- usefulness, false: another paragraph of the same article without any text of G, the one
  sharing most words (Chinese: characters) with the question.
The labels hold by construction; the residual risk of each negative (the paragraph says the
near-miss elsewhere, the other sentence happens to address the question, the other
paragraph gives the answer in other words) is written in the item's `how`.

`pool`: the questions to draw from (every item's question, and the other questions whose
answers and sentences the negatives use); `ablate judge make-calibration --held-out-from
EXP.yaml` passes the questions that experiment's split never selects, so a set made so is
held out from its sweeps by construction. Nothing here asks a model.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, Sequence

from ablate.components.contract.records import Dataset, Question
from ablate.components.judge.nearmiss import NEAR_MISSES, near_miss, swap
from ablate.components.text.cjk import has_cjk
from ablate.components.text.sentences import sentence_spans

JOINER = "\n\n"
__all__ = ["anchors_of", "build", "partner_of", "swap", "write_jsonl"]
RISKS = {"support": "residual risk: the paragraph may state the changed sentence elsewhere",
         "relevance": "residual risk: that sentence may happen to address this question",
         "usefulness": "residual risk: the paragraph may give the answer in other words"}


def _paragraph(text: str, start: int, end: int) -> tuple[int, int] | None:
    """[s, e) of the blank-line-separated paragraph holding [start, end), else None."""
    s = text.rfind(JOINER, 0, start)
    s = 0 if s < 0 else s + len(JOINER)
    e = text.find(JOINER, end)
    e = len(text) if e < 0 else e
    return (s, e) if s <= start and end <= e else None


def _anchor(q: Question, doc_text: str) -> dict[str, Any] | None:
    """Paragraph, sentence and answer offsets of a question's first gold span."""
    if not q.evidence or not q.evidence[0]:
        return None
    span = q.evidence[0][0]
    para = _paragraph(doc_text, span.start, span.end)
    if para is None:
        return None
    ptext = doc_text[para[0]:para[1]]
    a0, a1 = span.start - para[0], span.end - para[0]
    for s, e in sentence_spans(ptext):
        if s <= a0 and a1 <= e:
            return {"doc": span.doc_id, "paragraph": ptext, "sentence": ptext[s:e],
                    "a": (a0 - s, a1 - s), "answer": ptext[a0:a1]}
    return None


def anchors_of(dataset: Dataset, questions: Sequence[Question] | None = None
               ) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """(qid -> paragraph, sentence and answer of its first gold span; doc -> qids) for the
    answerable questions (of `questions`, default all) whose span lies in one sentence."""
    docs = dataset.doc_by_id()
    anchors: dict[str, dict[str, Any]] = {}
    by_doc: dict[str, list[str]] = {}
    for q in (dataset.questions if questions is None else questions):
        if q.answerable and q.evidence:
            a = _anchor(q, docs[q.evidence[0][0].doc_id].text)
            if a is not None and a["answer"].strip():
                anchors[q.qid] = a | {"q": q}
                by_doc.setdefault(a["doc"], []).append(q.qid)
    return anchors, by_doc


def partner_of(a: dict[str, Any], anchors: dict[str, dict[str, Any]], qids: list[str],
               rng: random.Random) -> dict[str, Any] | None:
    """An anchor from another article whose paragraph does not contain a's answer (the
    probes' distractors)."""
    start = rng.randrange(len(qids))
    for k in range(len(qids)):
        b = anchors[qids[(start + k) % len(qids)]]
        if b["doc"] != a["doc"] and a["answer"].strip().lower() not in b["paragraph"].lower():
            return b
    return None


def _golds(a: dict[str, Any]) -> list[str]:
    return sorted({t.strip().lower() for t in (a["answer"], *a["q"].answers) if t.strip()})


def _words(text: str) -> set[str]:
    text = text.lower()
    return set(re.findall(r"[^\W\d_]{3,}", text)) | {ch for ch in text if has_cjk(ch)}


def other_sentence(a: dict[str, Any], others: list[dict[str, Any]],
                   rng: random.Random) -> dict[str, Any] | None:
    """Another question of the article whose gold sentence holds none of a's answers."""
    golds, digits = _golds(a), any(ch.isdigit() for ch in a["answer"])
    ok = [o for o in others if o["sentence"] != a["sentence"]
          and not any(g in o["sentence"].lower() for g in golds)
          and not (digits and any(ch.isdigit() for ch in o["sentence"]))]
    return rng.choice(ok) if ok else None


def other_paragraph(a: dict[str, Any], doc_text: str) -> str | None:
    """The article's paragraph without a's answers sharing most words with the question."""
    golds, words = _golds(a), _words(a["q"].question)
    ok = [p for p in doc_text.split(JOINER) if p.strip() and p.strip() != a["paragraph"].strip()
          and not any(g in p.lower() for g in golds)]
    return max(ok, key=lambda p: len(words & _words(p))) if ok else None


def build(dataset: Dataset, n: int, seed: int = 0,
          pool: Sequence[Question] | None = None) -> list[dict[str, Any]]:
    """6 items per sampled question (module doc), n questions, in a seeded order."""
    anchors, by_doc = anchors_of(dataset, pool)
    docs = dataset.doc_by_id()
    rng = random.Random(seed)
    qids = sorted(anchors)
    rng.shuffle(qids)
    items: list[dict[str, Any]] = []
    used_docs: set[str] = set()
    for qid in qids:
        if len(items) >= 6 * n:
            break
        a = anchors[qid]
        if a["doc"] in used_docs:  # one question per article: varied items
            continue
        others = [anchors[o] for o in by_doc[a["doc"]] if o != qid]
        claim = near_miss(a, others, rng, len(items) // 6)
        partner = other_sentence(a, others, rng)
        passage = other_paragraph(a, docs[a["doc"]].text)
        if claim is None or partner is None or passage is None:
            continue
        used_docs.add(a["doc"])
        items += _items(len(items) // 6 + 1, a, claim, partner, passage)
    return items


def _items(n: int, a: dict[str, Any], claim: tuple[str, str], b: dict[str, Any],
           passage: str) -> list[dict[str, Any]]:
    q: Question = a["q"]
    lang = "zh" if has_cjk(q.question) else "en"
    base = {"question": q.question.strip(), "lang": lang, "qid": q.qid, "synthetic": True}
    changed, how = claim
    return [
        {"id": f"{n:03d}-support-true", "kind": "support", **base, "claim": a["sentence"],
         "context": a["paragraph"], "label": True,
         "how": "the claim is the gold answer's sentence, copied from the context"},
        {"id": f"{n:03d}-support-false", "kind": "support", **base, "claim": changed,
         "context": a["paragraph"], "label": False, "negative": how,
         "how": f"{NEAR_MISSES[how]} ({RISKS['support']})"},
        {"id": f"{n:03d}-relevance-true", "kind": "relevance", **base, "answer": a["sentence"],
         "label": True, "how": "the answer is the sentence holding the gold answer"},
        {"id": f"{n:03d}-relevance-false", "kind": "relevance", **base, "answer": b["sentence"],
         "label": False, "negative": "same-article sentence",
         "how": f"the answer is the gold sentence of another question of the same article "
                f"({b['q'].qid}), without this question's answer ({RISKS['relevance']})"},
        {"id": f"{n:03d}-usefulness-true", "kind": "usefulness", **base, "reference": a["answer"],
         "passage": a["paragraph"], "label": True,
         "how": "the passage is the paragraph holding the gold answer span"},
        {"id": f"{n:03d}-usefulness-false", "kind": "usefulness", **base, "reference": a["answer"],
         "passage": passage, "label": False, "negative": "same-article passage",
         "how": f"another paragraph of the same article, without the answer's text, the one "
                f"sharing most words with the question ({RISKS['usefulness']})"},
    ]


def write_jsonl(items: list[dict[str, Any]], path: Path) -> None:
    from ablate.components.runtime.atomic import atomic_write
    atomic_write(Path(path), "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
