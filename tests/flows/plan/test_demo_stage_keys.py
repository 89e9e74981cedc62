"""The bundled experiments' stage keys, pinned (issue 51): every variant's label -> key map
of the plans of experiments/*.yaml, as `ablate check` plans them (no model runs), equals
tests/fixtures/demo_stage_keys.json, recorded from the code before the retrieval families
moved into rooms (components/retrieval/{lexical,dense}/). A module's path must never leak
into a key: moving a file keeps every key.

Installed library versions (a component's `libraries`) are part of a key; here they are
pinned to one string, so the fixture holds on any machine whatever is installed. A
deliberate key change (a component's `version` bump, a new stage input) re-records it:
`.venv/bin/python tests/flows/plan/test_demo_stage_keys.py --record`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "demo_stage_keys.json"
EXPERIMENTS = ("demo.yaml", "demo-judge.yaml", "demo-zh.yaml", "demo-robustness.yaml",
               "factorial-demo.yaml", "three-path.yaml", "worth-demo.yaml", "same-work.yaml",
               "ann-index.yaml")


def _pinned(version: str) -> str:
    return "pinned"


def plan_keys(name: str) -> dict[str, dict[str, str]]:
    """variant -> stage label -> key of experiments/`name` (call with versions pinned)."""
    from ablate.flows.plan.sweep_plan import RunOptions, plan_sweep
    return plan_sweep(ROOT / "experiments" / name, RunOptions()).plan.by_variant


def _pin(setattr: Any) -> None:
    """Installed versions as one string, and no optional extra missing (demo-judge's
    llama_cpp backend is only declared here, never loaded)."""
    from ablate.components.contract import registry
    real = registry.installed_version
    for module in list(sys.modules.values()):
        if getattr(module, "installed_version", None) is real:
            setattr(module, "installed_version", _pinned)
    setattr(registry.Declaration, "missing_requirement", lambda self, config=None: None)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_bundled_experiment_stage_keys_are_pinned(name, monkeypatch):
    import ablate.flows.plan.sweep_plan  # noqa: F401  (registers the components first)
    _pin(monkeypatch.setattr)
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert plan_keys(name) == recorded[name]


def test_fixture_covers_every_pinned_experiment():
    assert sorted(json.loads(FIXTURE.read_text(encoding="utf-8"))) == sorted(EXPERIMENTS)


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    import ablate.flows.plan.sweep_plan  # noqa: F401

    _pin(setattr)
    FIXTURE.write_text(json.dumps({n: plan_keys(n) for n in EXPERIMENTS}, indent=1,
                                  sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {FIXTURE}")
