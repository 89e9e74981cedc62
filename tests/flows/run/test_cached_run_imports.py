"""What an unchanged re-run (every stage cached: no index built, no analysis) imports at
its start: the CLI, the sweep flow, the Prefect server helper and every registered
component, without scipy (~0.5 s; imported where an index is built or statistics run)
nor the model libraries."""

from __future__ import annotations

from tests.fresh import imported_after


def test_start_of_a_run_imports_neither_scipy_nor_models():
    code = ("from ablate.flows.cli.main import build_app; import ablate.flows.sweep, "
            "ablate.flows.run.server, ablate.flows.run.stages; "
            "from ablate.components import catalogue; catalogue.load(); build_app()")
    assert imported_after(code, ("scipy", "scipy.special", "scipy.sparse", "torch",
                                 "transformers", "sentence_transformers", "mlflow")) == []
