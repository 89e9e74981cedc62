"""`ablate reproduce` on a small collection generated here: figures worked out by hand
(MAP, P@30, index statistics), exit 0 within tolerance, 1 outside, 2 on bad input or
missing data; --run writes a run file trec_eval scores the same; the shipped
cacm-bm25.yaml loads (its data is not shipped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

DOCS = {"d1": "Apple banana", "d2": "apples", "d3": "Cherry", "d4": "cherry cherry date"}


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "corpus").mkdir(parents=True, exist_ok=True)
    (data / "corpus" / "docs.jsonl").write_text(
        "".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in DOCS.items()))
    (data / "topics.tsv").write_text("1\tthe apple\n2\tdates\n3\tbanana\n")
    # topic 1: d2 (shorter) ranks above d1, only d1 is relevant: AP 1/2; topic 2: d4
    # first and relevant: AP 1; topic 3 is not judged. MAP 0.75, P@30 = (1 + 1) / 30 / 2
    (data / "qrels.txt").write_text("1 0 d1 1\n1 0 d3 0\n2 0 d4 2\n")
    return data


def _spec(tmp_path: Path, **over) -> Path:
    spec = {"name": "tiny", "collection": {"path": "corpus", "format": "json"},
            "topics": {"path": "topics.tsv", "format": "tsv"}, "qrels": "qrels.txt",
            "pipeline": {"retrieval": {"paths": ["bm25"], "analyzer": "lucene_english",
                                       "depth": 1000,
                                       "bm25": {"variant": "lucene", "k1": 0.9, "b": 0.4}}},
            "expected": {"metrics": {"map": 0.75, "P_30": round(1 / 30, 4)},
                         "index": {"documents": 4, "unique_terms": 4, "total_terms": 7}},
            "tolerance": 0.0005}
    spec.update(over)
    f = tmp_path / "tiny.yaml"
    f.write_text(yaml.safe_dump(spec))
    return f


def test_reproduce_passes_and_writes_a_run(tmp_path, run_cli, capsys):
    data = _data(tmp_path)
    code = run_cli("reproduce", str(_spec(tmp_path)), "--data", str(data),
                   "--run", str(tmp_path / "run.txt"))
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "PASS" in out and "0.750000" in out
    lines = (tmp_path / "run.txt").read_text().splitlines()
    assert [x.split()[2] for x in lines if x.startswith("1 ")][:2] == ["d2", "d1"]
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with open(tmp_path / "run.txt") as fh:
        run = pytrec_eval.parse_run(fh)
    with open(data / "qrels.txt") as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    got = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert sorted(got) == ["1", "2"] and sum(v["map"] for v in got.values()) / 2 == 0.75


def test_reproduce_fails_outside_tolerance(tmp_path, run_cli, capsys):
    spec = _spec(tmp_path, expected={"metrics": {"map": 0.7490}, "index": {"total_terms": 7}})
    assert run_cli("reproduce", str(spec), "--data", str(_data(tmp_path))) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "map" in out
    spec = _spec(tmp_path, expected={"metrics": {"map": 0.75}, "index": {"total_terms": 8}})
    assert run_cli("reproduce", str(spec), "--data", str(_data(tmp_path))) == 1


def test_reproduce_bad_input_and_missing_data_exit_2(tmp_path, run_cli, capsys):
    spec = _spec(tmp_path)
    assert run_cli("reproduce", str(spec), "--data", str(tmp_path / "nowhere")) == 2
    err = capsys.readouterr().err
    assert "put it at" in err and str(tmp_path / "nowhere" / "corpus") in err
    assert len(err.strip().splitlines()) == 1
    bad = _spec(tmp_path, expected={"metrics": {"mapp": 0.5}})
    assert run_cli("reproduce", str(bad), "--data", str(_data(tmp_path))) == 2
    assert "expected.metrics.mapp" in capsys.readouterr().err
    bad = _spec(tmp_path, pipeline={"retrieval": {"bm25": {"variant": "tfidf"}}})
    assert run_cli("reproduce", str(bad)) == 2
    assert "pipeline.retrieval.bm25.variant" in capsys.readouterr().err
    data = _data(tmp_path)
    (data / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 yes\n")
    assert run_cli("reproduce", str(_spec(tmp_path)), "--data", str(data)) == 2
    assert "qrels.txt:2: field 'relevance'" in capsys.readouterr().err


def test_shipped_cacm_regression_loads():
    from ablate.components.export import regression
    reg = regression.load(ROOT / "experiments" / "regressions" / "cacm-bm25.yaml")
    assert reg.metrics == {"map": 0.3123, "P_30": 0.1942}
    assert reg.index == {"documents": 3204, "unique_terms": 14363, "total_terms": 320968}
    assert reg.cfg.retrieval.bm25.variant == "lucene" and reg.cfg.retrieval.bm25.k1 == 0.9


def test_manifest_index_statistics_for_trec_collections_only():
    from types import SimpleNamespace

    from ablate.components.contract.config import PipelineConfig
    from ablate.components.contract.records import Document
    from ablate.flows.outputs.index_stats import trec_index_stats
    docs = tuple(Document(k, v) for k, v in DOCS.items())
    cfgs = [PipelineConfig.model_validate({"retrieval": {"paths": ["bm25"], "analyzer": a}})
            for a in ("lucene_english", "default", "lucene_english")]
    ctx = SimpleNamespace(dataset=SimpleNamespace(source="trec:/x", documents=docs),
                          variants=[SimpleNamespace(config=c) for c in cfgs])
    assert trec_index_stats(ctx) == {
        "default": {"documents": 4, "unique_terms": 5, "total_terms": 7},  # apples != apple
        "lucene_english": {"documents": 4, "unique_terms": 4, "total_terms": 7}}
    ctx.dataset.source = "beir:/x"
    assert trec_index_stats(ctx) is None


def test_reproduce_latin_1_topics_exit_2_then_encoding_reads_them(tmp_path, run_cli, capsys):
    """Issue 58.4: a Latin-1 topics file was a UnicodeDecodeError traceback."""
    data = _data(tmp_path)
    (data / "topics.tsv").write_bytes("1\tthe apple\n2\tdates\n3\tbanana café\n".encode("latin-1"))
    assert run_cli("reproduce", str(_spec(tmp_path)), "--data", str(data)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ablate: error: {data / 'topics.tsv'}:3: not UTF-8 (")
    assert "set encoding: latin-1" in err and len(err.strip().splitlines()) == 1
    assert run_cli("reproduce", str(_spec(tmp_path, encoding="latin-1")), "--data", str(data)) == 0
    assert "PASS" in capsys.readouterr().out
    assert run_cli("reproduce", str(_spec(tmp_path, encoding="klingon")), "--data", str(data)) == 2
    assert "field 'encoding': unknown encoding 'klingon'" in capsys.readouterr().err


def _no_index(err: str) -> bool:
    return "indexing" not in err


@pytest.mark.parametrize("where", ["folder", "missing parent", "under a file", "qrels",
                                   "topics", "regression file", "in the collection"])
def test_a_bad_run_path_is_refused_before_indexing(tmp_path, run_cli, capsys, where):
    """Issue 58.5: `--run` that cannot be written was a traceback after the whole run;
    naming the qrels overwrote them. Now one line, exit 2, before any indexing; no input
    changes."""
    data, spec = _data(tmp_path), _spec(tmp_path)
    (tmp_path / "a-file").write_text("x\n")
    run = {"folder": tmp_path, "missing parent": tmp_path / "no" / "run.txt",
           "under a file": tmp_path / "a-file" / "run.txt", "qrels": data / "qrels.txt",
           "topics": data / "." / "topics.tsv", "regression file": spec,
           "in the collection": data / "corpus" / "run.jsonl"}[where]
    before = {p: p.read_bytes() for p in (data / "qrels.txt", data / "topics.tsv", spec)}
    assert run_cli("reproduce", str(spec), "--data", str(data), "--run", str(run)) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"ablate: error: {run}: field '--run': ")
    assert len(err.strip().splitlines()) == 1 and _no_index(err) and out == ""
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in (data / "corpus").iterdir()) == ["docs.jsonl"]


def test_a_read_only_run_folder_is_refused_before_indexing(tmp_path, run_cli, capsys):
    import os
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder (the other cases hold for root)")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert run_cli("reproduce", str(_spec(tmp_path)), "--data", str(_data(tmp_path)),
                       "--run", str(ro / "run.txt")) == 2
    finally:
        ro.chmod(0o755)
    err = capsys.readouterr().err
    assert "cannot be written" in err and _no_index(err) and len(err.strip().splitlines()) == 1


def test_a_failed_run_write_is_one_line_after_the_table(tmp_path, run_cli, capsys, monkeypatch):
    """A full device at the end: the table is printed first, then one line, exit 2, and no
    partial run file is left."""
    import errno

    from ablate.components.runtime import atomic

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    run = tmp_path / "run.txt"
    code = run_cli("reproduce", str(_spec(tmp_path)), "--data", str(_data(tmp_path)),
                   "--run", str(run))
    monkeypatch.undo()
    out, err = capsys.readouterr()
    assert code == 2
    assert "PASS" in out and "0.750000" in out
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"ablate: error: {run}: field '--run': cannot be written (")
    assert "No space left on device" in last and "ablate: error" not in err.strip().splitlines()[0]
    assert not run.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
