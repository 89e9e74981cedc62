"""Gating a sweep folder against a reference (a stored sweep folder or an MLflow run id):
used by `ablate gate --reference` and by the flow's `gate_reference` parameter."""

from __future__ import annotations

from pathlib import Path


def load_reference(ref: str, tracking_uri: str | None):  # type: ignore[no-untyped-def]
    """A folder path, else an MLflow run id (a variant's run, or a sweep's parent run
    whose baseline child is taken)."""
    from ablate.components.contract.errors import InputError
    from ablate.components.report.reference import reference_from_folder
    if Path(ref).is_dir():
        return reference_from_folder(Path(ref))
    if len(ref) == 32 and all(c in "0123456789abcdef" for c in ref):
        from ablate.flows import env
        from ablate.flows.track.tracking import fetch_reference
        return fetch_reference(ref, env.tracking_uri(tracking_uri, Path.cwd()))
    raise InputError("neither a sweep folder nor an MLflow run id", path=ref, field="--reference")


def gate_reference(sweep_dir: Path, ref: str, metrics: list[str], max_drop: float | None,
                   variant: str | None, tracking_uri: str | None = None,
                   rule: str = "non-inferiority"):  # type: ignore[no-untyped-def]
    """(results, markdown) of gating a sweep folder against a reference (rule:
    ablate.components.report.gate; non-inferiority needs max_drop > 0). The sweep's
    recorded statistics settings (alpha, resamples, cluster: a missing one is auto) and
    seed are used; no `metrics`: its key metrics."""
    from ablate.components.report.gate import check_rule
    from ablate.components.report.reference import compare_to_reference, reference_markdown
    from ablate.components.report.sweep_data import gated_default, load_sweep
    max_drop = check_rule(rule, max_drop)  # before loading anything
    res = load_sweep(sweep_dir)
    metrics = metrics or gated_default(res)
    man = res.manifest
    reference = load_reference(ref, tracking_uri)
    results = compare_to_reference(res.per_query, man["dataset"]["fingerprint"], reference,
                                   metrics, man.get("statistics", {}), seed=man.get("seed", 0),
                                   max_drop=max_drop, variant=variant, rule=rule)
    return results, reference_markdown(results, reference.label, man.get("sweep_id", ""), max_drop,
                                       man)
