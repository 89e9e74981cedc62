"""Reading per-question tables: long and wide, parquet and CSV, other tools' names."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.stats import compare_variants, load_per_query


def wide_table(n=12) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return pl.DataFrame({
        "variant": ["base"] * n + ["alt"] * n,
        "qid": [f"q{i}" for i in range(n)] * 2,
        "doc": [f"d{i // 3}" for i in range(n)] * 2,
        "hit": rng.integers(0, 2, 2 * n).astype(float),
        "ndcg": [None if i % 4 == 0 else float(x) for i, x in enumerate(rng.random(2 * n))],
        "label": ["x"] * (2 * n),
    })


def test_wide_csv_and_long_parquet_give_the_same_stats(tmp_path):
    wide = wide_table()
    wide.write_csv(tmp_path / "w.csv")
    long = wide.unpivot(index=["variant", "qid", "doc"], on=["hit", "ndcg"],
                        variable_name="metric", value_name="value")
    long.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(tmp_path / "l.parquet")
    w = load_per_query(tmp_path / "w.csv", cluster_col="doc")
    l = load_per_query(tmp_path / "l.parquet", cluster_col="doc")
    assert not w.long_form and l.long_form
    assert w.metrics == ["hit", "ndcg"] and sorted(l.metrics) == ["hit", "ndcg"]
    kw = dict(baseline="base", metrics=["hit", "ndcg"], resamples=200,
              bootstrap_resamples=200, cluster_col="doc")
    a = compare_variants(w.table, **kw)
    b = compare_variants(l.table, **kw)
    assert a.equals(b)
    assert a.filter(pl.col("metric") == "ndcg")["n_undefined"].to_list() == [
        wide.filter(pl.col("ndcg").is_null())["qid"].n_unique()]


def test_other_tools_column_names_and_null_strings(tmp_path):
    path = tmp_path / "ranx.tsv"
    path.write_text("run\tquery_id\tmeasure\tscore\n"
                    "bm25\tq1\tndcg@10\t0.5\nbm25\tq2\tndcg@10\tNaN\n"
                    "dense\tq1\tndcg@10\t0.7\ndense\tq2\tndcg@10\tNA\n")
    t = load_per_query(path)
    assert (t.variant_col, t.qid_col, t.metrics) == ("run", "query_id", ["ndcg@10"])
    out = compare_variants(t.table, baseline="bm25", metrics=t.metrics,
                           variant_col="run", qid_col="query_id", bootstrap_resamples=50)
    assert out["n_used"].to_list() == [1] and out["n_undefined"].to_list() == [1]


def test_bad_files_name_file_line_and_column(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_per_query(tmp_path / "none.csv")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(InputError, match="unknown table format"):
        load_per_query(tmp_path / "x.json")
    bad = tmp_path / "bad.csv"
    bad.write_text("variant,qid,metric,value\nb,q1,hit,1\nb,q2,hit,oops\n")
    with pytest.raises(InputError) as err:
        load_per_query(bad)
    assert (err.value.path, err.value.line, err.value.field) == (str(bad), 3, "value")
    dup = tmp_path / "dup.csv"
    dup.write_text("variant,qid,metric,value\nb,q1,hit,1\nb,q1,hit,0\n")
    with pytest.raises(InputError, match="duplicate row") as err:
        load_per_query(dup)
    assert err.value.line == 3
    nokey = tmp_path / "nokey.csv"
    nokey.write_text("system_name,qid,hit\nb,q1,1\n")
    with pytest.raises(InputError, match="no variant column") as err:
        load_per_query(nokey)
    assert err.value.path == str(nokey)
    with pytest.raises(InputError, match="no cluster column 'doc'"):
        load_per_query(dup, cluster_col="doc")
