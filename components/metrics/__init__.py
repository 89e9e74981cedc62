"""Metrics: retrieval (per stage) here; answer, refusal and attribution metrics beside it."""
