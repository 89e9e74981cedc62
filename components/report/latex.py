"""An optional LaTeX (booktabs) table of the key metrics: one row per variant, the mean
and the delta to the baseline with its CI, daggers for significance after correction."""

from __future__ import annotations

import re
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.numbers import ci_odd, finite, fmt_signed, is_significant
from ablate.components.report.sweep_data import variables, variant_means

_ESC = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
        "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"}


DAGGER = r"$^\dagger$"
DDAGGER = r"$^\ddagger$"  # the interval does not contain its delta (numbers.CI_ODD)


def tex(text: Any) -> str:
    return "".join(_ESC.get(c, c) for c in str(text))


def _num(x: float | None, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if finite(x) else "--"


def render_latex(manifest: dict[str, Any], variants: list[dict[str, Any]], stats: pl.DataFrame,
                 per_query: pl.DataFrame, key_metrics: Sequence[str]) -> str:
    """A complete `table` environment (needs \\usepackage{booktabs})."""
    means = variant_means(per_query, key_metrics)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    st = manifest.get("statistics", {})
    cols = "ll" + "r" * len(key_metrics)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{cols}}}",
             r"\toprule",
             "Variable & Value & " + " & ".join(tex(m) for m in key_metrics) + r" \\", r"\midrule"]
    base = [_num(means.get((BASELINE, m))) for m in key_metrics]
    lines.append("baseline & & " + " & ".join(base) + r" \\")
    any_odd = False
    for variable, points in variables(variants).items():
        lines.append(r"\midrule")
        for name, value in points[1:]:
            cells = []
            for m in key_metrics:
                r = srows.get((name, m))
                cell = _num(means.get((name, m)))
                if r is not None and finite(r.get("delta")):
                    lo, hi = r.get("ci_low"), r.get("ci_high")
                    odd = DDAGGER if ci_odd(lo, hi, r["delta"]) else ""
                    any_odd = any_odd or bool(odd)
                    cell += (f" ({fmt_signed(r['delta'])} [{_num(lo)}, {_num(hi)}]{odd}"
                             f"{DAGGER if is_significant(r) else ''})")
                cells.append(cell)
            lines.append(f"{tex(variable)} & {tex(value)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{{tex(manifest.get('experiment'))}: mean per variant (delta to the "
              rf"baseline [confidence interval]); $\dagger$: significant after "
              rf"{tex(st.get('correction'))} correction at $\alpha={st.get('alpha')}$, "
              rf"{tex(st.get('test'))} test, n={manifest.get('questions', {}).get('total')} "
              r"questions" + (r"; $\ddagger$: the interval does not contain its delta" if any_odd else "")
              + ".}",
              rf"\label{{tab:{re.sub(r'[^A-Za-z0-9:-]+', '-', str(manifest.get('sweep_id')))}}}",
              r"\end{table}", ""]
    return "\n".join(lines)
