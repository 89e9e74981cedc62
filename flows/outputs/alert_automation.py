"""The Prefect automation that forwards ablate's alert events (flows/outputs/alert_events.py)
to a webhook: a Webhook block (POST, JSON) holding the URL, and an automation whose trigger
is each `ablate.alert.fired` event about one experiment (`ablate.experiment.<name>`; no
experiment: any, `ablate.experiment.*`) and whose action calls that block with the alert as
JSON: `{"event", "id", "occurred", "alert": {experiment, rule, level, message, run, metric}}`.
Created by name, so running it again replaces the URL and the definition rather than adding
a second automation. A Slack or e-mail notification is the same automation with a
SendNotification action on a notification block (docs/scheduling.md)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ablate.components.contract.errors import InputError
from ablate.flows.outputs.alert_events import EVENT, resource_id

PAYLOAD = ('{"event": "{{ event.event }}", "id": "{{ event.id }}", '
           '"occurred": "{{ event.occurred }}", "alert": {{ event.payload | tojson }}}')


@dataclass(frozen=True)
class Made:
    """The automation: its id and name, whether it was new, the webhook block's name."""

    id: str
    name: str
    created: bool
    block: str


def check_url(url: str, field: str = "--webhook") -> str:
    """An http(s) URL with a host, else InputError (one line, exit 2)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"'{url}' is not an http(s) URL with a host", field=field)
    return url


def names(experiment: str | None) -> tuple[str, str]:
    """(automation name, webhook block name) for an experiment (None: every experiment);
    the block name is a slug (Prefect's rule), made from the name's hash when it is not one."""
    if experiment is None:
        return "ablate alerts: every experiment -> webhook", "ablate-alert-all"
    slug = re.sub(r"[^a-z0-9-]+", "-", experiment.lower()).strip("-")
    if slug != experiment.lower() or not slug:
        slug = hashlib.sha256(experiment.encode()).hexdigest()[:12]
    return f"ablate alerts: {experiment} -> webhook", f"ablate-alert-{slug}"


def definition(experiment: str | None, block_id):
    """The automation (prefect AutomationCore) calling the block on each alert event."""
    from datetime import timedelta

    from prefect.events.actions import CallWebhook
    from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture
    name, _ = names(experiment)
    resource = resource_id(experiment) if experiment is not None else "ablate.experiment.*"
    return AutomationCore(
        name=name,
        description="Calls a webhook on each ablate alert event (ablate trend's alerts: rules).",
        trigger=EventTrigger(expect={EVENT}, match={"prefect.resource.id": resource},
                             posture=Posture.Reactive, threshold=1, within=timedelta(0)),
        actions=[CallWebhook(block_document_id=block_id, payload=PAYLOAD)])


async def _ensure(experiment: str | None, url: str) -> Made:
    from prefect.blocks.webhook import Webhook
    from prefect.client.orchestration import get_client
    name, block_name = names(experiment)
    block = Webhook(method="POST", url=url, headers={"Content-Type": "application/json"})
    block_id = await block.asave(block_name, overwrite=True)
    core = definition(experiment, block_id)
    async with get_client() as client:
        found = await client.read_automations_by_name(name)
        if found:
            await client.update_automation(found[0].id, core)
            for extra in found[1:]:
                await client.delete_automation(extra.id)
            return Made(str(found[0].id), name, False, block_name)
        return Made(str(await client.create_automation(core)), name, True, block_name)


def ensure(experiment: str | None, url: str, api: str) -> Made:
    """Create or replace the automation for `experiment` on the Prefect API `api`."""
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.utilities.asyncutils import run_coro_as_sync
    check_url(url)
    with temporary_settings(updates={PREFECT_API_URL: api}):
        made = run_coro_as_sync(_ensure(experiment, url))
    assert made is not None
    return made
