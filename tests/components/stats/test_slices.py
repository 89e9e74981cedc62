"""report.slices: the key comparisons per slice, clustered and tested (issue 37.6), each
corrected in a family of its key metric on its slice column, apart from the main
comparisons (issue 54)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ablate.components.stats.compare import compare_joint, compare_variants
from ablate.components.stats.slices import TOO_FEW, joined, slice_comparisons, sliced_inputs, take

KEY = ("answer/f1",)
KW = dict(test="permutation", correction="holm", alpha=0.05, resamples=2000,
          bootstrap_resamples=200, seed=0, cluster_col="cluster")


def _per_query() -> pl.DataFrame:
    """3 variants x 48 questions in 24 clusters (2 each): `yesno` in clusters 0-15, `span`
    in 16-21, `rare` in 22-23 (2 clusters: the test cannot reach alpha)."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(48):
        c = i // 2
        kind = "yesno" if c < 16 else "span" if c < 22 else "rare"
        base = float(rng.uniform(0.2, 0.8))
        for variant, shift in (("baseline", 0.0), ("better", 0.15 if kind == "yesno" else 0.0),
                               ("same", 0.0)):
            noise = 0.0 if variant == "baseline" else float(rng.normal(0, 0.05))
            rows.append({"variant": variant, "qid": f"q{i:02d}", "cluster": f"d{c}", "type": kind,
                         "answerable": True, "answer/f1": base + shift + noise,
                         "final/recall_at_5": base})
    return pl.DataFrame(rows)


def _joint(pq: pl.DataFrame, slices=("type",)):
    metrics = ["answer/f1", "final/recall_at_5"]
    table, cols, untested = sliced_inputs(pq, slices=slices, key=KEY, tested=metrics,
                                          baseline="baseline", alpha=0.05, cluster_col="cluster")
    stats, _, _ = compare_joint(table, baseline="baseline", metrics=metrics, **KW)
    sliced = slice_comparisons(table, cols, baseline="baseline", family="per_metric", **KW)
    return take(joined(pl.concat([stats, sliced], how="diagonal_relaxed"), cols, untested))


def test_a_slice_row_is_the_comparison_on_its_questions_in_a_family_of_its_own():
    pq = _per_query()
    main, sliced = _joint(pq)
    assert sliced is not None and "slice" not in main.columns
    alone = compare_variants(pq.filter(pl.col("type") == "yesno"), baseline="baseline",
                             metrics=["answer/f1"], **KW)
    got = sliced.filter((pl.col("slice") == "type=yesno") & (pl.col("metric") == "answer/f1"))
    for want, row in zip(alone.sort("variant").iter_rows(named=True),
                         got.sort("variant").iter_rows(named=True)):
        assert row["variant"] == want["variant"]
        assert row["n_used"] == want["n_used"] == 32 and row["n_clusters"] == 16
        for col in ("mean_variant", "mean_baseline", "delta", "p_value"):
            assert math.isclose(row[col], want[col], rel_tol=1e-12), col
    # the main families are the main comparisons' alone; answer/f1 on `type`: 2 x 2
    # testable slices (yesno, span); rare is no test
    f1 = main.filter(pl.col("metric") == "answer/f1")
    assert f1["family_size"].to_list() == [2, 2]
    assert main.filter(pl.col("metric") == "final/recall_at_5")["family_size"].to_list() == [2, 2]
    tested = sliced.filter(pl.col("note").is_null())
    assert set(tested["family_size"].to_list()) == {4}
    # holm over the four raw p-values of the slice family
    raw = tested["p_value"].to_list()
    order = np.argsort(raw)
    adj = np.minimum(1, np.maximum.accumulate([(len(raw) - r) * raw[i] for r, i in enumerate(order)]))
    want = dict(zip(order.tolist(), adj.tolist()))
    got_adj = tested["p_adjusted"].to_list()
    assert all(math.isclose(got_adj[i], want[i], rel_tol=1e-9) for i in range(len(raw)))
    better = sliced.filter((pl.col("slice") == "type=yesno") & (pl.col("variant") == "better"))
    assert better["significant"].item() is True


def test_a_slice_with_too_few_clusters_says_so_and_has_no_p():
    _, sliced = _joint(_per_query())
    rare = sliced.filter(pl.col("slice") == "type=rare")
    assert rare.height == 2 and rare["n_clusters"].to_list() == [2, 2]
    assert rare["p_value"].is_null().all() and rare["p_adjusted"].is_null().all()
    assert rare["ci_low"].is_null().all() and not rare["significant"].any()
    assert all(TOO_FEW in n for n in rare["note"].to_list())
    assert rare["mean_baseline"].is_not_null().all()


def test_without_slices_nothing_changes():
    pq = _per_query()
    main, sliced = _joint(pq, slices=())
    assert sliced is None
    plain = compare_variants(pq, baseline="baseline", metrics=["answer/f1", "final/recall_at_5"], **KW)
    assert main.equals(plain)


def test_the_report_section_says_when_a_slice_column_has_no_value():
    from ablate.components.report.slices import slice_section
    _, sliced = _joint(_per_query())
    # as if the experiment asked for `answerable` too and no question had a value of it
    lines = slice_section(sliced, [], ["answer/f1"], requested=["type", "answerable"])
    assert "**answerable**: no question of the data gives it a value (nothing to slice)." in lines
    assert any(x.startswith("**type=yesno** (32 questions in 16 clusters): ") for x in lines)
    assert any("**type=rare**" in x and "not tested: too few clusters to test (2" in x for x in lines)
    assert slice_section(None, [], ["answer/f1"], requested=["type"])[2].startswith("**type**: no")
    assert slice_section(None, [], ["answer/f1"]) == []
