"""`metrics.labels`: BEIR (document-level qrels) defaults to document labels, where every
chunk of a relevant document is relevant; the mode is part of the label stage's key."""

from __future__ import annotations

from tests.specs import data_set, write_experiment


def _beir(folder):
    """A BEIR folder whose relevant document spans several 16-token chunks."""
    import json
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    long = " ".join(f"Cats purr and sleep for reason number {i}." for i in range(12))
    docs = [{"_id": "cats", "title": "Cats", "text": long},
            {"_id": "dogs", "title": "Dogs", "text": "Dogs bark at strangers."}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "why do cats purr"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tcats\t2\n")
    return folder


def _ctx(tmp_path, **metrics):
    from ablate.flows.run.context import RunOptions, build_context
    data = _beir(tmp_path / "beir")
    spec = write_experiment(tmp_path, "labels", file=f"e{len(metrics)}.yaml",
                            dataset=data_set(data, "beir"), tier="full", split="all",
                            metrics=metrics or None,
                            baseline={"chunking": {"size": 16, "overlap": 0},
                                      "retrieval": {"paths": ["bm25"], "depth": 5}})
    return build_context(spec, RunOptions(cache_dir=str(tmp_path / "cache")))


def test_beir_defaults_to_document_labels(tmp_path):
    from ablate.flows.run.stages import run_stage
    doc = _ctx(tmp_path)
    span = _ctx(tmp_path, labels="span")
    assert doc.label_mode == "document" and span.label_mode == "span"
    kd, ks = doc.plan.by_variant["baseline"], span.plan.by_variant["baseline"]
    assert kd["label"] != ks["label"] and kd["chunk"] == ks["chunk"]
    for ctx in (doc, span):
        for node in ctx.plan.nodes.values():
            if node.stage in ("chunk", "label"):
                run_stage(ctx, node)
    d = doc.store.read("label", kd["label"])
    s = span.store.read("label", ks["label"])
    chunks = doc.store.read("chunk", kd["chunk"]).filter(doc.store.read("chunk", kd["chunk"])["doc_id"] == "cats")
    assert chunks.height > 2
    # document labels: every chunk of the relevant document carries its grade (2); span
    # labels: a chunk covers a small share of the whole-document span, so none reaches 0.5
    assert sorted(d["chunk_id"]) == sorted(chunks["chunk_id"]) and set(d["gain"]) == {2.0}
    assert s.filter(s["gain"] >= 0.5).height == 0
