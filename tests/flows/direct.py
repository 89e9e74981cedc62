"""A sweep run directly, stage by stage in this process (no Prefect, no MLflow), on the
tiny SQuAD fixture: what the flows tests that check stages and outputs share."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_spec(folder: Path, spec: str) -> Path:
    """`spec` (an experiment file's YAML text, as tests.specs.experiment makes it) as
    folder/exp.yaml."""
    path = Path(folder) / "exp.yaml"
    path.write_text(textwrap.dedent(spec))
    return path


def run_direct(folder: Path, spec: str):
    """(run context, sweep folder, spec path): every stage of the plan run directly with
    the stage cache under `folder`, then the outputs written under folder/runs."""
    from ablate.flows.outputs.write import write_outputs
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    spec_path = write_spec(folder, spec)
    ctx = build_context(str(spec_path), RunOptions(cache_dir=str(Path(folder) / "cache")))
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    return ctx, write_outputs(ctx, Path(folder) / "runs", ctx.started, {}), spec_path


def run_judged(spec_path: Path, cache: Path, script, fake_model):
    """(run context, scripted judge): every stage of `spec_path`'s plan run directly with a
    ScriptedJudge answering `script` and SmolLM2's generation replaced by `fake_model`
    (LlamaLocalGenerator._generate_one), the stage cache under `cache`."""
    import pytest

    from ablate.components.generation.base import BaseGenerator
    from ablate.components.generation.llama_local import LlamaLocalGenerator
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    from tests.components.judge.fakes import ScriptedJudge
    ctx = build_context(str(spec_path), RunOptions(cache_dir=str(cache)))
    judge = ScriptedJudge(script, ctx.spec.judge)
    ctx.memo["judge"] = judge
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LlamaLocalGenerator, "_generate_one", fake_model)
        # one question at a time through the fake (the torch backend batches otherwise)
        mp.setattr(LlamaLocalGenerator, "_generate_batch", BaseGenerator._generate_batch)
        for node in ctx.plan.nodes.values():
            run_stage(ctx, node)
    return ctx, judge
