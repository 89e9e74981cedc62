"""Data sets: native JSONL, SQuAD v2 and BEIR loaders, validation, fingerprint, tiers."""

from ablate.components.data.load import FORMATS, detect_format, load_dataset
from ablate.components.data.tiers import select_questions

__all__ = ["FORMATS", "detect_format", "load_dataset", "select_questions"]
