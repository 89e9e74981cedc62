"""`ablate judge calibrate|probe|make-calibration|gold-labels|plan-labels`: how far to
trust the judge, and the labels that correct its metrics.

- `calibrate CALIB.jsonl --experiment EXP.yaml`: the experiment's judge on a labelled set:
  agreement and Cohen's kappa with 95% intervals, failures (counted as disagreements) and
  the confusion matrix, overall, per kind and per language (docs/judge-calibration.md).
  Items about a question the experiment selects are refused (exit 2): calibration is held
  out from the sweep. `--require 0.8` exits 1 when any kind's agreement is below 0.8
  (`--require-lower`: its interval's lower bound), naming the kinds; a kind a judged
  metric of the experiment needs and the set lacks fails too;
- `probe --experiment EXP.yaml`: length and position bias on the experiment's questions,
  and whether the judge's model also generates in the sweep (self-preference);
- `make-calibration DATA --out CALIB.jsonl`: a synthetic calibration set with labels true
  by construction from an extractive QA data set (components/judge/calibset.py says how);
  `--held-out-from EXP.yaml` draws it from the questions that experiment's split never
  selects;
- `gold-labels SWEEP_DIR --out FILE`: gold verdicts of judge/context_recall from the data's
  spans for a seeded share of the sweep's clusters (a `judge.labels` file);
- `plan-labels SWEEP_DIR --labels FILE --half-width H`: the labels each judge-corrected
  difference needs for a CI half-width of H.
Both judging commands share the sweep's verdict cache, so nothing is judged twice.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer


def _context(experiment: Path, cache_dir: Optional[str], tier: Optional[str] = None):
    from ablate.components.contract.errors import InputError
    from ablate.flows import env
    from ablate.flows.run.context import RunOptions, get_context
    env.prepare()
    ctx = get_context(str(experiment), RunOptions(tier=tier, cache_dir=cache_dir))
    if ctx.spec.judge is None:
        raise InputError("the experiment has no `judge:` section", path=str(experiment),
                         field="judge")
    return ctx


def _clean(x):
    """JSON-safe: NaN becomes null."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def register(app: typer.Typer) -> None:
    judge_app = typer.Typer(no_args_is_help=True, help="Calibrate and probe the judge.")
    app.add_typer(judge_app, name="judge")

    @judge_app.command("calibrate")
    def calibrate(
        calib: Path = typer.Argument(..., help="Calibration set (JSONL, labelled items)."),
        experiment: Path = typer.Option(..., help="Experiment YAML whose `judge:` is calibrated."),
        cache_dir: Optional[str] = typer.Option(None, help="Stage result cache folder."),
        json_out: Optional[Path] = typer.Option(None, "--json", help="Also write summary and rows here."),
        require: Optional[float] = typer.Option(
            None, min=0, max=1, help="Exit 1 when any kind's agreement is below this."),
        require_lower: Optional[float] = typer.Option(
            None, min=0, max=1, help="Exit 1 when any kind's 95% lower bound is below this."),
        quiet: bool = typer.Option(False, help="No line per item."),
    ) -> None:
        """Agreement and Cohen's kappa (95% intervals), failures and confusion matrix of the
        judge on labelled items, per kind and language."""
        from ablate.components.judge.agreement import shortfalls
        from ablate.components.judge.calibration import held_out, judge_items, read_items, render, summarize
        from ablate.components.metrics.judged import judging_of
        from ablate.flows.run.stages import judge_cache, judge_of
        items = read_items(calib)
        ctx = _context(experiment, cache_dir)
        held_out(items, [q.qid for q in ctx.questions], calib)

        def line(n, total, item, row):
            if not quiet:
                said = "ERROR " + row["error"] if row["error"] else (row["verdict"] or "FAILED")
                typer.echo(f"[{n}/{total}] {item.id} ({item.kind}, {row['lang']}): judge {said}, "
                           f"label {str(item.label).lower()}")
        rows = judge_items(judge_of(ctx), ctx.judge_prompts, ctx.spec.judge, items,
                           judge_cache(ctx), progress=line)
        summary = summarize(rows)
        typer.echo(f"judge: {judge_of(ctx).cache_identity}")
        typer.echo(render(summary))
        if json_out is not None:
            json_out.write_text(json.dumps(_clean({"summary": summary, "rows": rows}), indent=2,
                                           ensure_ascii=False) + "\n")
        needed = sorted({k for m in ctx.spec.judge.metrics
                         if (j := judging_of(m)) is not None and (k := j.calibration)})
        failed = []
        for value, lower in ((require, False), (require_lower, True)):
            short = [] if value is None else shortfalls(summary, value, lower=lower, kinds=needed)
            if short:
                what = "95% lower bound of agreement" if lower else "agreement"
                failed.append(f"{what} below the required {value:g}: " + ", ".join(short))
        if failed:
            typer.echo("; ".join(failed), err=True)
            raise typer.Exit(1)

    @judge_app.command("probe")
    def probe(
        experiment: Path = typer.Option(..., help="Experiment YAML whose `judge:` is probed."),
        n: int = typer.Option(10, min=1, help="Questions to build probe cases from."),
        tier: Optional[str] = typer.Option(None, help="Question tier (default: the spec's)."),
        cache_dir: Optional[str] = typer.Option(None, help="Stage result cache folder."),
        json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the figures here."),
    ) -> None:
        """Length bias, position bias and the self-preference flag of the judge."""
        from ablate.components.judge.probes import probe_cases, render, run_probes, self_preference
        from ablate.flows.outputs.judging import generator_models
        from ablate.flows.run.stages import judge_cache, judge_of
        ctx = _context(experiment, cache_dir, tier)
        cases = probe_cases(ctx.dataset, ctx.questions, n, ctx.spec.seed)
        judge = judge_of(ctx)
        result = run_probes(judge, ctx.judge_prompts, ctx.spec.judge, cases, judge_cache(ctx),
                            progress=lambda i, t, c: typer.echo(f"[{i}/{t}] {c['qid']}"))
        mine = self_preference(judge.model_key(), generator_models(ctx))
        typer.echo(f"judge: {judge.cache_identity}")
        typer.echo(render(result, mine))
        if json_out is not None:
            json_out.write_text(json.dumps(_clean(result | {"self_preference": mine}), indent=2) + "\n")

    @judge_app.command("plan-labels")
    def plan_labels_cmd(
        sweep_dir: Path = typer.Argument(..., help="A sweep folder with judged metrics (the pilot)."),
        labels: Path = typer.Option(..., help="The labels file the sweep has so far (JSONL)."),
        half_width: float = typer.Option(..., help="The target CI half-width of the corrected difference."),
    ) -> None:
        """How many labelled questions each judge-corrected paired difference needs for a
        target CI half-width (docs/judge-labels.md)."""
        from ablate.flows.outputs.label_plan import plan_lines
        for line in plan_lines(sweep_dir, labels, half_width):
            typer.echo(line)

    @judge_app.command("make-calibration")
    def make_calibration(
        data: Path = typer.Argument(..., help="Extractive QA data (SQuAD v2 / DRCD JSON, native JSONL)."),
        out: Path = typer.Option(..., help="Where to write the calibration set (JSONL)."),
        n: int = typer.Option(8, min=1, help="Questions (6 items each)."),
        seed: int = typer.Option(0, help="Sampling seed."),
        format: str = typer.Option("auto", help="auto | jsonl | squad"),
        held_out_from: Optional[Path] = typer.Option(
            None, help="Experiment YAML on DATA: draw only from the questions its split "
                       "never selects (at any tier)."),
    ) -> None:
        """A synthetic calibration set whose labels are true by construction, with hard
        negatives from the same article (see calibset.py)."""
        from ablate.components.data import load_dataset
        from ablate.components.judge.calibset import build, write_jsonl
        dataset = load_dataset(data, format=format)
        pool, note = None, ""
        if held_out_from is not None:
            pool, note = _held_out_pool(held_out_from, data, dataset)
        items = build(dataset, n, seed, pool)
        write_jsonl(items, out)
        typer.echo(f"{len(items)} items ({len(items) // 6} questions) written to {out}{note}")

    @judge_app.command("gold-labels")
    def gold_labels_cmd(
        sweep_dir: Path = typer.Argument(..., help="A sweep folder (runs/<sweep_id>)."),
        out: Path = typer.Option(..., help="Where to write the labels file (JSONL)."),
        share: float = typer.Option(0.5, help="The share of the sweep's question clusters labelled."),
        seed: int = typer.Option(0, help="Sampling seed."),
        data: Optional[Path] = typer.Option(None, help="The sweep's data set (default: the "
                                            "manifest's path, from the experiment file's folder)."),
    ) -> None:
        """Gold verdicts of judge/context_recall from the data's spans (is the evidence inside
        the context?) for a random share of the sweep's clusters, every variant's context
        labelled: a `judge.labels` file for judge-corrected estimates (docs/judge-labels.md)."""
        from ablate.flows.outputs.gold_labels import gold_labels
        n = gold_labels(sweep_dir, out, share=share, seed=seed, data=data)
        typer.echo(f"{n} gold labels of judge/context_recall written to {out}")


def _held_out_pool(experiment: Path, data: Path, dataset):
    """The questions of DATA the experiment's split never selects, and a note saying so."""
    from ablate.components.data.tiers import split_pool
    from ablate.flows.plan.spec_load import load_spec
    loaded = load_spec(experiment)
    spec = loaded.spec
    if loaded.resolve(spec.dataset.path).resolve() != Path(data).resolve():
        raise loaded.error(f"the experiment's data set is not {data}", ("dataset", "path"))
    if spec.split == "all":
        raise loaded.error("the experiment runs on every question (split: all): no question "
                           "is held out from it", ("split",))
    other = "test" if spec.split == "dev" else "dev"
    pool = split_pool(dataset.questions, split=other, seed=spec.seed,
                      test_fraction=spec.split_share)
    return pool, (f"; drawn from the {len(pool)} questions of the {other} split (seed "
                  f"{spec.seed}, split_share {spec.split_share:g}) that {experiment}'s "
                  f"split ({spec.split}) never selects")
