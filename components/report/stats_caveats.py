"""What the verdicts cannot promise, said where they are read (issue 38): the table-wide
familywise error beside the per-metric families, the test's assumption (the symmetry of
the sign-flip test), comparisons whose changes sit in fewer than FEW_CHANGED clusters, and
comparisons the test cannot decide at all with their G clusters. What a test assumes and
its smallest p are its declared abilities (ablate.components.stats.abilities)."""

from __future__ import annotations

from typing import Any

import polars as pl

from ablate.components.stats.binary_bound import FLAG_FEW_DOCUMENTS
from ablate.components.stats.clusters import FEW_CHANGED, FLAG_FEW_CHANGED
from ablate.components.stats.paired_tests import reported_abilities


def error_rates_text(st: dict[str, Any], stats: pl.DataFrame) -> str:
    """The report header's error-rate line: per family and table-wide, and the test's
    assumption."""
    alpha = float(st.get("alpha", 0.05))
    families = stats["metric"].n_unique() if stats.height and "metric" in stats.columns else 0
    if st.get("family", "per_metric") == "per_metric" and families > 1:
        fwer = (f"each metric's family holds its familywise error at {alpha:g}; over the "
                f"whole table of {families} metric families it is at most "
                f"{min(1.0, families * alpha):.2g} (up to {1 - (1 - alpha) ** families:.2g} "
                "when the metrics are independent): read one metric at a time, or set "
                "stats.family: all for one family")
    else:
        fwer = f"familywise error at most {alpha:g} over the table (one family)"
    return f"{fwer}; {reported_abilities(st.get('test') or 'permutation').assumption}"


def few_changed(key: pl.DataFrame) -> list[str]:
    """A finding naming key comparisons whose changes sit in fewer than FEW_CHANGED
    clusters (ci_flag few_changed_clusters)."""
    if "ci_flag" not in key.columns or "n_changed_clusters" not in key.columns:
        return []
    rows = [r for r in key.sort("variant", "metric").iter_rows(named=True)
            if FLAG_FEW_CHANGED in str(r.get("ci_flag") or "")]
    if not rows:
        return []
    widened = [r for r in rows if "+tango" in str(r.get("ci_method") or "")]
    other = [r for r in rows if "+tango" not in str(r.get("ci_method") or "")]
    out = []
    if widened:
        out.append(f"Few changed clusters: the changes of {_named(widened)} sit in fewer than "
                   f"{FEW_CHANGED} clusters; re-signing so few changes cannot bound what the "
                   "clusters not seen to change may hide, so these 0/1 intervals are widened to "
                   "the cluster-aware Tango score interval, which accounts for changes not seen "
                   "(benchmarks/few_changes.py: coverage 0.93 at k 1-2 where re-signing alone "
                   "gave 0.67-0.83); with changes concentrated in a few documents they can "
                   "still fall short when nothing or almost nothing changed.")
    few_docs = [r for r in widened if FLAG_FEW_DOCUMENTS in str(r.get("ci_flag") or "")]
    if few_docs:
        g = min(int(r["n_clusters"]) for r in few_docs)
        out.append(f"Too few documents: with as few as {g} clusters the cluster-robust Tango "
                   f"bound rules out no difference at all, so a side of {_named(few_docs)} is "
                   "bounded as if its questions were independent (with the re-signing "
                   "interval, whichever is wider): what the data can support, not a "
                   "cluster-valid guarantee; more documents are needed for one.")
    if other:
        out.append(f"Few changed clusters: the changes of {_named(other)} sit in fewer than "
                   f"{FEW_CHANGED} clusters; with most pairs tied an interval's coverage is "
                   "governed by the clusters that changed (k), not by all clusters (G): below "
                   f"{FEW_CHANGED} it can fall well under its level (benchmarks/few_changes.py), "
                   "so read these intervals as too narrow.")
    return out


def _named(rows: list[dict]) -> str:
    named = [f"{r['variant']} on {r['metric']} (k {r['n_changed_clusters']} of "
             f"{r['n_clusters']})" for r in rows[:6]]
    more = f" and {len(rows) - 6} more" if len(rows) > 6 else ""
    return ", ".join(named) + more


def cannot_reject(key: pl.DataFrame, st: dict[str, Any]) -> list[str]:
    """A finding for key comparisons the test cannot decide at all: with G clusters its
    declared smallest p (2 / 2^G for the sign-flip test) is above alpha, so there is no
    MDE and 'underpowered' would say too little."""
    test = st.get("test") or "permutation"
    floor = reported_abilities(test).smallest_p
    if floor is None or "n_clusters" not in key.columns:
        return []
    alpha = float(st.get("alpha", 0.05))
    g = key["n_clusters"].drop_nulls()
    small = sorted({int(x) for x in g.to_list() if x >= 1 and float(floor.of(x)) > alpha})
    if not small:
        return []
    worst = small[0]
    name = reported_abilities(test).also_called or test
    return [f"Cannot reject at alpha {alpha:g} with {worst} clusters: the {name} test's "
            f"smallest possible p is {floor.formula.format(g=worst)} = "
            f"{float(floor.of(worst)):.3g}, so no difference "
            "on those comparisons can be significant and no MDE is given; more documents "
            "are needed."]


def _family_text(f: dict[str, Any]) -> str:
    name = "cluster t (CR2)" if f.get("family") == "t" else str(f.get("family"))
    inverts = str(f.get("coverage_note", "inverts")).startswith("inverts")
    if f.get("coverage") is None and inverts:
        cov = f"its {f.get('interval')} interval inverts the test (coverage 1 - type-I)"
    elif f.get("coverage") is None:
        cov = f"its {f.get('interval')} interval's coverage is not simulated"
    else:
        cov = (f"{f.get('interval')} coverage {f['coverage']:.3f} ± "
               f"{f['coverage_mc_se']:.3f} over {f['alternatives']}")
    return f"{name}: type-I {f['type_i']:.3f} ± {f['type_i_mc_se']:.3f} over {f['nulls']} nulls, {cov}"


def self_test_text(record: dict[str, Any] | None) -> str:
    """The report header's self-test line (the manifest's `self_test`), '' without one;
    one line saying it cannot tell where the sweep has too few changed clusters."""
    if not record:
        return ""
    if "error" in record:
        return f"could not run ({record['error']})"
    if record.get("cannot_tell"):
        return f"cannot tell whether the tests hold their level on this data: {record['cannot_tell']}"
    fams = record.get("families") or []
    if not fams:
        return "no comparison has changes in 2 or more clusters to simulate from"
    alpha = float(record.get("alpha", 0.05))
    above = record.get("off_level_above", 1.6 * alpha)
    return (f"on nulls resampled from this sweep's own clusters ({len(record['comparisons'])} "
            f"key comparisons, centred, whole clusters drawn with their skew and sizes kept; "
            f"alpha {alpha:g}, a family is off level above {above:g}): "
            + "; ".join(_family_text(f) for f in fams))


def off_level(record: dict[str, Any] | None, st: dict[str, Any]) -> list[str]:
    """A finding for each family the self-test found above its level on this data, naming
    the verdicts that rest on it."""
    record = record or {}
    out = []
    for f in record.get("families") or []:
        if not f.get("off_level"):
            continue
        if f.get("family") == st.get("test", "permutation"):
            rest = "every p-value, significance mark and interval of this report uses it"
        else:
            rest = ("the MDE, `ablate power`, sequential looks and the gate's margin use "
                    "the cluster t")
        out.append(f"Self-test: on this sweep's own data the {_family_text(f)} rejects more "
                   f"often than alpha {record.get('alpha', 0.05):g} ({rest}): read its "
                   "verdicts near the threshold as weaker than they look.")
    return out
