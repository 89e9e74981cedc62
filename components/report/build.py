"""Every report file of a sweep, rendered from its saved results: report.md, report.html
(plots embedded), plots/*.svg, summary.txt and optionally report.tex. Pure: returns
{relative path: content}; the caller decides where and how to write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.appendix import APPENDIX_HTML, APPENDIX_MD, appendix_markdown
from ablate.components.report.comparability import not_comparable
from ablate.components.report.drilldown import drilldown_section
from ablate.components.report.factorial import interaction_plots
from ablate.components.report.html import render_html
from ablate.components.report.latex import render_latex
from ablate.components.report.markdown import other_metrics, render_markdown, terminal_summary
from ablate.components.report.overview import FOREST, forest_plot
from ablate.components.report.plots import all_plots
from ablate.components.report.reference_summary import reference_summary
from ablate.components.report.relevance import unaffected
from ablate.components.report.risk_coverage import risk_coverage_plot
from ablate.components.report.slices import requested, slice_findings, slice_section
from ablate.components.report.spend import spend_lines, spend_section
from ablate.components.report.sweep_data import SweepResults, report_stats, variables, variant_means
from ablate.components.report.tradeoff_callout import callouts
from ablate.components.report.tradeoff_report import front_of, tradeoff_plot, tradeoff_section
from ablate.components.report.worth import worth_plot
from ablate.components.runtime.atomic import atomic_write
from ablate.components.runtime.memory import collector_paused


def build_report(res: SweepResults, key_metrics: Sequence[str] | None = None,
                 latex: bool = False, plots: bool = True) -> dict[str, str | bytes]:
    """Every report file; any number in the results may be missing or not finite
    (report_stats: Δ without a finite value is never significant). Built with the
    cyclic garbage collector paused: figures, tables and the Markdown parser make some
    hundred thousand objects, collected once at the end."""
    with collector_paused():
        return _files(res, key_metrics, latex, plots)


def _files(res: SweepResults, key_metrics: Sequence[str] | None, latex: bool,
           plots: bool) -> dict[str, str | bytes]:
    res = replace(res, stats=not_comparable(report_stats(res.stats), res.variants))
    key = res.key_metrics(key_metrics)
    order = [v["name"] for v in res.variants]
    front = front_of(res.per_query, res.stats, res.timings, res.variants, key, res.manifest)
    images: dict[str, bytes] = {}
    if plots:
        images = {**_images(res, key, order),
                  **{f"plots/{k}": v for k, v in tradeoff_plot(front).items()}}
    plot_files = [Path(p).name for p in images]
    md = render_markdown(res.manifest, res.variants, res.stats, res.per_query, key,
                         res.no_effect, plot_files=plot_files,
                         tradeoff=[*tradeoff_section(front, plot_files, callouts(
                             front, res.stats, res.per_query, res.manifest, key)),
                             *_spaced(spend_section(res.per_query, order))],
                         timings=res.timings, factorial=res.factorial, worth=res.worth,
                         more_findings=slice_findings(res.slices, res.variants, key),
                         drilldown=[*slice_section(res.slices, res.variants, key,
                                                   requested(res.manifest)),
                                    *drilldown_section(res.per_query, res.stats, res.variants, key,
                                                       res.evidence)])
    title = f"ablate: {res.manifest.get('experiment')}"
    rest = other_metrics(res.variants, res.stats, res.per_query, key)
    appendix = appendix_markdown(res.manifest, res.variants, res.stats, res.per_query, rest,
                                 variant_means(res.per_query, rest, res.stats),
                                 {(r["variant"], r["metric"]): r for r in res.stats.iter_rows(named=True)})
    page = render_html(md, title, images).replace(f'href="{APPENDIX_MD}"', f'href="{APPENDIX_HTML}"')
    files: dict[str, str | bytes] = {
        "report.md": md,
        "report.html": page,
        APPENDIX_MD: appendix,
        APPENDIX_HTML: render_html(appendix, f"{title}: appendix").replace(
            'href="report.md"', 'href="report.html"'),
        "summary.txt": "\n".join([
            reference_summary(res.per_query, key, res.manifest)
            if all(v["name"] == BASELINE for v in res.variants)
            else terminal_summary(res.variants, res.stats, res.per_query, key),
            *_spaced(spend_lines(res.per_query, order))]) + "\n",
        **images,
    }
    if latex:
        files["report.tex"] = render_latex(res.manifest, res.variants, res.stats, res.per_query, key)
    return files


def _spaced(lines: list[str]) -> list[str]:
    """`lines` after a blank line (nothing when there are none)."""
    return ["", *lines] if lines else []


def _images(res: SweepResults, key: Sequence[str], order: Sequence[str]) -> dict[str, bytes]:
    """Every plot, by its path in the report's folder."""
    srows = {(r["variant"], r["metric"]): r for r in res.stats.iter_rows(named=True)}
    means = variant_means(res.per_query, key)
    alone = all(v["name"] == BASELINE for v in res.variants)  # a reference: nothing compared
    images = {} if alone else {f"plots/{FOREST}": forest_plot(
        variables(res.variants), key, srows, unaffected(res.variants, key, BASELINE))}
    images.update({f"plots/{k}": v for k, v in all_plots(
        variables(res.variants), key, means, srows, res.per_query, res.timings, order).items()})
    images.update({f"plots/{k}": v for k, v in interaction_plots(
        res.manifest, res.variants, res.per_query, res.factorial, key).items()})
    images.update({f"plots/{k}": v for k, v in worth_plot(res.worth, key).items()})
    images.update({f"plots/{k}": v for k, v in risk_coverage_plot(res.per_query).items()})
    return images


def write_files(folder: Path, files: dict[str, str | bytes]) -> list[Path]:
    """Write each file atomically (temp file + rename) under `folder`; return the paths."""
    written = []
    for rel, content in files.items():
        written.append(atomic_write(Path(folder) / rel, content))
    return written
