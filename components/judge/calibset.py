"""A calibration set whose labels are true by construction, built from an extractive QA
data set (SQuAD v2, DRCD: documents whose paragraphs are joined by blank lines, gold
answers as character spans).

For each sampled answerable question (seeded; one whose answer span lies inside one
sentence, with a partner question from another article), with P its paragraph and S the
sentence holding its answer span A:
- support, true: the claim is S itself, the context is P (a copied sentence is supported);
- support, false: S with A replaced by the gold answer of another question of the same
  article (same kind: digits for digits, a capitalised name for a capitalised name;
  absent from S) against the same P: the sentence now names a different entity of the
  article in A's place, which P does not say;
- relevance, true: S as the answer to the question (it contains the gold answer);
- relevance, false: the partner's S (a sentence answering a question about another
  article) as the answer;
- usefulness, true: P for the question with A as the reference answer;
- usefulness, false: the partner's P (another article; A does not occur in it).
The labels hold by construction, with one residual risk stated in every `how`: a swapped
sentence can be true by coincidence when P also says it (P names that entity in that role
elsewhere). Nothing here asks a model.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

from ablate.components.cjk import has_cjk
from ablate.components.records import Dataset, Question
from ablate.components.sentences import sentence_spans

JOINER = "\n\n"


def _paragraph(text: str, start: int, end: int) -> tuple[int, int] | None:
    """[s, e) of the blank-line-separated paragraph holding [start, end), else None."""
    s = text.rfind(JOINER, 0, start)
    s = 0 if s < 0 else s + len(JOINER)
    e = text.find(JOINER, end)
    e = len(text) if e < 0 else e
    return (s, e) if s <= start and end <= e else None


def _kind(text: str) -> str:
    if any(ch.isdigit() for ch in text):
        return "number"
    if has_cjk(text):
        return "cjk"
    return "name" if text[:1].isupper() else "phrase"


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


def build(dataset: Dataset, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """6 items per sampled question (module doc), n questions, in a seeded order."""
    anchors, by_doc = anchors_of(dataset)
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
        swapped = swap(a, [anchors[o] for o in by_doc[a["doc"]] if o != qid], rng)
        partner = partner_of(a, anchors, qids, rng)
        if swapped is None or partner is None:
            continue
        used_docs.add(a["doc"])
        items += _items(len(items) // 6 + 1, a, swapped, partner)
    return items


def swap(a: dict[str, Any], others: list[dict[str, Any]], rng: random.Random) -> str | None:
    """The sentence with its answer replaced by another answer of the article (same kind)."""
    sent, (s, e) = a["sentence"], a["a"]
    kind = _kind(a["answer"])
    norm = a["answer"].strip().lower()
    pool = sorted({o["answer"].strip() for o in others
                   if _kind(o["answer"]) == kind and o["answer"].strip().lower() != norm
                   and o["answer"].strip().lower() not in sent.lower()
                   and norm not in o["answer"].strip().lower()
                   and len(o["answer"].split()) <= 8})
    if not pool:
        return None
    return sent[:s] + rng.choice(pool) + sent[e:]


def partner_of(a: dict[str, Any], anchors: dict[str, dict[str, Any]], qids: list[str],
             rng: random.Random) -> dict[str, Any] | None:
    """An anchor from another article whose paragraph does not contain a's answer."""
    start = rng.randrange(len(qids))
    for k in range(len(qids)):
        b = anchors[qids[(start + k) % len(qids)]]
        if b["doc"] != a["doc"] and a["answer"].strip().lower() not in b["paragraph"].lower():
            return b
    return None


def _items(n: int, a: dict[str, Any], swapped: str, b: dict[str, Any]) -> list[dict[str, Any]]:
    q: Question = a["q"]
    lang = "zh" if has_cjk(q.question) else "en"
    base = {"question": q.question.strip(), "lang": lang, "source": q.qid}
    risk = " (residual risk: the paragraph may say the swapped sentence too)"
    return [
        {"id": f"{n:03d}-support-true", "kind": "support", **base, "claim": a["sentence"],
         "context": a["paragraph"], "label": True,
         "how": "the claim is the gold answer's sentence, copied from the context"},
        {"id": f"{n:03d}-support-false", "kind": "support", **base, "claim": swapped,
         "context": a["paragraph"], "label": False,
         "how": "the gold sentence with its answer swapped for another answer of the article" + risk},
        {"id": f"{n:03d}-relevance-true", "kind": "relevance", **base, "answer": a["sentence"],
         "label": True, "how": "the answer is the sentence holding the gold answer"},
        {"id": f"{n:03d}-relevance-false", "kind": "relevance", **base, "answer": b["sentence"],
         "label": False, "how": f"the answer is the gold sentence of a question on another "
                                f"article ({b['q'].qid})"},
        {"id": f"{n:03d}-usefulness-true", "kind": "usefulness", **base, "reference": a["answer"],
         "passage": a["paragraph"], "label": True,
         "how": "the passage is the paragraph holding the gold answer span"},
        {"id": f"{n:03d}-usefulness-false", "kind": "usefulness", **base, "reference": a["answer"],
         "passage": b["paragraph"], "label": False,
         "how": "a paragraph of another article, without the answer's text"},
    ]


def write_jsonl(items: list[dict[str, Any]], path: Path) -> None:
    from ablate.components.atomic import atomic_write
    atomic_write(Path(path), "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))


