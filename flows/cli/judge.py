"""`ablate judge calibrate|probe|make-calibration`: how far to trust the judge.

- `calibrate CALIB.jsonl --experiment EXP.yaml`: the experiment's judge on a labelled set:
  agreement, Cohen's kappa and the confusion matrix, overall, per kind and per language
  (`--require 0.8` exits 1 below that agreement);
- `probe --experiment EXP.yaml`: length and position bias on the experiment's questions,
  and whether the judge's model also generates in the sweep (self-preference);
- `make-calibration DATA --out CALIB.jsonl`: a calibration set with labels true by
  construction from an extractive QA data set (components/judge/calibset.py says how).
Both judging commands share the sweep's verdict cache, so nothing is judged twice.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer


def _context(experiment: Path, cache_dir: Optional[str], tier: Optional[str] = None):
    from ablate.components.errors import InputError
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
        require: Optional[float] = typer.Option(None, min=0, max=1,
                                                help="Exit 1 when agreement is below this."),
        quiet: bool = typer.Option(False, help="No line per item."),
    ) -> None:
        """Agreement, Cohen's kappa and confusion matrix of the judge on labelled items."""
        from ablate.components.judge.calibration import judge_items, read_items, render, summarize
        from ablate.flows.run.stages import judge_cache, judge_of
        items = read_items(calib)
        ctx = _context(experiment, cache_dir)

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
        for lang, s in summary["by_lang"].items():
            typer.echo(f"  {lang}: agreement {s['agreement']:.3f} on {s['judged']} items")
        if json_out is not None:
            json_out.write_text(json.dumps(_clean({"summary": summary, "rows": rows}), indent=2,
                                           ensure_ascii=False) + "\n")
        if require is not None and not summary["agreement"] >= require:
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

    @judge_app.command("make-calibration")
    def make_calibration(
        data: Path = typer.Argument(..., help="Extractive QA data (SQuAD v2 / DRCD JSON, native JSONL)."),
        out: Path = typer.Option(..., help="Where to write the calibration set (JSONL)."),
        n: int = typer.Option(8, min=1, help="Questions (6 items each)."),
        seed: int = typer.Option(0, help="Sampling seed."),
        format: str = typer.Option("auto", help="auto | jsonl | squad"),
    ) -> None:
        """A calibration set whose labels are true by construction (see calibset.py)."""
        from ablate.components.data import load_dataset
        from ablate.components.judge.calibset import build, write_jsonl
        items = build(load_dataset(data, format=format), n, seed)
        write_jsonl(items, out)
        typer.echo(f"{len(items)} items ({len(items) // 6} questions) written to {out}")
