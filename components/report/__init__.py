"""Ablation reports: findings and per-variable tables from stats and per-query results."""
