"""The report's section on `report.slices`: the key comparisons per slice of the
questions (slices.parquet, ablate.components.stats.slices), kept short. Per slice, one
line with its questions, clusters and tests; a table of its significant comparisons
(largest |Δ| first, at most SHOWN, the rest counted); a slice too small to test is said
to be, without a p. Rows the report calls not comparable (comparability.not_comparable)
are never counted significant."""

from __future__ import annotations

import difflib
from typing import Any, Sequence

import polars as pl

from ablate.components.report.comparability import not_comparable
from ablate.components.report.numbers import fmt, fmt_ci, fmt_n, fmt_p, fmt_signed, is_significant
from ablate.components.stats.slices import SLICES_FILE, UNDEFINED

SECTION = "Slices"
SHOWN = 8  # significant comparisons listed per slice


def requested(manifest: dict[str, Any]) -> list[str]:
    """The experiment's `report.slices`, as its manifest records the settings."""
    settings = manifest.get("settings") or {}
    report = settings.get("report") if isinstance(settings, dict) else None
    slices = report.get("slices") if isinstance(report, dict) else None
    return [str(c) for c in slices] if isinstance(slices, list) else []


def slice_section(slices: pl.DataFrame | None, variants: Sequence[dict[str, Any]],
                  key: Sequence[str], requested: Sequence[str] = ()) -> list[str]:
    """Markdown lines of the section; none without slice comparisons. `requested`: the
    experiment's `report.slices` (a column no question gives a value is said to be)."""
    empty = pl.DataFrame(schema={"metric": pl.String, "slice_column": pl.String})
    rows = not_comparable((empty if slices is None else slices).filter(
        pl.col("metric").is_in(list(key))), variants)
    unset = [c for c in requested if c not in set(rows["slice_column"].to_list())]
    lines = [f"**{c}**: no question of the data gives it a value (nothing to slice)." for c in unset]
    if not rows.height:
        return [f"## {SECTION}", "", *lines, ""] if lines else []
    tested = rows.filter(pl.col("note").is_null())
    first = (tested if tested.height else rows).row(0, named=True)
    clustered = first.get("clustered_by") not in (None, "none")
    family = ("a family of its slice column's (every key metric)" if first.get("family") == "all"
              else "a family of its key metric on its slice column")
    sizes = sorted(set(tested["family_size"].drop_nulls().to_list())) if tested.height else []
    size = f" (family sizes {sizes[0]}" + (f"–{sizes[-1]})" if len(sizes) > 1 else ")") if sizes else ""
    unit = "clusters (questions sharing a document)" if clustered else "questions"
    how = (f"the same test ({first.get('test')}), interval and {first.get('correction')} "
           "correction as the main comparisons" if tested.height else
           "untested when their units are too few for the test to reach alpha")
    out = [f"## {SECTION}", "",
           f"The key comparisons on the questions of each slice only: paired on question, "
           f"{unit} as the unit, {how}. Slices are a view: each slice test is corrected in "
           f"{family}{size}, apart from the main comparisons, whose verdicts do not depend "
           f"on the slices asked for. Every row: `{SLICES_FILE}`.", "",
           *([*lines, ""] if lines else [])]
    for label in rows["slice"].unique(maintain_order=True).to_list():
        out += _one_slice(label, rows.filter(pl.col("slice") == label), clustered)
    return out


def _one_slice(label: str, rows: pl.DataFrame, clustered: bool) -> list[str]:
    named = list(rows.iter_rows(named=True))
    untested = [r for r in named if r.get("note")]
    tested = [r for r in named if not r.get("note")]
    sig = sorted((r for r in tested if is_significant(r)), key=lambda r: -abs(r["delta"]))
    n_q = max((r.get("n_used") or 0 for r in named), default=0)
    n_g = max((r.get("n_clusters") or 0 for r in named), default=0)
    if not n_q:
        return [f"**{label}**: no question of this slice defines the key metrics, by their "
                "definition (nothing to test).", ""]
    size = f"{n_q} questions in {n_g} clusters" if clustered else f"{n_q} questions"
    head = f"**{label}** ({size}): {len(sig)} of {len(tested)} tested comparisons significant"
    for note in sorted({r["note"] for r in untested}):
        metrics = sorted({r["metric"] for r in untested if r["note"] == note})
        head += (f"; {', '.join(metrics)} not tested: {note}" + ("" if note.startswith(UNDEFINED)
                 else f" (the means are in {SLICES_FILE})"))
    out = [head + ".", ""]
    if sig:
        out += ["| variant | metric | n | baseline, same questions | variant | Δ | CI | adjusted p |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {r['variant']} | {r['metric']} | {fmt_n(r)} | {fmt(r['mean_baseline'])} | "
                f"{fmt(r['mean_variant'])} | {fmt_signed(r['delta'])} | "
                f"{fmt_ci(r['ci_low'], r['ci_high'], r['delta'])} | {fmt_p(r['p_adjusted'])} |"
                for r in sig[:SHOWN]]
        if len(sig) > SHOWN:
            out.append(f"\n{len(sig) - SHOWN} more significant in {SLICES_FILE}.")
        out.append("")
    return out


def slice_findings(slices: pl.DataFrame | None, variants: Sequence[dict[str, Any]],
                   key: Sequence[str], folder: str = "SWEEP_DIR") -> list[str]:
    """One finding per significant slice comparison on a key metric (largest |Δ| first, at
    most SHOWN, the rest counted), each saying it is significant within its slice family
    and how to open its questions (`ablate explain --slice`)."""
    if slices is None or not slices.height:
        return []
    rows = not_comparable(slices.filter(pl.col("metric").is_in(list(key))
                                        & pl.col("note").is_null()), variants)
    sig = sorted((r for r in rows.iter_rows(named=True) if is_significant(r)),
                 key=lambda r: (-abs(r["delta"]), r["slice"], r["variant"], r["metric"]))
    out = []
    for r in sig[:SHOWN]:
        verb = "raises" if r["delta"] > 0 else "lowers"
        size = (f"{r['n_used']} in {r['n_clusters']} clusters"
                if r.get("clustered_by") not in (None, "none") else f"{r['n_used']}")
        out.append(f"On the slice **{r['slice']}**, **{r['variant']}** {verb} {r['metric']} by "
                   f"{abs(r['delta']):.3f} {fmt_ci(r['ci_low'], r['ci_high'], r['delta'])}, "
                   f"adjusted p {fmt_p(r['p_adjusted'])} within the slice's own family "
                   f"(n={size}); its questions: `ablate explain {folder} --variant "
                   f"{r['variant']} --slice {r['slice']}`.")
    if len(sig) > SHOWN:
        out.append(f"{len(sig) - SHOWN} more significant slice comparisons in {SLICES_FILE}.")
    return out


def slice_view(per_query: pl.DataFrame, slices: pl.DataFrame | None,
               label: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per_query on the questions of slice `label`, 'COLUMN=VALUE'; the slice's
    comparisons, as stats rows) for `ablate explain --slice`. InputError for a slice the
    sweep did not test."""
    from ablate.components.contract.errors import InputError
    known = sorted(set(slices["slice"].to_list())) if slices is not None and slices.height else []
    if label not in known:
        near = difflib.get_close_matches(label, known, n=1, cutoff=0.5)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise InputError(f"unknown slice '{label}'{hint} (slices: "
                         f"{', '.join(known) or 'none; set report.slices'})", field="--slice")
    assert slices is not None
    column, _, value = label.partition("=")
    col = pl.col(column)
    inside = (col == (value == "true")) if per_query.schema[column] == pl.Boolean else (
        col.cast(pl.String) == value)
    rows = slices.filter(pl.col("slice") == label)
    return per_query.filter(inside), rows
