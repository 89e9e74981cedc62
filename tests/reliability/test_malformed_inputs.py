"""Malformed data sets and experiment files through the real CLI (`ablate run`): each
gives exit code 2 and one line on stderr naming file, line and field, no traceback, and
leaves nothing behind (no output root, no cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOCS = [{"doc_id": "d1", "text": "Paris is the capital of France. It lies on the Seine."},
        {"doc_id": "d2", "text": "Berlin is the capital of Germany."}]
QUESTIONS = [
    {"qid": "q1", "question": "What is the capital of France?", "answers": ["Paris"],
     "answerable": True, "evidence": [[{"doc_id": "d1", "start": 0, "end": 5}]]},
    {"qid": "q2", "question": "What is the capital of Mars?", "answers": [],
     "answerable": False, "evidence": []},
]
SPEC = """\
name: malformed
dataset: {path: data, format: jsonl}
smoke_size: 2
baseline:
  chunking: {size: 32, overlap: 4}
  retrieval: {paths: [bm25]}
  fusion: {rrf_k: 60}
  rerank: {method: composite, weights: {fusion: 1.0}}
  context: {budget: 64}
  generator: {name: extractive}
sweeps:
  - variable: fusion.rrf_k
    values: [10, 200]
"""


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def q(i: int, **changes) -> dict:
    return {**QUESTIONS[i], **changes}


def d(i: int, **changes) -> dict:
    return {**DOCS[i], **changes}


# (id, spec edit (old, new) or None, corpus text or None, questions text or None,
#  file the error names, its line, its field or None)
S, C, Q = "exp.yaml", "data/corpus.jsonl", "data/questions.jsonl"
CASES = [
    # experiment files
    ("yaml-syntax", ("context: {budget: 64}", "context: budget: 64"), None, None, S, 9, None),
    ("yaml-not-mapping", (SPEC, "- just\n- a list\n"), None, None, S, 1, None),
    ("unknown-top-field", ("smoke_size: 2", "smoke_size: 2\nsweepz: []"), None, None, S, 4, "sweepz"),
    ("unknown-nested-field", ("  fusion: {rrf_k: 60}", "  fusion: {rrf_k: 60, rrfk: 3}"),
     None, None, S, 7, "baseline.fusion.rrfk"),
    ("wrong-type", ("size: 32", "size: big"), None, None, S, 5, "baseline.chunking.size"),
    ("missing-dataset", ("dataset: {path: data, format: jsonl}\n", ""), None, None, S, 1, "dataset"),
    ("unknown-format", ("format: jsonl", "format: csv"), None, None, S, 2, "dataset.format"),
    ("zero-budget", ("budget: 64", "budget: 0"), None, None, S, 9, "baseline.context.budget"),
    ("negative-rerank-weight", ("{fusion: 1.0}", "{fusion: 1.0, semantic: -0.5}"), None, None,
     S, 8, "baseline.rerank.weights"),
    ("overlap-not-below-size", ("overlap: 4", "overlap: 32"), None, None, S, 5, "baseline.chunking"),
    ("unknown-generator", ("name: extractive", "name: gpt-17"), None, None, S, 10,
     "baseline.generator.name"),
    ("unknown-chunker", ("{size: 32,", "{method: paragraphs, size: 32,"), None, None, S, 5,
     "baseline.chunking.method"),
    ("unknown-retrieval-path", ("paths: [bm25]", "paths: [bm25, splade]"), None, None, S, 6,
     "baseline.retrieval.paths"),
    ("unknown-sweep-variable", ("variable: fusion.rrf_k", "variable: fusion.rrf_kk"), None, None,
     S, 12, None),
    ("bad-sweep-value", ("values: [10, 200]", "values: [10, -5]"), None, None, S, 13,
     "sweeps.0.values.1"),
    ("empty-sweep-values", ("values: [10, 200]", "values: []"), None, None, S, 13, "sweeps.0.values"),
    ("unknown-tier", ("smoke_size: 2", "smoke_size: 2\ntier: huge"), None, None, S, 4, "tier"),
    ("zero-workers", ("smoke_size: 2", "smoke_size: 2\nrunner: {workers: 0}"), None, None, S, 4,
     "runner.workers"),
    ("dataset-not-found", ("path: data,", "path: nowhere,"), None, None, S, 2, "dataset.path"),
    # data sets (native JSONL)
    ("bad-json", None, None, jsonl(QUESTIONS[:1]) + '{"qid": "q2", \n', Q, 2, None),
    ("not-utf8", None, b'{"doc_id": "d1", "text": "caf\xe9"}\n', None, C, 1, None),
    ("line-not-object", None, None, jsonl(QUESTIONS[:1]) + "[1, 2]\n", Q, 2, None),
    ("wrong-type-answerable", None, None, jsonl([q(0, answerable="yes"), q(1)]), Q, 1, "answerable"),
    ("wrong-type-credibility", None, jsonl([d(0), d(1, credibility="high")]), None, C, 2,
     "credibility"),
    ("credibility-out-of-range", None, jsonl([d(0, credibility=1.5), d(1)]), None, C, 1,
     "credibility"),
    ("missing-question-field", None, None,
     jsonl([q(0), {k: v for k, v in q(1).items() if k != "question"}]), Q, 2, "question"),
    ("duplicate-qid", None, None, jsonl([q(0), q(1, qid="q1")]), Q, 2, "qid"),
    ("duplicate-doc-id", None, jsonl([d(0), d(1, doc_id="d1")]), None, C, 2, "doc_id"),
    ("empty-document", None, jsonl([d(0), d(1, text="  ")]), None, C, 2, "text"),
    ("span-beyond-text", None, None,
     jsonl([q(0, evidence=[[{"doc_id": "d1", "start": 40, "end": 400}]]), q(1)]), Q, 1,
     "evidence[0][0].end"),
    ("span-negative-start", None, None,
     jsonl([q(0, evidence=[[{"doc_id": "d1", "start": -1, "end": 5}]]), q(1)]), Q, 1,
     "evidence[0][0].start"),
    ("span-empty", None, None,
     jsonl([q(0, evidence=[[{"doc_id": "d1", "start": 5, "end": 5}]]), q(1)]), Q, 1,
     "evidence[0][0].end"),
    ("span-unknown-doc", None, None,
     jsonl([q(0, evidence=[[{"doc_id": "d9", "start": 0, "end": 5}]]), q(1)]), Q, 1,
     "evidence[0][0].doc_id"),
    ("unanswerable-with-evidence", None, None,
     jsonl([q(0), q(1, evidence=[[{"doc_id": "d2", "start": 0, "end": 6}]])]), Q, 2, "evidence"),
    ("evidence-not-list", None, None, jsonl([q(0, evidence="d1:0-5"), q(1)]), Q, 1, "evidence"),
]

CASES += [
    ("empty-corpus", None, "", jsonl(QUESTIONS[1:]), C, None, None),
    ("duplicate-yaml-key", ("name: malformed", "name: malformed\nname: other"), None, None, S, 2, "name"),
    ("negative-fusion-weight", ("{rrf_k: 60}", "{rrf_k: 60, weights: {bm25: -1.0}}"),
     None, None, S, 7, "baseline.fusion.weights"),
]


def test_at_least_twenty_cases():
    assert len(CASES) >= 20 and len({c[0] for c in CASES}) == len(CASES)


def _write(tmp: Path, edit, corpus, questions) -> Path:
    data = tmp / "data"
    data.mkdir()
    for name, text, default in (("corpus.jsonl", corpus, jsonl(DOCS)),
                                ("questions.jsonl", questions, jsonl(QUESTIONS))):
        body = default if text is None else text
        (data / name).write_bytes(body if isinstance(body, bytes) else body.encode())
    spec = SPEC if edit is None else SPEC.replace(*edit)
    assert edit is None or spec != SPEC, f"edit {edit!r} changed nothing"
    (tmp / S).write_text(spec)
    return tmp / S


@pytest.mark.parametrize("case,edit,corpus,questions,file,line,field",
                         CASES, ids=[c[0] for c in CASES])
def test_malformed_input_exits_2_with_one_line(case, edit, corpus, questions, file, line, field,
                                               tmp_path, capsys, monkeypatch):
    from ablate.flows import sweep
    from ablate.flows.cli import main as cli
    from ablate.flows.run.context import forget_contexts

    def must_not_run(*args, **kwargs):
        raise AssertionError(f"{case}: validation passed and the sweep started")

    monkeypatch.setattr(sweep, "run_sweep", must_not_run)
    monkeypatch.chdir(tmp_path)  # the CLI's project root: nothing may appear here either
    spec = _write(tmp_path, edit, corpus, questions)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    forget_contexts()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", str(spec), "--out", str(tmp_path / "runs"),
                  "--cache-dir", str(tmp_path / "cache"), "--no-mlflow"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ablate: error: ") and "Traceback" not in err and out == ""
    where = str(tmp_path / file) + (f":{line}:" if line is not None else ":")
    assert where in lines[0], (where, lines[0])
    if field is not None:
        assert f"field '{field}'" in lines[0], lines[0]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
