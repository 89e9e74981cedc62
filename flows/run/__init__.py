"""What a sweep runs on: its stages, the run context, the result store, the Prefect server,
the console, native-library probes (the flow itself is ablate.flows.sweep)."""
