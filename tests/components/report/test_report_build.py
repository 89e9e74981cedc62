"""The report rebuilt from a (synthetic) sweep folder: tables match stats.parquet, findings
name the significant change, plots are real SVGs embedded in a self-contained HTML page."""

from __future__ import annotations

import base64
import re

import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.report.build import build_report, write_files
from ablate.components.report.findings import findings
from ablate.components.report.latex import render_latex
from ablate.components.report.numbers import fmt, fmt_p
from ablate.components.report.sweep_data import family_counts, load_sweep, variables
from tests.components.report.synthetic import make_sweep

SVG = b'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE svg'


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return make_sweep(tmp_path_factory.mktemp("report") / "sweep")


@pytest.fixture(scope="module")
def files(sweep):
    return build_report(load_sweep(sweep), latex=True)


def test_table_rows_match_stats(sweep, files):
    stats = pl.read_parquet(sweep / "stats.parquet")
    lines = files["report.md"].splitlines()
    for r in stats.iter_rows(named=True):
        # an interval of a comparison where no question differs says so
        none_differ = " no question differs" if r["wins"] + r["losses"] == 0 else ""
        expected = (f"| {r['variant']} | {r['variant'].split('=')[1]} | {fmt(r['mean_variant'])} | "
                    f"{fmt(r['mean_baseline'])} | {fmt(r['delta'])} | [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]{none_differ} | "
                    f"{fmt_p(r['p_value'])} | {fmt_p(r['p_adjusted'])} |")
        assert any(line.startswith(expected) for line in lines), expected
    # the baseline row shows the baseline's own value of the swept variable
    assert "| baseline | 256 | " in files["report.md"]
    assert "| baseline | 60 | " in files["report.md"]


def test_header_names_data_statistics_and_counts(files):
    md = files["report.md"]
    assert "sha256:" + "ab" * 32 in md and "split **dev**" in md and "tier **smoke**" in md
    assert "correction holm at alpha 0.05" in md and "seed 3" in md
    assert "final 24 used / 6 undefined" in md and "answer 30 used / 0 undefined" in md


def test_findings_sentence_from_the_numbers(sweep, files):
    stats = pl.read_parquet(sweep / "stats.parquet")
    r = stats.filter((pl.col("variant") == "chunking.size=64")
                     & (pl.col("metric") == "final/recall_at_5")).row(0, named=True)
    assert r["significant"] and r["delta"] < 0
    sentence = (f"**chunking.size=64** lowers (worse) final/recall_at_5 by {abs(r['delta']):.3f} "
                f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}], adjusted p {fmt_p(r['p_adjusted'])}")
    assert sentence in files["report.md"]
    assert "No effect: fusion.rrf_k=10" in files["report.md"]


def test_findings_warn_when_underpowered():
    stats = pl.DataFrame({"metric": ["m/x"], "variant": ["v"], "delta": [0.01],
                          "ci_low": [-0.1], "ci_high": [0.12], "p_adjusted": [0.8],
                          "significant": [False], "mde": [0.2], "wins": [5], "losses": [4],
                          "n_used": [9], "missingness_flag": [False]})
    text = " ".join(findings(stats, ["m/x"]))
    assert "Underpowered" in text and "v on m/x (MDE 0.200 > |Δ| 0.010)" in text
    assert "No variant differs significantly" in text


def test_plots_are_svgs_embedded_in_self_contained_html(files):
    svgs = {k: v for k, v in files.items() if k.startswith("plots/")}
    assert set(svgs) == {"plots/overview.svg", "plots/sweep_chunking_size.svg",
                         "plots/sweep_fusion_rrf_k.svg", "plots/buckets.svg", "plots/cost.svg",
                         "plots/tradeoff.svg"}
    assert all(v.startswith(SVG) for v in svgs.values())
    html = files["report.html"]
    assert 'src="plots/' not in html and "http://" not in html and "https://" not in html
    embedded = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(embedded) == 6
    assert {base64.b64decode(e) for e in embedded} == set(svgs.values())
    assert "| variant |" not in html
    md = files["report.md"]
    assert all(f"]({name})" in md for name in svgs)


def test_plot_text_is_svg_text_with_fixed_ids_and_no_date(files):
    """Text stays text (no glyph outlines: the figures' drawing time is mostly text), so
    a figure's words can be found in its file; no date and no random ids, so the same
    figure is the same bytes."""
    buckets, cost = files["plots/buckets.svg"].decode(), files["plots/cost.svg"].decode()
    assert ">Failure buckets per variant</text>" in buckets and "<dc:date>" not in buckets
    assert ">Latency</text>" in cost and ">Tokens</text>" in cost and "glyph" not in cost
    assert "sans-serif" in cost and "Matplotlib" not in cost


def test_other_metrics_in_the_appendix_rendered(sweep):
    page = build_report(load_sweep(sweep), ["answer/f1"], plots=False)["report-appendix.html"]
    assert "<table>" in page and "final/recall_at_5" in page and "| variant |" not in page


def test_rebuild_is_deterministic(sweep, files):
    again = build_report(load_sweep(sweep), latex=True)
    assert again == files


def test_write_files_writes_every_file(tmp_path, files):
    written = write_files(tmp_path, files)
    assert {p.relative_to(tmp_path).as_posix() for p in written} == set(files)
    assert (tmp_path / "plots" / "cost.svg").read_bytes() == files["plots/cost.svg"]
    assert not list(tmp_path.rglob(".*tmp*"))


def test_latex_table(sweep, files):
    tex = files["report.tex"]
    assert r"\begin{tabular}{llrr}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"final/recall\_at\_5" in tex and r"chunking.size & 64 &" in tex
    assert tex.count(r"$^\dagger$") == 1  # the one significant cell
    res = load_sweep(sweep)
    assert render_latex(res.manifest, res.variants, res.stats, res.per_query, ["answer/f1"]).count("&") > 0


def test_variables_and_family_counts(sweep):
    res = load_sweep(sweep)
    assert variables(res.variants) == {"chunking.size": [("baseline", "256"), ("chunking.size=64", "64")],
                                       "fusion.rrf_k": [("baseline", "60"), ("fusion.rrf_k=10", "10")]}
    assert family_counts(res.stats) == {"answer": ("30", "0"), "final": ("24", "6")}


def test_missing_file_is_one_line_input_error(tmp_path):
    with pytest.raises(InputError, match="stats.parquet is missing"):
        (tmp_path / "manifest.json").write_text("{}")
        (tmp_path / "variants.json").write_text("[]")
        (tmp_path / "per_query.parquet").write_text("")
        load_sweep(tmp_path)


def test_overview_plot_and_table_come_first(sweep, files):
    md = files["report.md"]
    assert md.index("## Overview") < md.index("plots/overview.svg") < md.index("## Findings")
    assert md.index("## Findings") < md.index("## chunking.size")
    stats = pl.read_parquet(sweep / "stats.parquet")
    r = stats.filter((pl.col("variant") == "chunking.size=64")
                     & (pl.col("metric") == "final/recall_at_5")).row(0, named=True)
    row = next(line for line in md.splitlines() if line.startswith("| chunking.size | 64 |"))
    assert f"{fmt(r['delta'])} [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] | ▼ worse" in row
    assert md.index(row) < md.index("## Findings")


def test_every_column_titled_and_linked_to_the_glossary(files):
    md = files["report.md"]
    headers = [line for line in md.splitlines() if line.startswith("| variant | value |")]
    assert headers and all("|  |" not in h and "| |" not in h for h in headers)
    assert all("[sig.](#glossary)" in h and "[d_z](#glossary)" in h for h in headers)
    assert '<h2 id="glossary">' in md
    for term in ("W/T/L", "MDE", "p adj", "retrieval_miss", "budget_cut"):
        assert f"| {term} |" in md
    assert 'id="glossary"' in files["report.html"] and 'href="#glossary"' in files["report.html"]


def test_one_number_format():
    assert fmt(5.6e-4) == "0.001" and fmt(-2e-4) == "-0.000" and fmt(0.25) == "0.250"
