"""A run's start, made faster without changing a byte: the data set's fingerprint (no
deep copy of every record) and the tiers' stratified order (computed once per pool and
seed) give exactly what the former code gave (kept here as the reference)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest

from ablate.components.contract.records import Document, Question, Span
from ablate.components.data import load_dataset
from ablate.components.data.fingerprint import fingerprint
from ablate.components.data.tiers import _key, stratified_order

ROOT = Path(__file__).resolve().parents[3]


def reference_fingerprint(documents, questions) -> str:
    h = hashlib.sha256()
    for kind, records, key in (("doc", documents, "doc_id"), ("q", questions, "qid")):
        for rec in sorted(records, key=lambda r: getattr(r, key)):
            plain = {k: v for k, v in asdict(rec).items() if k != "columns" or v}
            line = json.dumps([kind, plain], sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"), default=str)
            h.update(line.encode("utf-8"))
            h.update(b"\n")
    return "sha256:" + h.hexdigest()


def reference_order(questions, seed, salt):
    strata: dict = {}
    for q in questions:
        strata.setdefault((q.answerable, q.type or ""), []).append(q)
    keyed = []
    for members in strata.values():
        members.sort(key=lambda q: (_key(seed, salt, q.qid), q.qid))
        n = len(members)
        for i, q in enumerate(members):
            keyed.append(((i + 0.5) / n, _key(seed, salt + "/tie", q.qid), q.qid, q))
    keyed.sort(key=lambda t: t[:3])
    return [t[3] for t in keyed]


@pytest.fixture(scope="module")
def demo():
    return load_dataset(ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json")


def test_fingerprint_of_the_demo_data_is_unchanged(demo):
    assert fingerprint(demo.documents, demo.questions) == \
        reference_fingerprint(demo.documents, demo.questions) == demo.fingerprint


def test_fingerprint_of_every_kind_of_value_is_unchanged():
    docs = [Document("d2", "台灣的首都", title=None, credibility=0.5,
                     metadata={"tags": ("a", "b"), "n": 1, "x": float("nan"), "nested": {"k": [1, (2, 3)]},
                               "when": Path("/tmp/x"), "flag": True}),
            Document("d1", "text", title="T", source="s")]
    qs = [Question("q1", "何？", ("答",), True,
                   ((Span("d2", 0, 2), Span("d2", 1, 3, grade=0.5)),),
                   cluster="c", type="what", tier="smoke", split="dev"),
          Question("q0", "none?", (), False)]
    assert fingerprint(docs, qs) == reference_fingerprint(docs, qs)


def test_stratified_order_is_unchanged(demo):
    qs = list(demo.questions)
    for seed, salt in ((13, "tier"), (13, "split"), (7, "tier")):
        assert [q.qid for q in stratified_order(qs, seed, salt)] == \
            [q.qid for q in reference_order(qs, seed, salt)]
    # the same qid twice, other objects: positions, not qids, are kept
    twins = [Question("q", "a", (), True), Question("q", "b", (), True),
             Question("r", "c", (), False, type="who")]
    assert [q.question for q in stratified_order(twins, 1, "tier")] == \
        [q.question for q in reference_order(twins, 1, "tier")]
    again = [Question(q.qid, q.question + "!", q.answers, q.answerable) for q in qs[:50]]
    assert all(a is b for a, b in zip(stratified_order(again, 13, "tier"),
                                      [q for q in reference_order(again, 13, "tier")]))
