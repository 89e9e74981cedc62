"""Deployment definitions of the sweep flow, read from the project's prefect.yaml.

prefect.yaml is the one place the scheduled deployments are written down (a nightly
smoke tier and a weekly full tier on a process work pool, for `prefect deploy`); this
module turns the same entries into runner deployments for `flow.serve`, so `ablate serve`
runs exactly what a worker would, on one machine and without a work pool.

A gated deployment (`gate_reference`) needs `gate_max_drop` > 0: the gate proves
non-inferiority, and a drop of 0 can never be proven; checked when the file is read, not
after a night's sweep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ablate.components.contract.errors import InputError

PREFECT_YAML = "prefect.yaml"


@dataclass(frozen=True)
class DeploymentDef:
    """One deployment entry: name, crons, flow parameters, tags."""

    name: str
    crons: tuple[str, ...]
    timezone: str | None
    parameters: dict[str, Any] = field(hash=False)
    tags: tuple[str, ...] = ()
    description: str | None = None
    entrypoint: str = "flows/sweep.py:sweep_flow"
    concurrency_limit: int | None = None


def load_definitions(path: str | Path = PREFECT_YAML) -> list[DeploymentDef]:
    """The deployments in prefect.yaml (schedules given as cron only)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise InputError("not found (run from the project root)", path=str(path)) from None
    out = []
    for i, dep in enumerate((doc or {}).get("deployments") or []):
        where = f"deployments[{i}]"
        if not isinstance(dep, dict) or not dep.get("name"):
            raise InputError("a deployment needs a name", path=str(path), field=where)
        crons = [s["cron"] for s in dep.get("schedules") or [] if s.get("active", True)]
        zones = {s.get("timezone") for s in dep.get("schedules") or []} - {None}
        if len(zones) > 1:
            raise InputError("one timezone per deployment", path=str(path), field=where)
        _check_gate(dep, path, where)
        out.append(DeploymentDef(
            name=dep["name"], crons=tuple(crons), timezone=next(iter(zones), None),
            parameters=dict(dep.get("parameters") or {}), tags=tuple(dep.get("tags") or ()),
            description=dep.get("description"),
            entrypoint=dep.get("entrypoint", "flows/sweep.py:sweep_flow"),
            concurrency_limit=dep.get("concurrency_limit")))
    return out


def own_definition(experiment: str, crons: list[str], name: str | None = None,
                   timezone: str | None = None, gate_reference: str | None = None,
                   gate_max_drop: float | None = None,
                   gate_metrics: list[str] | None = None) -> DeploymentDef:
    """A deployment of one's own experiment file, served from one's own folder (no
    prefect.yaml): named for the file unless told, on `crons` (none: run by hand), gated
    only against the user's own `gate_reference` (docs/scheduling.md)."""
    params: dict[str, Any] = {"experiment": experiment}
    if gate_reference:
        params.update(gate_reference=gate_reference, gate_max_drop=gate_max_drop)
        if gate_metrics:
            params["gate_metrics"] = list(gate_metrics)
        _check_gate({"parameters": params}, Path(experiment), "--gate-max-drop")
    return DeploymentDef(name=name or Path(experiment).stem, crons=tuple(crons),
                         timezone=timezone, parameters=params, tags=("ablate",),
                         description=f"ablate sweep of {experiment}")


def _check_gate(dep: dict[str, Any], path: Path, where: str) -> None:
    """A gated deployment's allowed drop (ablate.components.stats.noninferiority)."""
    from ablate.components.stats.noninferiority import check_margin
    params = dep.get("parameters") or {}
    if not params.get("gate_reference"):
        return
    drop = params.get("gate_max_drop")
    if isinstance(drop, bool) or (drop is not None and not isinstance(drop, (int, float))):
        raise InputError(f"must be a number, got {drop!r}", path=str(path),
                         field=f"{where}.parameters.gate_max_drop")
    try:
        check_margin(drop, field=f"{where}.parameters.gate_max_drop")
    except InputError as err:
        raise InputError(err.message, path=str(path), field=err.field) from None


def runner_deployments(defs: list[DeploymentDef], overrides: dict[str, Any] | None = None,
                       paused: bool = False) -> list[Any]:
    """`sweep_flow.to_deployment(...)` for each definition; `overrides` replace parameters
    (e.g. another experiment file) in every one of them."""
    from prefect.client.schemas.schedules import construct_schedule
    from prefect.deployments.runner import DeploymentScheduleCreate

    from ablate.flows.sweep import sweep_flow
    deps = []
    for d in defs:
        if d.entrypoint.rsplit(":", 1)[-1] != "sweep_flow":
            raise InputError(f"ablate serve runs sweep_flow, not {d.entrypoint}",
                             path=PREFECT_YAML, field=f"{d.name}.entrypoint")
        schedules = [DeploymentScheduleCreate(schedule=construct_schedule(cron=c, timezone=d.timezone),
                                              active=not paused) for c in d.crons]
        deps.append(sweep_flow.to_deployment(
            name=d.name, schedules=schedules or None, tags=list(d.tags),
            description=d.description, concurrency_limit=d.concurrency_limit,
            parameters={**d.parameters, **(overrides or {})}))
    return deps


def serve(names: list[str] | None = None, overrides: dict[str, Any] | None = None,
          limit: int | None = None, path: str | Path = PREFECT_YAML,
          defs: list[DeploymentDef] | None = None) -> None:
    """Serve the selected deployments of prefect.yaml (all by default), or `defs`, until
    interrupted."""
    from prefect import serve as prefect_serve
    defs = load_definitions(path) if defs is None else defs
    if names:
        unknown = sorted(set(names) - {d.name for d in defs})
        if unknown:
            raise InputError(f"no deployment {', '.join(unknown)} (there are: "
                             f"{', '.join(d.name for d in defs)})", path=str(path),
                             field="--deployment")
        defs = [d for d in defs if d.name in names]
    prefect_serve(*runner_deployments(defs, overrides), limit=limit)
