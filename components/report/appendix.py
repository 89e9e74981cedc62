"""The report's appendix: the tables of every metric that is neither a key metric nor
shown in a swept variable's section ("All other metrics"), in a file of its own
(report-appendix.md / .html) that the report links to, so the main report stays short
enough for a review."""

from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from ablate.components.report.markdown import APPENDIX_HTML, APPENDIX_MD, _variable_table

__all__ = ["APPENDIX_HTML", "APPENDIX_MD", "appendix_markdown"]


def appendix_markdown(manifest: dict[str, Any], variants: list[dict[str, Any]],
                      stats: pl.DataFrame, per_query: pl.DataFrame, rest: Sequence[str],
                      means: dict[tuple[str, str], float],
                      srows: dict[tuple[str, str], dict]) -> str:
    """The appendix file: one table per metric of `rest`, every variant, then the glossary."""
    from ablate.components.report.intervals import ci_text, disagrees
    from ablate.components.report.judge import metric_note
    from ablate.components.report.overview import glossary_lines
    points = [(v["name"], v.get("value_label", "")) for v in variants]
    lines = [f"# Appendix: all other metrics, {manifest.get('experiment')}", "",
             f"Sweep `{manifest.get('sweep_id')}`; the main report: [report.md](report.md). "
             "Each table: every variant against the baseline on one metric.", ""]
    for metric in rest:
        lines += [f"## {metric}", ""]
        note = metric_note(metric, manifest)
        lines += (([note, ""] if note else [])
                  + _variable_table(metric, points, means, srows, per_query) + [""])
    lines += glossary_lines(ci_text(manifest.get("statistics", {}), stats),
                            any(disagrees(r) for r in srows.values()))
    return "\n".join(lines) + "\n"
