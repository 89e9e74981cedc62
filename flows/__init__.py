"""ablate orchestration: experiment specs, the Prefect sweep flow, the cache, MLflow, the CLI."""
