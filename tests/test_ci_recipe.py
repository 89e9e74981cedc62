"""The merge-check recipe (examples/ci/smoke-gate.yml, issue 55.5): a workflow file whose
every `ablate` command parses with ablate's own CLI (the sub-command and each option
exist), whose experiment is in the repository, and whose gate fails the job on a
significant drop (`--rule worse`, exit 1)."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer
import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "examples" / "ci" / "smoke-gate.yml"


def _ablate_commands() -> list[list[str]]:
    flow = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    env = flow["env"]
    out = []
    for job in flow["jobs"].values():
        for step in job["steps"]:
            run = step.get("run", "")
            for name, value in env.items():
                run = run.replace(f'"${name}"', value).replace(f"${name}", value)
            words = shlex.split(run)
            if words and words[0] == ".venv/bin/ablate":
                out.append(words[1:])
    return out


def test_every_ablate_command_of_the_recipe_parses():
    from ablate.components import catalogue
    from ablate.flows.cli.main import build_app
    catalogue.load()
    cli = typer.main.get_command(build_app())
    commands = _ablate_commands()
    assert [c[0] for c in commands] == ["run", "gate"]
    for words in commands:
        cmd = cli.commands[words[0]]  # type: ignore[attr-defined]
        ctx = cmd.make_context(words[0], list(words[1:]))  # an unknown option raises here
        assert ctx.params
    run, gate = commands
    assert (ROOT / run[1]).is_file() and run[run.index("--tier") + 1] == "smoke"
    assert gate[gate.index("--rule") + 1] == "worse" and "--reference" in gate


def test_the_install_step_is_the_readmes_first_command():
    text = RECIPE.read_text(encoding="utf-8")
    assert "bash scripts/install.sh\n" in text and (ROOT / "scripts" / "install.sh").is_file()
    assert "bash scripts/install.sh" in (ROOT / "README.md").read_text(encoding="utf-8")
