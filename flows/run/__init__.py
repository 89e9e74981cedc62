"""Running a sweep: the Prefect flow, its stages, the run context, the result store."""
