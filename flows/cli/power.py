"""`ablate power EXPERIMENT.yaml`: how many questions each comparison needs.

From a pilot sweep (`--pilot SWEEP_DIR`, else the latest finished sweep of the experiment
under its `out` folder), per variant x key metric: the pilot's n (in G clusters), the sd
of the paired differences, the design effect of the clusters, the observed delta, the n
needed to detect `--mde` at `--power` under the experiment's alpha and correction, as
"n questions in G clusters" (ablate.components.stats.sample_size: the cluster-level pilot
variance, the t test on G clusters), and what running that n costs in stage seconds
(timings.parquet). The n counts questions whose metric is defined (a retrieval metric:
questions with evidence): the cost counts the questions to run for them, and a needed n is
compared with the data set's questions that have the metric (the pilot's count when it
ran on the whole data set, else an estimate at the pilot's share). The clusters are the experiment's `stats.cluster` (`--cluster-column`:
auto, none or a column); a plan on fewer than FEW_CLUSTERS pilot clusters is a warning
line. Writes nothing; one error line and exit 2 on bad input.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE


def find_pilot(out_root: Path, experiment: str) -> Path | None:
    """The latest finished sweep (by its manifest's `created`) of `experiment` under
    `out_root`; None when there is none. Folders being written (dot names) are skipped."""
    from ablate.components.report.sweep_data import REQUIRED
    found = []
    for man_path in Path(out_root).glob("*/manifest.json"):
        folder = man_path.parent
        if folder.name.startswith(".") or not all((folder / f).is_file() for f in REQUIRED):
            continue
        try:
            man = json.loads(man_path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(man, dict) and man.get("experiment") == experiment:
            found.append((str(man.get("created") or ""), man_path.stat().st_mtime, folder))
    return max(found)[2] if found else None


def planned_note(test: str) -> str:
    """What the plan line adds for a test planned with the t-test's power (its declared
    `power`, ablate.components.stats.abilities): '' where the plan is its own."""
    from ablate.components.stats.paired_tests import abilities
    if abilities(test).power == "own":
        return ""
    return f"; the {test} test is planned with the t-test's power"


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}"


def _cost(seconds: float) -> str:
    from ablate.flows.plan.estimate import duration
    if not math.isfinite(seconds):
        return "-"
    return "<1 s" if seconds < 0.5 else duration(seconds)


def _in_clusters(n: int | None, g: int | None, clustered: bool) -> str:
    if not n:
        return "-"
    return f"{n} in {g} cluster{'s' if g != 1 else ''}" if clustered else str(n)


def available(defined: int, pilot: int, dataset_questions: int | None) -> tuple[int, bool] | None:
    """(the data set's questions with a metric defined, whether that is exact): the
    pilot's count when the pilot ran on the whole data set, else the data set's questions
    at the pilot's share (an estimate); None without the data set's size."""
    if not dataset_questions or not pilot:
        return None
    if pilot == dataset_questions:
        return defined, True
    return round(dataset_questions * defined / pilot), False


def format_plan(rows, total: float, baseline_n: int, *, dataset_questions: int | None,
                clustered: bool = False,
                defined: dict[str, tuple[int, int]] | None = None) -> list[str]:
    """The table and notes `ablate power` prints; `clustered`: the plan is in clusters
    (n in G clusters and the design effect per row, a warning below FEW_CLUSTERS);
    `defined`: per metric, (the pilot baseline's questions with it defined, its questions),
    so the needed n is compared with the data set's questions that have the metric."""
    from ablate.components.stats.clusters import FEW_CLUSTERS
    from ablate.flows.plan.estimate import duration
    head = ["metric", "variant", "pilot n", "sd", "deff", "delta", "needed n", "s/question",
            "cost"]
    table = [head]
    for r in rows:
        s = r.size
        table.append([r.metric, r.variant, _in_clusters(s.n_pilot, s.n_clusters_pilot, clustered),
                      _fmt(s.sd), _fmt(s.design_effect), _fmt(s.delta, 4),
                      _in_clusters(s.n, s.clusters, clustered), _fmt(r.seconds_per_question),
                      _cost(r.cost)])
    if not clustered:
        table = [row[:4] + row[5:] for row in table]
        head = table[0]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if baseline_n and total > 0:
        lines.append(f"total: about {duration(total)} of per-question stage compute to run "
                     f"every comparison at its needed n (the baseline at {baseline_n}; a "
                     f"stage variants share counted once)")
    elif any(r.size.n for r in rows):
        lines.append("total: - (the pilot has no stage timings)")
    for r in rows:
        if r.size.reason:
            lines.append(f"note: {r.metric} {r.variant}: needed n undefined: {r.size.reason}")
    rough = [r for r in rows if r.size.rough]
    if rough:
        from ablate.components.stats.sample_size import FEW_CHANGED
        lines.append(f"note: {len(rough)} needed n rest on fewer than {FEW_CHANGED} pilot "
                     f"questions whose score changed (" + ", ".join(
                         f"{r.metric} {r.variant}: {r.size.n_changed}" for r in rough)
                     + "): their sd is a rough guess; a larger pilot firms them up")
    few = [r for r in rows if clustered and r.size.n and r.size.n_clusters_pilot < FEW_CLUSTERS]
    if few:
        counts = sorted({r.size.n_clusters_pilot for r in few})
        lines.append("warning: the plan rests on " + (
            f"{counts[0]} pilot clusters" if len(counts) == 1 else "few pilot clusters (" + ", ".join(
                f"{r.metric} {r.variant}: {r.size.n_clusters_pilot}" for r in few) + ")")
            + f" (fewer than {FEW_CLUSTERS}): their variance is a rough estimate, and the "
            "needed n with it; a pilot on more clusters firms it up")
    defined = defined or {}
    partial = [(m, d, p) for m, (d, p) in defined.items() if d < p and any(
        r.metric == m and r.size.n for r in rows)]
    if partial:
        lines.append("note: n counts the questions with a defined metric; cost and total count "
                     "the questions to run for them (" + ", ".join(
                         f"{m}: {d} of the pilot's {p}" for m, d, p in partial) + ")")
    for metric in dict.fromkeys(r.metric for r in rows):
        d, p = defined.get(metric, (dataset_questions or 0, dataset_questions or 0))
        have = available(d, p, dataset_questions)
        if have is None:
            continue
        over = [r for r in rows if r.metric == metric and r.size.n and r.size.n > have[0]]
        if over:
            count = (f"{have[0]} (of the data set's {dataset_questions})" if have[1] else
                     f"~{have[0]} (of the data set's {dataset_questions}; the pilot's share)")
            lines.append(f"note: {len(over)} comparison(s) need more questions than the {count} "
                         f"with a defined {metric}: only a larger effect can be detected on it")
    return lines


def _metrics(requested: list[str], key: list[str], results) -> list[str]:
    """The requested metrics (each must be in the pilot), else the experiment's key
    metrics that the pilot has (sweep_data.present_key)."""
    from ablate.components.report.sweep_data import present_key
    from ablate.components.stats.pilot_plan import metric_columns
    have = metric_columns(results.per_query)
    if not requested:
        return present_key(key, have)
    for m in requested:
        if m not in have:
            raise InputError(f"metric '{m}' is not in the pilot (known: {', '.join(have)})",
                             field="--metric")
    return list(dict.fromkeys(requested))


def embedding_lines_of(experiment: str) -> list[str]:
    """The embedding lines of `ablate check` (flows/plan/embed_estimate.py) for the
    experiment's dense stages not in its stage cache: a one-off cost on top of the
    per-question total (it does not grow with n). Nothing when the context cannot be built
    (power plans from its pilot; `ablate check` says what is wrong with the experiment)."""
    from ablate.flows.plan.embed_estimate import embedding_costs, embedding_lines
    from ablate.flows.run.context import RunOptions, build_context
    try:
        ctx = build_context(experiment, RunOptions())
        cached = {k for k, n in ctx.plan.nodes.items() if ctx.store.has(n.stage, k, use=False)}
        costs = embedding_costs(ctx, set(ctx.plan.nodes) - cached)
    except Exception:  # noqa: BLE001 - an estimate never stops the plan
        return []
    return [line + "; once, on top of the total" for line in embedding_lines(costs)]


def register(app: typer.Typer) -> None:
    @app.command("power")
    def power_cmd(
        experiment: Path = typer.Argument(..., help="Experiment YAML file."),
        pilot: Optional[Path] = typer.Option(
            None, help="Pilot sweep folder (default: the latest finished sweep of this experiment "
                       "under its `out`)."),
        mde: float = typer.Option(0.05, help="Smallest effect to detect, in each metric's own units."),
        power: float = typer.Option(0.8, help="Target power."),
        metric: Optional[list[str]] = typer.Option(
            None, help="Metric to plan for (repeat or comma-separate; default: the experiment's "
                       "metrics.key)."),
        alpha: Optional[float] = typer.Option(
            None, help="Significance level (default: the experiment's stats.alpha)."),
        correction: Optional[str] = typer.Option(
            None, help="Multiple-comparison correction (default: the experiment's stats.correction)."),
        out: Optional[str] = typer.Option(
            None, help="Output root holding the sweeps (default: the spec's `out`)."),
        cluster_column: Optional[str] = typer.Option(
            None, help="The column naming each question's cluster: auto = 'cluster' when the pilot has one, "
                       "none = independent questions (default: the experiment's stats.cluster)."),
    ) -> None:
        """Questions needed per comparison for a target minimum detectable effect."""
        from ablate.components.report.sweep_data import load_sweep
        from ablate.components.stats.correction import check_method
        from ablate.components.stats.pilot_plan import (
            checked_cluster_column,
            defined_share,
            plan,
            total_seconds,
        )
        from ablate.components.stats.sample_size import check_target, planning_alpha
        from ablate.flows.plan.spec_load import load_spec

        spec = load_spec(experiment).spec
        a = spec.stats.alpha if alpha is None else alpha
        corr = check_method(spec.stats.correction if correction is None else correction)
        check_target(mde, power, a)
        if pilot is None:
            root = Path(out or spec.out)
            pilot = find_pilot(root, spec.name)
            if pilot is None:
                raise InputError(f"no finished sweep of experiment '{spec.name}' in {root}: "
                                 f"run a smoke pilot first (ablate run {experiment} --tier "
                                 f"smoke) or pass --pilot SWEEP_DIR", field="--pilot")
        results = load_sweep(pilot)
        pq = results.per_query
        if "variant" not in pq.columns or "qid" not in pq.columns:
            raise InputError("per_query.parquet has no variant/qid columns", path=str(pilot))
        if BASELINE not in pq["variant"].to_list():
            raise InputError(f"the pilot has no '{BASELINE}' rows", path=str(pilot))
        chosen = _metrics([x.strip() for v in metric or [] for x in v.split(",") if x.strip()],
                          list(spec.metrics.key), results)
        choice = cluster_column or spec.stats.cluster
        try:
            cluster = checked_cluster_column(pq, choice)
        except InputError as exc:
            raise InputError(exc.message, path=str(pilot), field="--cluster-column"
                             if cluster_column else "stats.cluster") from None
        rows = plan(pq, results.timings, baseline=BASELINE, metrics=chosen, mde=mde, alpha=a,
                    power=power, correction=corr, family=spec.stats.family, cluster_col=cluster)
        if not rows:
            raise InputError("the pilot has no variant besides the baseline", path=str(pilot))
        total, base_n = total_seconds(rows, results.timings, results.variants, BASELINE)
        man = results.manifest
        typer.echo(f"pilot: {pilot} (experiment '{man.get('experiment')}', tier "
                   f"{man.get('tier')}, {man.get('questions', {}).get('total', '?')} questions, "
                   f"{man.get('created', '?')})")
        if man.get("experiment") != spec.name:
            typer.echo(f"note: the pilot is from experiment '{man.get('experiment')}', "
                       f"not '{spec.name}'")
        m = rows[0].family_size
        test = "cluster-robust t-test (G - 1 df)" if cluster else "paired t-test"
        typer.echo(f"plan: MDE {mde:g} at power {power:g}, two-sided {test} at alpha "
                   f"{planning_alpha(a, corr, m):.3g} per comparison ({corr}, alpha {a:g}, "
                   f"{m} comparison{'s' if m != 1 else ''} per family)"
                   + planned_note(spec.stats.test))
        if cluster:
            typer.echo(f"clusters: column '{cluster}'; needed n = the needed clusters x the "
                       "pilot's mean questions per cluster (new clusters assumed like the "
                       "pilot's: same variance, same mean size); deff = the clustered over the "
                       "independent variance of the mean (below 1: planned as 1)")
        else:
            typer.echo("clusters: none (every question independent)" + (
                "" if choice == "none" else f"; the pilot has no '{choice}' column"
                if choice != "auto" else "; the pilot has no 'cluster' column"))
        defined = {c: defined_share(pq, BASELINE, c) for c in chosen}
        for line in format_plan(rows, total, base_n, clustered=cluster is not None,
                                dataset_questions=man.get("dataset", {}).get("questions"),
                                defined=defined):
            typer.echo(line)
        for line in embedding_lines_of(str(experiment)):  # corpus embedding (issue 42)
            typer.echo(line)
