"""Sharded retrieval on a real Dask cluster (a LocalCluster of 2 worker processes, started
once for this module): the merged rankings equal one index's (bm25 on the demo corpus,
dense on a part of it with the bundled model), through the flow (runner.shards: 2 stores
the rankings runner.shards: 1 does) and the bad-input errors (one line, exit code 2)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ablate.components.contract.config import ChunkingConfig, PipelineConfig
from ablate.components.text.tokenizer import get_tokenizer
from tests.conftest import ROOT
from tests.specs import pipeline, write_experiment

DEMO = ROOT / "experiments" / "data" / "squad2-dev-half" / "dev-v2.0.json"


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes; also the cluster the flow's shards use
    (flows.run.sharded keeps one local cluster per worker count)."""
    from distributed import Client, LocalCluster

    from ablate.flows.run import sharded
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster, set_as_default=False)
    sharded._LOCAL[2] = c
    yield c
    sharded._LOCAL.pop(2, None)
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def demo():
    from ablate.components.data import load_dataset
    from ablate.components.text.chunking import chunk_documents
    data = load_dataset(DEMO, format="squad")
    chunks = chunk_documents(data.documents, ChunkingConfig(size=64, overlap=16), get_tokenizer())
    return chunks, list(data.questions)[:120]


def test_bm25_sharded_equals_one_index(client, demo, tmp_path):
    from ablate.components.retrieval.stages import retrieve_path
    from ablate.flows.run import sharded
    chunks, questions = demo
    assert len(chunks) > 1000
    cfg = PipelineConfig(retrieval={"paths": ["bm25"], "depth": 30, "analyzer": "english_stem"})
    whole = retrieve_path("bm25", chunks, questions, cfg)
    latency: dict[str, float] = {}
    got = sharded.search(client, tmp_path, "k" * 24, "bm25", chunks, questions, cfg, None, 3,
                         latency)
    assert got == whole
    assert set(latency) == set(whole) and all(v > 0 for v in latency.values())
    # the workers read their rows from the texts file in the cache folder
    assert (tmp_path / "shards" / "kk" / f"{'k' * 24}.parquet").is_file()
    ran = client.run(lambda: len(__import__("ablate.components.retrieval.lexical.sharding",
                                            fromlist=["_HELD"])._HELD))
    assert set(ran.values()) == {0}  # the analysed shards were used and let go


def test_dense_sharded_equals_one_index(client, demo, tmp_path):
    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.retrieval.resources import Resources
    from ablate.components.retrieval.stages import retrieve_path
    from ablate.components.runtime.models import dense_model_path
    from ablate.flows.run import sharded
    chunks, questions = demo
    chunks = chunks[:240]
    cfg = PipelineConfig(retrieval={"paths": ["dense"], "depth": 25})
    enc = DenseEncoder(dense_model_path(cfg.retrieval.dense_model), tmp_path / "embeddings")
    res = Resources.fixed(enc)
    whole = retrieve_path("dense", chunks, questions[:60], cfg, res)
    for shards in (2, 5):
        assert sharded.search(client, tmp_path, f"{shards}" * 24, "dense", chunks,
                              questions[:60], cfg, res, shards) == whole


def _experiment(folder: Path, shards: int, **runner) -> Path:
    return write_experiment(
        folder, "sharded-tiny", smoke_size=12, seed=3,
        metrics={"ks": [1, 3], "key": ["final/recall_at_3"]},
        stats={"resamples": 200, "bootstrap_resamples": 200},
        runner={"kind": "threads", "workers": 2, "shards": shards, **runner},
        baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10}, generator=None))


def _retrieved(cache: Path) -> dict[str, pl.DataFrame]:
    """Each stored retrieve stage's rankings (timings left out)."""
    return {f.stem: pl.read_parquet(f).select("qid", "chunk_ids", "scores")
            for f in sorted((cache / "retrieve").rglob("*.parquet"))}


@pytest.mark.slow
def test_flow_with_two_shards_stores_the_rankings_of_one(client, prefect_server, tmp_path,
                                                         shared_cache):
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    forget_contexts()
    one, two = tmp_path / "c1", tmp_path / "c2"
    for shards, cache in ((1, one), (2, two)):
        run_sweep(str(_experiment(tmp_path / f"s{shards}", shards)),
                  out=str(tmp_path / f"runs{shards}"), cache_dir=str(cache), mlflow=False)
    a, b = _retrieved(one), _retrieved(two)
    assert len(a) == 2 and a.keys() == b.keys()  # bm25 and dense, the same stage keys
    for key in a:
        assert a[key].height == 12 and a[key].equals(b[key]), key
    assert list((two / "shards").rglob("*.parquet")) and not (one / "shards").exists()
    # the manifest and the progress lines say on how many shards each retrieve stage ran
    import json
    for shards in (1, 2):
        man = json.loads(next((tmp_path / f"runs{shards}").rglob("manifest.json")).read_text())
        got = man["stages"]["retrieve_shards"]
        assert sorted(k.split()[0] for k in got) == ["retrieve:bm25", "retrieve:dense"]
        assert set(got.values()) == {shards}


def test_progress_label_says_the_shards():
    from types import SimpleNamespace

    from ablate.flows.run.sharded import shown_label
    node = SimpleNamespace(stage="retrieve", label="retrieve:bm25")
    assert shown_label(SimpleNamespace(shards=3), node) == "retrieve:bm25 (3 shards)"
    assert shown_label(SimpleNamespace(shards=1), node) == "retrieve:bm25"
    fuse = SimpleNamespace(stage="fuse", label="fuse")
    assert shown_label(SimpleNamespace(shards=3), fuse) == "fuse"


def test_more_shards_than_documents_is_one_line(run_cli, tmp_path, capsys):
    spec = _experiment(tmp_path, 4)  # the tiny fixture has 3 documents
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "field 'runner.shards'" in err and "4 shards for a corpus of 3 documents" in err
    assert err.startswith(f"ablate: error: {spec}:")


@pytest.mark.parametrize("command", ["check", "run"])
def test_unreachable_scheduler_is_one_line(run_cli, tmp_path, capsys, command):
    spec = _experiment(tmp_path, 2, kind="dask", address="tcp://127.0.0.1:9")
    argv = [command, str(spec)] + (["--no-mlflow", "--cache-dir", str(tmp_path / "c")]
                                   if command == "run" else [])
    assert run_cli(*argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "field 'runner.address'" in err
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert not (tmp_path / "c" / "chunk").exists()  # nothing computed


# ---- the shard contract (issue 43): a path shards exactly or is refused before it runs ----

@pytest.mark.parametrize("index", ["flat16", "hnsw", "ivf"])
def test_an_index_that_cannot_shard_is_refused_in_one_line(run_cli, tmp_path, capsys, index):
    spec = write_experiment(
        tmp_path, "sharded-ann", smoke_size=12, seed=3,
        runner={"kind": "threads", "workers": 2, "shards": 2},
        baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10,
                                     "dense_index": index}, generator=None))
    assert run_cli("check", str(spec)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "field 'runner.shards'" in err and err.startswith(f"ablate: error: {spec}:")
    assert f"dense index '{index}' does not shard exactly (dense indexes that do: flat)" in err


PLUGIN = """\
from ablate.components.retrieval.stages import PATHS

@PATHS.register("plain_43", reads=("retrieval.depth",))
def plain(chunks, questions, cfg, res, latency):
    return {q.qid: [(chunks[0].chunk_id, 1.0)] for q in questions}
"""


def test_a_plugin_path_that_declares_no_sharding_is_refused(run_cli, tmp_path, capsys):
    (tmp_path / "plug43.py").write_text(PLUGIN)
    spec = write_experiment(
        tmp_path, "sharded-plugin", smoke_size=12, seed=3, plugins=["./plug43.py"],
        runner={"kind": "threads", "workers": 2, "shards": 2},
        baseline=pipeline(retrieval={"paths": ["bm25", "plain_43"], "depth": 10},
                          generator=None))
    try:
        assert run_cli("check", str(spec)) == 2
    finally:
        from ablate.components.contract.registry import registry
        registry("retrieval path")._items.pop("plain_43", None)
        registry("retrieval path")._decls.pop("plain_43", None)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "field 'runner.shards'" in err
    assert "retrieval path 'plain_43' does not declare how it shards" in err


def _overlap(question: str, text: str) -> float:
    return float(len(set(question.lower().split()) & set(text.lower().split())))


class OverlapSharding:
    """A plugin's Sharding: word overlap scores a pair alone, so top k merge exactly. Its
    worker function is nested (pickled by value: workers need not import this module)."""

    merge = "exact top-k"

    def refuses(self, cfg):
        return None

    def work(self, job):
        from ablate.components.retrieval.shards import ShardWork, read_rows

        def search(lo, hi, collection, texts, questions, k):
            ids, rows = read_rows(texts, lo, hi)
            out = []
            for q in questions:
                scored = sorted(((c, _overlap(q, t)) for c, t in zip(ids, rows)),
                                key=lambda x: (-x[1], x[0]))
                out.append(scored[:k])
            return out, 0.0
        return ShardWork(search, (str(job.texts), [q.question for q in job.questions],
                                  job.cfg.retrieval.depth), [0.0] * len(job.questions))


def test_a_plugin_path_that_declares_a_sharding_shards_exactly(client, demo, tmp_path):
    from ablate.components.retrieval.stages import PATHS, retrieve_path
    from ablate.flows.run import sharded
    from tests.conftest import registries_restored
    chunks, questions = demo
    chunks, questions = chunks[:300], questions[:40]
    with registries_restored():
        @PATHS.register("overlap_43", reads=("retrieval.depth",), shards=OverlapSharding())
        def overlap(chunks, questions, cfg, res, latency):
            return {q.qid: sorted(((c.chunk_id, _overlap(q.question, c.text)) for c in chunks),
                                  key=lambda x: (-x[1], x[0]))[:cfg.retrieval.depth]
                    for q in questions}
        cfg = PipelineConfig(retrieval={"paths": ["overlap_43"], "depth": 7})
        whole = retrieve_path("overlap_43", chunks, questions, cfg)
        got = sharded.search(client, tmp_path, "p" * 24, "overlap_43", chunks, questions,
                             cfg, None, 3)
    assert got == whole and any(r[0][1] > 0 for r in whole.values())
