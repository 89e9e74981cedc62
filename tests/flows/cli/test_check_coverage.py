"""`ablate check` warns, per swept chunking, how many evidence spans no chunk covers to the
label threshold (they can never be retrieved at that chunking); the count agrees with the
labeller's own labels (labels.label_chunks)."""

from __future__ import annotations

import re

from ablate.components.contract.records import Chunk, Question, Span
from ablate.components.text.span_coverage import uncoverable_spans
from tests.flows.direct import write_spec
from tests.specs import experiment, pipeline, vary


def _chunk(cid: str, start: int, end: int) -> Chunk:
    return Chunk(cid, "d", start, end, "x" * (end - start), end - start)


def test_a_span_cut_in_half_is_covered_at_half_and_not_above():
    q = Question("q", "?", ("a",), True, ((Span("d", 10, 20),),))
    chunks = [_chunk("c0", 0, 15), _chunk("c1", 15, 30)]
    assert uncoverable_spans(chunks, [q], 0.5) == (0, 1)
    assert uncoverable_spans(chunks, [q], 0.6) == (1, 1)
    assert uncoverable_spans([_chunk("c2", 0, 40)], [q], 1.0) == (0, 1)
    assert uncoverable_spans([], [q], 0.1) == (1, 1)  # no chunk of its document at all


def test_check_warns_per_chunking_with_the_labellers_count(run_cli, capsys, tmp_path):
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.labels import label_chunks
    from ablate.flows.run.context import RunOptions, build_context
    spec = write_spec(tmp_path, experiment(
        "coverage", tier="smoke", smoke_size=30, split="all", metrics={"label_threshold": 1.0},
        baseline=pipeline(chunking={"size": 48, "overlap": 0}), sweeps=[vary("chunking.size", 8)]))
    assert run_cli("check", str(spec), "--cache-dir", str(tmp_path / "c")) == 0
    out = capsys.readouterr().out
    found = dict(re.findall(r"^warning: chunking token_window size (\d+) \(overlap 0\): (\d+) of \d+ "
                            r"evidence spans have no chunk covering 1 of them", out, re.M))
    ctx = build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "c")))
    spans = {s for q in ctx.questions for g in q.evidence for s in g}
    docs = [d for d in ctx.dataset.documents if d.doc_id in {s.doc_id for s in spans}]
    for size in (48, 8):
        chunks = chunk_documents(docs, ctx.variants[0].config.chunking.model_copy(update={"size": size}),
                                 ctx.tokenizer)
        one = [Question(f"s{i}", "?", (), True, ((s,),)) for i, s in enumerate(sorted(
            spans, key=lambda s: (s.doc_id, s.start, s.end)))]
        labels = label_chunks(chunks, one)
        expected = sum(max(labels[q.qid][0].values(), default=0.0) < 1.0 for q in one)
        assert expected > 0 and found.get(str(size)) == str(expected), (size, expected, out)
