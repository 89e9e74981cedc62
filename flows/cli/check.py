"""`ablate check EXPERIMENT.yaml`: validate the experiment and its data, print the plan.

Runs every check `ablate run` runs before it computes anything (the spec, the
components every variant names, the data set, the question selection), then prints
the plan: the variants, the unique stages per kind and how many the cache already
holds, the questions each comparison pairs, and a time estimate from earlier runs'
manifests; with a `judge:` section, the judge's calls, the prompts the verdict cache
already holds and the prompt tokens (ablate.flows.run.judge_cost); the estimated spend at
the experiment's prices (ablate.flows.run.spend_estimate); then a warning line for each key metric some variant's pipeline cannot
produce, and one when ranking metrics at k compare variants with different chunkings
(ablate.flows.plan.producible). Writes nothing; exit 0, or one error line and exit 2.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List, Optional

import typer

from ablate.components.contract.vocab import SPLITS, TIERS


def cluster_text(choice: str, questions) -> str:
    """'in G clusters (how)' for `stats.cluster`, with a warning under FEW_CLUSTERS."""
    from ablate.components.data.clusters import cluster_labels
    from ablate.components.stats.clusters import FEW_CLUSTERS
    if choice == "none":
        return "independent questions (stats.cluster: none)"
    labels = set(cluster_labels(questions, choice))
    how = "by document" if choice == "auto" else f"by '{choice}'"
    few = (f"; fewer than {FEW_CLUSTERS}: only large effects can be decided"
           if len(labels) < FEW_CLUSTERS else "")
    return f"in {len(labels)} clusters ({how}{few})"


def design_stage_text(ctx) -> str:
    """'the cells need 12 unique stages (cached: 3): chunk 2, label 2, ...', the stages the
    design's cells run, shared between cells through the cache as sweeps' are."""
    keys = {k for v in ctx.variants if v.cell is not None
            for k in ctx.plan.by_variant[v.name].values()}
    kinds = Counter(ctx.plan.nodes[k].stage for k in keys)
    cached = sum(ctx.store.has(ctx.plan.nodes[k].stage, k, use=False) for k in keys)
    return (f"the cells need {len(keys)} unique stages ({cached} cached): "
            + ", ".join(f"{stage} {n}" for stage, n in kinds.items()))


def plan_lines(ctx, out_root: Path) -> list[str]:
    """The plan of a run context, as the lines `ablate check` prints."""
    from ablate.flows.plan.embed_estimate import embedding_costs, embedding_lines
    from ablate.flows.plan.estimate import duration, estimate_work, rates, read_manifests
    from ablate.flows.plan.generation_prior import prior_line
    from ablate.flows.run.stage_timing import timing_key, work_units

    ds, qs = ctx.dataset, ctx.questions
    n_ans = sum(q.answerable for q in qs)
    n_ev = sum(bool(q.evidence) for q in qs)
    lines = [f"data:      {ds.source}: {len(ds.documents)} documents, {len(ds.questions)} "
             f"questions, fingerprint {ds.fingerprint}",
             f"questions: {len(qs)} per comparison ({n_ans} answerable, {len(qs) - n_ans} "
             f"unanswerable; retrieval metrics on the {n_ev} with evidence)",
             f"           {cluster_text(ctx.spec.stats.cluster, qs)}",
             "           " + " -> ".join(f"{name}: {n}" for name, n in ctx.selection)]
    own: dict[str | None, tuple[int, str, tuple]] = {}
    for v in ctx.variants:
        if ctx.variant_questions and not v.is_baseline:
            tier, n = v.sample or (None, None)
            how = f"n {n}" if n else f"tier {tier}" if tier else f"the experiment's tier {ctx.tier}"
            own.setdefault(v.variable, (len(ctx.questions_of(v.name)), how, ctx.questions_of(v.name)))
    if own:
        lines[1] = (f"questions: {len(qs)} for the baseline (the union of every comparison's "
                    f"questions; {n_ans} answerable)")
        lines += [f"  {var}: {n} per comparison ({how}, nested in the baseline's), "
                  f"{cluster_text(ctx.spec.stats.cluster, qv)}"
                  for var, (n, how, qv) in own.items()]
    design = ctx.spec.design
    if design is not None:
        shape = " × ".join(str(len(v)) for v in design.variables.values())
        cells = sum(v.cell is not None for v in ctx.variants)
        lines.append(f"design:    {design.kind} {shape} ({design.fraction}) over "
                     f"{', '.join(design.variables)}: {cells} cells, the baseline one of them")
        lines.append("           " + design_stage_text(ctx))
    lines.append(f"variants:  {len(ctx.variants)}")
    for v in ctx.variants:
        line = ctx.loaded.line_of(v.loc) if v.loc else None
        lines.append(f"  {v.name}" + (f"  (line {line})" if line and not v.is_baseline else ""))
    cached = {k for k, n in ctx.plan.nodes.items() if ctx.store.has(n.stage, k, use=False)}
    kinds = Counter(n.stage for n in ctx.plan.nodes.values())
    hits = Counter(ctx.plan.nodes[k].stage for k in cached)
    lines.append(f"stages:    {len(ctx.plan.nodes)} unique, {len(cached)} cached in "
                 f"{ctx.store.root}")
    lines.append("  " + ", ".join(f"{stage} {n} ({hits[stage]} cached)" for stage, n in kinds.items()))
    todo = [(timing_key(n), work_units(ctx, n), n) for k, n in ctx.plan.nodes.items()
            if k not in cached]
    lines += embedding_lines(embedding_costs(ctx, set(ctx.plan.nodes) - cached))
    if not todo:
        lines.append("estimate:  nothing to compute (every stage is cached)")
        return lines
    est = estimate_work([(k, u) for k, u, _ in todo],
                        rates(read_manifests(out_root), ds.fingerprint))
    prior, priced = prior_line([t for t in todo if t[0] in set(est.unknown)], ctx.plan.nodes)
    lines += [prior] if prior else []
    if est.runs == 0:
        lines.append(f"estimate:  no earlier runs with timings in {out_root}; "
                     f"{len(todo)} stages to compute")
        return lines
    source = (f"rates from {est.runs} earlier run{'s' if est.runs != 1 else ''} "
              f"{'on this data set' if est.same_data else 'on other data'} in {out_root}")
    text = f"estimate:  about {duration(est.seconds)} of stage compute for {est.estimated} stages"
    unknown = [k for k in est.unknown if k not in priced]
    if unknown:
        text += (f"; {len(unknown)} more without a rate "
                 f"({', '.join(sorted(set(unknown)))})")
    lines.append(f"{text} ({source})")
    return lines


def warning_lines(ctx) -> list[str]:
    """What the configured pipelines cannot measure, or not on equal terms
    (ablate.flows.plan.producible): key metrics some or all variants do not produce, and
    ranking metrics at k compared across chunkings."""
    from ablate.flows.plan.coverable import coverage_lines
    from ablate.flows.plan.producible import chunking_line, key_metric_lines
    from ablate.flows.plan.slice_check import slice_lines
    chunks = chunking_line(ctx)
    return (key_metric_lines(ctx) + ([chunks] if chunks else []) + coverage_lines(ctx)
            + slice_lines(ctx))


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        experiment: Path = typer.Argument(..., help="Experiment YAML file."),
        out: Optional[str] = typer.Option(
            None, help="Output root with earlier runs (default: the spec's `out`)."),
        tier: Optional[str] = typer.Option(None, help=" | ".join(TIERS)),
        split: Optional[str] = typer.Option(None, help=" | ".join(SPLITS)),
        cache_dir: Optional[str] = typer.Option(None, help="Stage result cache folder."),
        gate_max_drop: Optional[float] = typer.Option(
            None, help="A planned gate's allowed drop: warn when this run's questions cannot "
                       "prove it (from an earlier sweep of the experiment)."),
        gate_metric: Optional[List[str]] = typer.Option(
            None, help="The planned gate's metric (repeat; default: the key metrics)."),
    ) -> None:
        """Validate an experiment and its data, and print the plan (writes nothing)."""
        from ablate.components.contract.errors import InputError
        from ablate.flows.run.context import RunOptions, build_context

        if tier is not None and tier not in TIERS:
            raise InputError(f"unknown tier '{tier}' ({', '.join(TIERS)})", field="--tier")
        if split is not None and split not in SPLITS:
            raise InputError(f"unknown split '{split}' ({', '.join(SPLITS)})", field="--split")
        ctx = build_context(str(experiment), RunOptions(tier, split, cache_dir))
        from ablate.flows.run.sharded import check_scheduler
        check_scheduler(ctx.loaded)
        from ablate.flows.plan.out_paths import check_out
        check_out(ctx.loaded, out)
        for notice in ctx.notices:
            typer.echo(f"notice: {notice}")
        typer.echo(f"OK {experiment}: experiment '{ctx.spec.name}', tier {ctx.tier}, "
                   f"split {ctx.split}")
        for line in plan_lines(ctx, Path(out or ctx.spec.out)):
            typer.echo(line)
        from ablate.flows.run.judge_cost import judge_cost_lines
        for line in judge_cost_lines(ctx):
            typer.echo(line)
        from ablate.flows.run.spend_estimate import spend_lines
        for line in spend_lines(ctx):
            typer.echo(line)
        for line in warning_lines(ctx):
            typer.echo(f"warning: {line}")
        if gate_max_drop is not None:
            from ablate.components.report.gate import check_rule
            from ablate.flows.cli.power import find_pilot
            from ablate.flows.plan.gate_plan import gate_lines
            check_rule("non-inferiority", gate_max_drop)
            split_n = next((n for name, n in ctx.selection if name.startswith("split")), None)
            pilot = find_pilot(Path(out or ctx.spec.out), ctx.spec.name)
            for line in gate_lines(pilot, gate_max_drop, list(gate_metric or ctx.spec.metrics.key),
                                   len(ctx.questions), split_n):
                typer.echo(f"{'warning' if pilot else 'note'}: {line}")
