"""The statistics engine: paired tests of every variant against the baseline.

Sign-flip randomisation test (exact when cheap), paired t and Wilcoxon, bootstrap CIs
(BCa / percentile, clustered), d_z, wins/ties/losses, MDE, and multiple-comparison
corrections as R's p.adjust. Plain numpy/scipy/polars: no prefect, no mlflow.
"""

from components.stats.compare import OUTPUT_SCHEMA, STATS_COLUMNS, compare_variants
from components.stats.correction import CORRECTIONS, adjust_pvalues
from components.stats.paired_tests import TESTS
from components.vocab import CI_METHODS, FAMILIES
from components.stats.table_io import PerQueryTable, load_per_query, read_table

__all__ = ["compare_variants", "adjust_pvalues", "STATS_COLUMNS", "OUTPUT_SCHEMA",
           "TESTS", "CI_METHODS", "FAMILIES", "CORRECTIONS", "PerQueryTable",
           "load_per_query", "read_table"]
