"""The statistics engine: paired tests of every variant against the baseline.

Sign-flip randomisation test (exact when cheap), paired t and Wilcoxon, bootstrap CIs
(BCa / percentile, clustered), d_z, wins/ties/losses, MDE, and multiple-comparison
corrections as R's p.adjust. Plain numpy/scipy/polars: no prefect, no mlflow.
"""

from importlib import import_module
from typing import Any

# name -> module: loaded on first use, so that importing a submodule (the registries the
# experiment file is checked against) does not pay for scipy.stats (about 1 s).
_EXPORTS = {"compare_variants": "compare", "STATS_COLUMNS": "compare", "OUTPUT_SCHEMA": "compare",
            "adjust_pvalues": "correction", "CORRECTIONS": "correction", "TESTS": "paired_tests",
            "PerQueryTable": "table_io", "load_per_query": "table_io", "read_table": "table_io"}
from ablate.components.contract.vocab import CI_METHODS, FAMILIES  # noqa: E402

__all__ = ["compare_variants", "adjust_pvalues", "STATS_COLUMNS", "OUTPUT_SCHEMA",
           "TESTS", "CI_METHODS", "FAMILIES", "CORRECTIONS", "PerQueryTable",
           "load_per_query", "read_table"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"ablate.components.stats.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'ablate.components.stats' has no attribute {name!r}")
