"""One vocabulary per option, defined once and used by the spec, the CLI and the report.

Statistical tests and corrections are registries (ablate.components.stats); the names here are
plain options with no code behind each value.
"""

from __future__ import annotations

BASELINE = "baseline"  # the name of the baseline variant
TIERS = ("smoke", "regression", "full")
SPLITS = ("dev", "test", "all")
QUESTION_SPLITS = ("dev", "test")  # the split a question record may carry
CI_METHODS = ("inversion", "bca", "percentile", "t")  # inversion: of the test itself
FAMILIES = ("per_metric", "all")
CLUSTER_CHOICES = ("auto", "none", "type")  # `stats.cluster`: resolved, independent, a field
NDCG_GAINS = ("linear", "exponential")
ANSWER_NORMALIZERS = ("squad", "cmrc", "auto")
LABEL_MODES = ("span", "document")  # chunk relevance: covered span fraction, or its document's grade
DESIGN_KINDS = ("factorial",)  # experiment `design.kind`
FRACTIONS = ("full", "half")  # `design.fraction`: every cell, or the 2^(4-1) half (D = ABC)
DEFAULT_KEY_METRICS = ("final/recall_at_5", "final/ndcg_at_10", "answer/f1", "answer/em")
# `query.perturbation`: "none" and the perturbations of ablate.components.text.perturbation
# (which checks at import that it implements exactly these).
PERTURBATION_NAMES = ("none", "typo", "casing", "stopword", "punctuation", "script", "fullwidth")
