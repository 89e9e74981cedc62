"""Alerts through Prefect: each fired `alerts:` rule of `ablate trend` becomes one Prefect
event, so an automation (flows/outputs/alert_automation.py) or any notification block can
act on it (docs/scheduling.md).

The event is `ablate.alert.fired` about the resource `ablate.experiment.<name>` (labels: the
experiment's name, the rule's level and metric), its payload the rule as written, level,
message, the run's label, metric and experiment. It goes to the Prefect API in use: a user's
PREFECT_API_URL, else the machine server `ablate run` keeps (flows/run/server.py, started if
need be), else Prefect's configured API. It is posted to the API's events endpoint and the
answer awaited (204: the server accepted it), so it is delivered before the command exits
(not Prefect's fire-and-forget events worker). Run inside a Prefect flow run (in its process,
or a subprocess of it: PREFECT__FLOW_RUN_ID), the event names that flow run as related and
the flow run is tagged `ablate-alert`. No reachable API: one warning line on stderr; the
caller's exit code does not change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

EVENT = "ablate.alert.fired"
FLOW_RUN_TAG = "ablate-alert"
LEVELS = ("alert", "warn", "off")  # --prefect-events: what is sent (warn: warnings too)


def resource_id(experiment: str) -> str:
    return f"ablate.experiment.{experiment}"


@dataclass(frozen=True)
class Sent:
    """What send() did: events sent, the API, the flow run tagged (None: none)."""

    events: int
    api: str
    flow_run: str | None


def to_send(rules: Sequence[Any], results: Sequence[Any], at: str = "alert") -> list[tuple]:
    """(rule, result) pairs to send: the fired ones (`at` warn: warnings too)."""
    levels = {"alert": ("alert",), "warn": ("alert", "warn")}.get(at, ())
    return [(rule, r) for rule, r in zip(rules, results)
            if r.finding is not None and r.finding.level in levels]


def event_body(experiment: str, rule: Any, result: Any, flow_run: str | None) -> dict:
    """One event as the API takes it (prefect.events.Event, dumped)."""
    from prefect.events import Event
    metric = rule.metric or "gate"
    related = [] if flow_run is None else [{
        "prefect.resource.id": f"prefect.flow-run.{flow_run}",
        "prefect.resource.role": "flow-run"}]
    event = Event(
        event=EVENT,
        resource={"prefect.resource.id": resource_id(experiment),
                  "prefect.resource.name": experiment,
                  "ablate.alert.level": result.finding.level,
                  "ablate.alert.metric": metric},
        related=related,
        payload={"experiment": experiment, "rule": result.rule, "level": result.finding.level,
                 "message": result.finding.message, "run": result.label, "metric": metric})
    return event.model_dump(mode="json")


def flow_run_id() -> str | None:
    """The Prefect flow run this process runs in (or was started by), if any."""
    try:
        from prefect.context import FlowRunContext
        ctx = FlowRunContext.get()
    except Exception:  # noqa: BLE001 (no context: not in a flow run)
        ctx = None
    if ctx is not None and ctx.flow_run is not None:
        return str(ctx.flow_run.id)
    return os.environ.get("PREFECT__FLOW_RUN_ID") or None


def api_url() -> str | None:
    """The Prefect API to send to (a user's, else the machine server, else Prefect's
    setting); None when there is none."""
    from ablate.flows.run import server
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    if server.wanted():
        info = server.Background().join()
        if info is not None:
            return info.api_url
    from prefect.settings import PREFECT_API_URL
    return PREFECT_API_URL.value() or None


async def _send(api: str, bodies: list[dict], flow_run: str | None) -> None:
    from uuid import UUID

    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings
    with temporary_settings(updates={PREFECT_API_URL: api}):
        async with get_client() as client:
            response = await client.request("POST", "/events", json=bodies)  # type: ignore[arg-type]
            response.raise_for_status()
            if flow_run is not None:
                run = await client.read_flow_run(UUID(flow_run))
                if FLOW_RUN_TAG not in (run.tags or []):
                    await client.update_flow_run(UUID(flow_run),
                                                 tags=[*(run.tags or []), FLOW_RUN_TAG])


def send(experiment: str, pairs: Sequence[tuple]) -> Sent:
    """Send one event per (rule, result) and tag the flow run this runs in; raises
    RuntimeError (one line) when no Prefect API takes them."""
    try:
        api = api_url()
    except RuntimeError as exc:  # the machine server did not start
        raise RuntimeError(" ".join(str(exc).split())[:300]) from None
    if not api:
        raise RuntimeError("no Prefect API (set PREFECT_API_URL, or let ablate start its "
                           "machine server: unset ABLATE_PREFECT_SERVER)")
    flow_run = flow_run_id()
    bodies = [event_body(experiment, rule, r, flow_run) for rule, r in pairs]
    from prefect.utilities.asyncutils import run_coro_as_sync
    try:
        run_coro_as_sync(_send(api, bodies, flow_run))
    except Exception as exc:  # noqa: BLE001 (any failure to reach it: one line)
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise RuntimeError(f"{api}: {text[:200]}") from None
    return Sent(len(bodies), api, flow_run)
