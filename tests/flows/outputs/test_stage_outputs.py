"""Checks on real stage outputs of a small sweep, run directly (no Prefect, no MLflow):
its documents and questions carry ids with spaces and other TREC-unsafe characters.

- `ablate export` of that sweep: no traceback, ids percent-encoded with an id_map.tsv, and
  EVERY retrieval metric ablate reports (hit, recall, precision, MRR, NDCG, full support
  at every K, at candidates / reranked / final) recomputed by ranx (and pytrec_eval when
  installed) from the exported files;
- the no-effect detector on real stage outputs;
- the live embedder-window share of the manifest against the real embedder's tokenizer;
- a closed-book variant is scored without the context it never saw.

BM25 only, the composite reranker on source credibility (so reranked differs from the
candidates), the extractive generator: a few seconds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from urllib.parse import unquote

import polars as pl
import pytest

from tests.conftest import FIXTURES
from tests.specs import FAST_STATS, data_set, pipeline, vary, write_experiment

KS = (1, 2, 3, 5, 10)
RENAME = {"normans": "Time off for family and dependants", "huguenot": "100% Zürich #1 ~ x",
          "computational-complexity-theory": "tab\there"}


def _weird_dataset(folder: Path) -> Path:
    """squad_tiny as native JSONL, with TREC-unsafe doc ids and qids, varied credibility
    and a two-group question."""
    from ablate.components.data import load_dataset
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    folder.mkdir()
    with (folder / "corpus.jsonl").open("w") as f:
        for i, d in enumerate(ds.documents):
            f.write(json.dumps({"doc_id": RENAME[d.doc_id], "text": d.text,
                                "credibility": [0.9, 0.2, 0.5][i % 3]}) + "\n")

    def span(s):
        return {"doc_id": RENAME[s.doc_id], "start": s.start, "end": s.end}

    rows = []
    answerable = [q for q in ds.questions if q.evidence]
    for i, q in enumerate(ds.questions):
        rows.append({"qid": f"q {i}/{q.qid[:6]}" if i % 2 else q.qid, "question": q.question,
                     "answers": list(q.answers), "answerable": q.answerable,
                     "evidence": [[span(s) for s in g] for g in q.evidence]})
    a, b = answerable[0], answerable[-1]  # a multi-hop question: two groups, two documents
    rows.append({"qid": "multi hop", "question": f"{a.question} {b.question}",
                 "answers": list(a.answers), "answerable": True,
                 "evidence": [[span(s) for s in a.evidence[0]], [span(s) for s in b.evidence[0]]]})
    with (folder / "questions.jsonl").open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return folder


def _fake_model(self, question, context, system, user):
    """Stands in for SmolLM2: knows every other answer, refuses the rest."""
    from ablate.components.contract.records import Answer
    if question.answers and sum(map(ord, question.qid)) % 2:
        return Answer(question.answers[0], refused=False, tokens_in=len(user))
    return Answer("I don't know.", refused=True, tokens_in=len(user))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from ablate.flows.outputs.write import write_outputs
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    tmp = tmp_path_factory.mktemp("weird")
    data = _weird_dataset(tmp / "data")
    spec = write_experiment(
        tmp, "weird-ids", dataset=data_set(data, "jsonl"), tier="full", split="all", seed=1,
        metrics={"ks": list(KS), "label_threshold": 0.5}, stats=FAST_STATS,
        baseline=pipeline(chunking={"size": 48, "overlap": 16},
                          rerank={"method": "composite", "depth": 6, "weights": {"source": 1.0}},
                          context={"budget": 120}),
        sweeps=[vary("fusion.rrf_k", 5),  # one path: fusion is not read, the same stages
                # other stage keys, the same top 6 and so the same contexts
                vary("retrieval.depth", 9),
                vary("context.budget", 60),
                vary("generator.threshold", 1.0),
                vary("chunking.size", 300),  # some chunks longer than MiniLM's 256-piece window
                vary("generator.name", "closed_book")])  # the model is faked (_fake_model)
    ctx = build_context(str(spec), RunOptions(cache_dir=str(tmp / "cache")))
    from ablate.components.generation.base import BaseGenerator
    from ablate.components.generation.llama_local import LlamaLocalGenerator
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LlamaLocalGenerator, "_generate_one", _fake_model)
        # one question at a time through the fake (the torch backend batches otherwise)
        mp.setattr(LlamaLocalGenerator, "_generate_batch", BaseGenerator._generate_batch)
        for node in ctx.plan.nodes.values():
            run_stage(ctx, node)
    out = write_outputs(ctx, tmp / "runs", ctx.started, {})
    return ctx, out


def test_no_effect_detector_on_real_stage_outputs(sweep):
    from ablate.flows.outputs.write import no_effect_variants
    ctx, out = sweep
    keys = ctx.plan.by_variant
    assert keys["fusion.rrf_k=5"] == keys["baseline"]
    assert keys["retrieval.depth=9"]["fuse"] != keys["baseline"]["fuse"]
    per_query = pl.read_parquet(out / "per_query.parquet")
    # the detector's answer, checked against the outputs themselves
    base = per_query.filter(pl.col("variant") == "baseline").sort("qid")
    for name in ("retrieval.depth=9", "context.budget=60", "generator.threshold=1"):
        other = per_query.filter(pl.col("variant") == name).sort("qid")
        same_answers = other["answer"].to_list() == base["answer"].to_list()
        same_ctx = other["final/context_tokens"].to_list() == base["final/context_tokens"].to_list()
        assert (same_answers and same_ctx) == (name == "retrieval.depth=9"), name
    assert no_effect_variants(ctx) == ["fusion.rrf_k=5", "retrieval.depth=9"]
    assert json.loads((out / "manifest.json").read_text())["no_effect"] == \
        ["fusion.rrf_k=5", "retrieval.depth=9"]


def _as_if_embedded(ctx):
    """The sweep's context with every variant on the dense path (its chunkings and stored
    chunks unchanged): the fixture's variants are bm25-only, so the real manifest records
    no embedder statistics (asserted), and these are what a dense sweep would record."""
    from types import SimpleNamespace

    from ablate.flows.outputs.manifest import chunking_stats
    assert all("embedder" not in e for e in chunking_stats(ctx).values())
    dense = [SimpleNamespace(name=v.name, config=v.config.model_copy(update={
        "retrieval": v.config.retrieval.model_copy(update={"paths": ("dense",)})}))
        for v in ctx.variants]
    return SimpleNamespace(variants=dense, plan=ctx.plan, store=ctx.store, dataset=ctx.dataset)


def test_embedder_window_share_matches_the_embedder(sweep):
    """The manifest's share of chunks longer than the embedder's window, against the
    embedder's own tokenizer (with its [CLS]/[SEP]) and its max_seq_length."""
    from tokenizers import Tokenizer

    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.models import dense_model_path
    from ablate.flows.outputs.manifest import chunking_stats
    from ablate.flows.run.stages import chunks_of
    ctx, out = sweep
    model = Path(dense_model_path("all-MiniLM-L6-v2"))
    window = DenseEncoder(model, None).max_seq_length  # read from its config, no model load
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    stats = chunking_stats(_as_if_embedded(ctx))
    shares = {}
    for key, entry in stats.items():
        chunks = chunks_of(ctx, key)
        lengths = [len(e.ids) for e in tok.encode_batch([c.text for c in chunks])]
        cut = sum(n > window for n in lengths)
        assert entry["chunks"] == len(chunks)
        assert entry["share_over_embedder_window"] == round(cut / len(chunks), 4), entry
        shares[entry["chunking"]["size"]] = entry["share_over_embedder_window"]
    assert shares[48] == 0.0 and shares[300] > 0.0
    man = json.loads((out / "manifest.json").read_text())
    assert man["chunkings"] == json.loads(json.dumps(chunking_stats(ctx)))


def test_embedder_cut_matches_the_embedder(sweep):
    """How much text the embedder's window cuts (word pieces beyond it, share of pieces
    never read), against the embedder's own tokenizer and its max_seq_length."""
    from tokenizers import Tokenizer

    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.models import dense_model_path
    from ablate.flows.outputs.manifest import chunking_stats
    from ablate.flows.run.stages import chunks_of
    ctx, _ = sweep
    model = Path(dense_model_path("all-MiniLM-L6-v2"))
    max_len = DenseEncoder(model, None).max_seq_length
    full = Tokenizer.from_file(str(model / "tokenizer.json"))
    full.no_truncation()
    full.no_padding()
    stats = chunking_stats(_as_if_embedded(ctx))
    for key, entry in stats.items():
        lengths = [len(full.encode(c.text).ids) for c in chunks_of(ctx, key)]
        beyond = [n - max_len for n in lengths if n > max_len]
        assert entry["embedder_window"] == max_len
        assert entry["pieces_cut_max"] == max(beyond, default=0)
        assert entry["pieces_cut_mean"] == (round(sum(beyond) / len(beyond), 2) if beyond else 0.0)
        assert entry["share_of_pieces_unseen"] == round(sum(beyond) / sum(lengths), 4), entry
    assert any(e["share_of_pieces_unseen"] > 0 for e in stats.values())


def _trec_eval(qrels_path: Path, run_path: Path, measures: dict[str, str]) -> dict[str, dict]:
    """ablate metric name -> {decoded qid: value} by pytrec_eval (trec_eval's C code) on
    the exported files; a question missing from its answer scores 0 (nothing relevant
    judged or nothing retrieved). MRR@K: reciprocal rank on the run cut at K."""
    import pytrec_eval
    with qrels_path.open() as f:
        qrels = pytrec_eval.parse_qrel(f)
    with run_path.open() as f:
        run = pytrec_eval.parse_run(f)
    out: dict[str, dict] = {}
    for ours, theirs in measures.items():
        if theirs.startswith("recip_rank@"):
            k = int(theirs.split("@")[1])
            cut = {q: dict(sorted(d.items(), key=lambda x: -x[1])[:k]) for q, d in run.items()}
            res = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
            out[ours] = {unquote(q): v["recip_rank"] for q, v in res.items()}
        else:
            res = pytrec_eval.RelevanceEvaluator(qrels, {theirs}).evaluate(run)
            key = theirs.replace(".", "_")
            out[ours] = {unquote(q): v[key] for q, v in res.items()}
    return out


def _ranx(qrels_path: Path, run_path: Path, measures: dict[str, str]) -> dict[str, dict]:
    """The same with ranx (an independent implementation); {} for an empty run file."""
    from ranx import Qrels, Run, evaluate
    if not run_path.read_text().strip():
        return {ours: {} for ours in measures}
    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    run = Run.from_file(str(run_path), kind="trec")
    evaluate(qrels, run, list(measures.values()), make_comparable=True)
    return {ours: {unquote(q): float(v) for q, v in run.scores[theirs].items()}
            for ours, theirs in measures.items()}


def test_export_of_unsafe_ids_reproduces_every_retrieval_metric(sweep, tmp_path, run_cli,
                                                                  capsys):
    """Every metric (hit, recall, precision, MRR, NDCG, full support), every K, every stage,
    per question, from the exported files by pytrec_eval, and by ranx for two variants."""
    ctx, out = sweep
    assert run_cli("export", str(out), "--out", str(tmp_path / "trec")) in (0, None)
    assert "Traceback" not in capsys.readouterr().err
    trec = tmp_path / "trec"
    info = json.loads((trec / "export.json").read_text())
    id_map = dict(line.split("\t") for line in
                  (trec / "id_map.tsv").read_text().splitlines()[1:])
    spaced = [e for e in id_map if e.startswith("Time%20off%20for%20family%20and%20dependants:")]
    assert spaced and id_map[spaced[0]].startswith("Time off for family and dependants:")
    tabbed = [e for e in id_map if e.startswith("tab%09here:")]
    assert tabbed and id_map[tabbed[0]].startswith("tab\\there:")  # escaped in the TSV
    assert "q%201/" in " ".join(id_map)  # qids too
    for encoded, original in id_map.items():
        assert unquote(encoded) == original.replace("\\t", "\t")
    for path in trec.glob("*.run"):
        for line in path.read_text().splitlines():
            assert len(line.split()) == 6, line
    per_query = pl.read_parquet(out / "per_query.parquet")
    trec_names = {}
    for k in KS:
        trec_names |= {f"hit_at_{k}": f"success.{k}", f"precision_at_{k}": f"P.{k}",
                       f"mrr_at_{k}": f"recip_rank@{k}", f"ndcg_at_{k}": f"ndcg_cut.{k}"}
    ranx_names = {f"{m}_at_{k}": f"{r}@{k}" for k in KS for m, r in (
        ("hit", "hit_rate"), ("precision", "precision"), ("mrr", "mrr"), ("ndcg", "ndcg"))}
    checked = 0
    for variant in ("baseline", "chunking.size=300", "context.budget=60", "retrieval.depth=9"):
        ours = per_query.filter(pl.col("variant") == variant)
        undefined = set(info["variants"][variant]["undefined"])
        assert undefined == set(ours.filter(~pl.col("answerable"))["qid"])
        for stage in ("candidates", "reranked", "final"):
            evaluators = [_trec_eval(trec / f"{variant}.qrels", trec / f"{variant}.{stage}.run",
                                     trec_names)]
            if variant in ("baseline", "chunking.size=300"):
                evaluators.append(_ranx(trec / f"{variant}.qrels",
                                        trec / f"{variant}.{stage}.run", ranx_names))
            groups = _trec_eval(trec / f"{variant}.groups.qrels",
                                trec / f"{variant}.{stage}.groups.run",
                                {f"hit_at_{k}": f"success.{k}" for k in KS})
            for row in ours.iter_rows(named=True):
                q = row["qid"]
                if q in undefined:
                    assert math.isnan(row[f"{stage}/ndcg_at_10"])
                    continue
                for theirs in evaluators:
                    for name, values in theirs.items():
                        assert row[f"{stage}/{name}"] == pytest.approx(values.get(q, 0.0),
                                                                     abs=1e-9), \
                            (variant, stage, q, name)
                n_groups = sum(1 for g in ctx.dataset.questions if g.qid == q
                               for _ in g.evidence)
                for k in KS:
                    hits = [groups[f"hit_at_{k}"].get(f"{q}~{g}", 0.0) for g in range(n_groups)]
                    assert row[f"{stage}/recall_at_{k}"] == pytest.approx(sum(hits) / n_groups,
                                                                         abs=1e-12)
                    assert row[f"{stage}/full_support_at_{k}"] == float(min(hits))
                checked += 1
    assert checked == 4 * 3 * sum(q.answerable for q in ctx.questions)
    multi = per_query.filter((pl.col("qid") == "multi hop") & (pl.col("variant") == "baseline"))
    assert 0 < multi["candidates/recall_at_10"][0] <= 1
    # graded qrels: not every label is 1
    grades = {int(line.split()[3]) for line in (trec / "baseline.qrels").read_text().splitlines()}
    assert len(grades) > 1


def test_closed_book_variant_is_scored_without_the_context(sweep):
    ctx, out = sweep
    per_query = pl.read_parquet(out / "per_query.parquet")
    closed = per_query.filter(pl.col("variant") == "generator.name=closed_book")
    base = per_query.filter(pl.col("variant") == "baseline")
    assert closed.height == base.height > 0
    assert closed["answer/lexical_support"].is_nan().all()
    assert not base["answer/lexical_support"].is_nan().all()
    answerable = closed.filter(pl.col("answerable"))
    assert set(answerable["bucket"]) == {"ok", "answer_wrong"}
    for r in answerable.iter_rows(named=True):  # by correctness only
        assert (r["bucket"] == "ok") == (r["answer/correct"] == 1.0), r["qid"]
    assert set(base["bucket"]) & {"retrieval_miss", "ranking_loss", "budget_cut"}


def test_bm25_indexes_are_kept_in_the_cache_folder(sweep):
    """The sweep's bm25 stages keep their indexes beside the stage entries (read back
    memory-mapped by later stages and runs), each complete."""
    from ablate.components.retrieval.lexical import bm25_disk
    ctx, _ = sweep
    folders = sorted((ctx.store.root / "indexes").glob("bm25-*"))
    assert len(folders) == 2  # chunk sizes 48 and 300
    assert all(bm25_disk.intact(f) for f in folders)


def test_outputs_and_cache_entries_honour_the_umask(sweep):
    """Issue 39.8: stage entries, cached generations, report.md and summary.txt were 0600
    (mkstemp); every file a run leaves is now created as open() would create it."""
    import stat

    from ablate.components.runtime.atomic import file_mode
    ctx, out = sweep
    files = [p for root in (out, ctx.store.root) for p in root.rglob("*")
             if p.is_file() and not p.name.startswith(".")]
    assert any(p.name == "report.md" for p in files) and any(p.suffix == ".sha256" for p in files)
    wrong = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in files
             if stat.S_IMODE(p.stat().st_mode) != file_mode()}
    assert not wrong, wrong
