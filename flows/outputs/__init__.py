"""A finished sweep's output folder: per-query table, statistics, manifest, report."""
