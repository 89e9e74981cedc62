"""Tracking: MLflow runs of a finished sweep, and its Prefect artifacts."""
