"""The Prefect automation that forwards alerts to a webhook (flows/outputs/alert_automation.py,
`ablate alerts automation`, `ablate serve --alert-webhook`): made on a real Prefect server
(the session's), once by name however often it is asked for, with the trigger and action
read back from the API; and end to end: `ablate trend` fires a rule, the server's automation
runs, and a local HTTP receiver standing in for the webhook gets the alert as JSON."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.components.report.trend_runs import series as nightly
from tests.specs import write_experiment

RECALL = "final/recall_at_5"


class Receiver:
    """An HTTP server on 127.0.0.1 in a thread, keeping each POST's body."""

    def __init__(self) -> None:
        received: list[bytes] = []
        got = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                received.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(200)
                self.end_headers()
                got.set()

            def log_message(self, *args) -> None:
                pass

        self.received, self.got = received, got
        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def automations(name: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.utilities.asyncutils import run_coro_as_sync

    async def read():
        async with get_client() as client:
            return await client.read_automations_by_name(name)
    return run_coro_as_sync(read())


def test_the_automation_is_made_once_with_its_trigger_and_webhook(prefect_server, tmp_path,
                                                                  run_cli, capsys):
    exp = write_experiment(tmp_path, "检索-nightly", metrics={"ks": [5]},
                           alerts=[{"metric": RECALL, "declines": 1}])
    assert run_cli("alerts", "automation", str(exp), "--webhook", "http://127.0.0.1:9/a") == 0
    assert "created automation 'ablate alerts: 检索-nightly -> webhook'" in capsys.readouterr().out
    assert run_cli("alerts", "automation", str(exp), "--webhook", "http://127.0.0.1:9/b") == 0
    assert "updated automation" in capsys.readouterr().out
    (made,) = automations("ablate alerts: 检索-nightly -> webhook")
    trigger = made.trigger
    assert trigger.expect == {"ablate.alert.fired"}
    assert trigger.match.model_dump()["prefect.resource.id"] == "ablate.experiment.检索-nightly"
    (action,) = made.actions
    assert action.type == "call-webhook"
    from prefect.blocks.webhook import Webhook
    block = Webhook.load(f"ablate-alert-{__import__('hashlib').sha256('检索-nightly'.encode()).hexdigest()[:12]}")
    assert block.url.get_secret_value() == "http://127.0.0.1:9/b"


@pytest.mark.parametrize("argv", [("alerts", "automation", "--webhook", "ftp://x/y"),
                                  ("alerts", "automation", "--webhook", "not a url"),
                                  ("serve", "--alert-webhook", "hooks.slack.com/x")])
def test_a_bad_webhook_url_is_one_line_and_exit_2(argv, run_cli, capsys):
    assert run_cli(*argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not an http(s) URL" in err[0], err


def test_an_alert_reaches_the_webhook_through_the_automation(prefect_server, tmp_path, run_cli,
                                                             capsys, monkeypatch, receiver):
    nightly(tmp_path / "runs", experiment="webhook-e2e")
    exp = write_experiment(tmp_path, "webhook-e2e", out="runs", metrics={"ks": [5]},
                           alerts=[{"metric": RECALL, "declines": 1}])
    monkeypatch.chdir(tmp_path)
    assert run_cli("alerts", "automation", str(exp), "--webhook", receiver.url) == 0
    # the server loads a new automation into its triggers service in a task scheduled after
    # the request's commit (SQLite): let it settle before the event arrives (a pause, not
    # an assertion on time)
    time.sleep(3)
    assert run_cli("trend", str(exp), "--metric", RECALL) == 1
    assert "sent 1 alert event" in capsys.readouterr().out
    assert receiver.got.wait(120), "the webhook was not called within 120 s"
    body = json.loads(receiver.received[0])
    assert body["event"] == "ablate.alert.fired"
    assert body["alert"]["experiment"] == "webhook-e2e" and body["alert"]["level"] == "alert"
    assert body["alert"]["rule"] == f"{RECALL} declines 1" and body["alert"]["metric"] == RECALL
