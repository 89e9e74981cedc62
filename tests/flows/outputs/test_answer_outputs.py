"""A small sweep on long references (the tiny SQuAD fixture, each reference the whole gold
sentence), run directly: the manifest records answer and reference lengths and names the
variants with long references, the report warns and reads answer/content_f1, per_query
carries the extractive support as `confidence`, and the report has the risk-coverage
section with its plot. Extractive answers only: a few seconds."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.conftest import FIXTURES
from tests.flows.direct import run_direct
from tests.specs import FAST_STATS, data_set, experiment, vary


def _long_reference_set(folder: Path) -> Path:
    from ablate.components.data import load_dataset
    from ablate.components.text.sentences import sentence_spans
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    docs = ds.doc_by_id()
    folder.mkdir()
    with (folder / "corpus.jsonl").open("w") as f:
        f.writelines(json.dumps({"doc_id": d.doc_id, "text": d.text}) + "\n" for d in ds.documents)
    with (folder / "questions.jsonl").open("w") as f:
        for q in ds.questions:
            answers = []
            if q.evidence:
                s = q.evidence[0][0]
                text = docs[s.doc_id].text
                answers = [next(text[a:b] for a, b in sentence_spans(text, latin="capital")
                                if a <= s.start < b)]
            f.write(json.dumps({
                "qid": q.qid, "question": q.question, "answers": answers,
                "answerable": bool(answers),
                "evidence": [[{"doc_id": x.doc_id, "start": x.start, "end": x.end} for x in g]
                             for g in q.evidence] if answers else []}) + "\n")
    return folder


def test_long_references_are_warned_and_the_risk_coverage_section_is_written(tmp_path):
    data = _long_reference_set(tmp_path / "data")
    spec = experiment("long-refs", dataset=data_set(data, "jsonl"), tier="full",
                      stats=FAST_STATS, metrics={"key": ["answer/f1", "answer/em"]},
                      sweeps=[vary("generator.threshold", 0.6)])
    _, folder, _ = run_direct(tmp_path, spec)
    manifest = json.loads((folder / "manifest.json").read_text())
    lengths = manifest["answer_lengths"]
    assert "baseline" in lengths["long_references"]
    base = lengths["variants"]["baseline"]
    assert base["reference_median"] > 3 * base["answer_median"]
    per_query = pl.read_parquet(folder / "per_query.parquet")
    answered = per_query.filter(pl.col("answer/refused") == 0.0)
    assert answered.height and answered["confidence"].is_not_nan().all()
    assert (answered["confidence"] >= 0.3).all()  # the support the threshold applies to
    assert "answer/content_f1" in per_query.columns
    report = (folder / "report.md").read_text()
    assert "- Long references: the median reference is more than 3x" in report
    assert "## Refusal: risk and coverage" in report
    assert (folder / "plots" / "risk_coverage.svg").is_file()
