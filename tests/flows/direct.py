"""A sweep run directly, stage by stage in this process (no Prefect, no MLflow), on the
tiny SQuAD fixture: what the flows tests that check stages and outputs share."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import FIXTURES


def write_spec(folder: Path, template: str) -> Path:
    """`template` (a YAML text with a `{data}` field) as folder/exp.yaml."""
    spec = Path(folder) / "exp.yaml"
    spec.write_text(textwrap.dedent(template.format(data=FIXTURES / "squad_tiny.json")))
    return spec


def run_direct(folder: Path, template: str):
    """(run context, sweep folder, spec path): every stage of the plan run directly with
    the stage cache under `folder`, then the outputs written under folder/runs."""
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.outputs.write import write_outputs
    from ablate.flows.run.stages import run_stage
    spec = write_spec(folder, template)
    ctx = build_context(str(spec), RunOptions(cache_dir=str(Path(folder) / "cache")))
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    return ctx, write_outputs(ctx, Path(folder) / "runs", ctx.started, {}), spec
