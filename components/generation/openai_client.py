"""One OpenAI-compatible HTTP client, shared by the `openai` generator and the `openai`
judge backend (components/judge/backends.py).

Each builds an `OpenAIClientConfig` from its own section of the experiment file
(`generator:` or `judge:`), naming that section, so every error about a client setting
names the field where the user wrote it (`judge.api_key_env`, `generator.base_url`) by
construction. The key lives only in the client's headers: it is never part of the
config, a repr, an error message or an identity, so it cannot reach logs, MLflow or
reports. Timeouts, retries with exponential backoff on 429/5xx/transport errors
(Retry-After honoured, capped), and a semaphore bounding requests in flight across
threads; auth / not-found answers stop the run (InputError naming the section).
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict

from ablate.components.contract.errors import InputError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
FATAL_STATUS = frozenset({401, 403, 404})
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0
T = TypeVar("T")


class OpenAIClientConfig(BaseModel):
    """What the client reads, taken from one section of the experiment file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section: Literal["generator", "judge"]
    """The section the fields below come from: errors name `<section>.<field>`."""
    base_url: str
    model: str
    api_key_env: str | None
    """The NAME of the environment variable holding the key (never the key)."""
    timeout_s: float
    max_retries: int
    concurrency: int

    @classmethod
    def build(cls, section: Literal["generator", "judge"], *, base_url: str | None,
              model: str | None, api_key_env: str | None, timeout_s: float,
              max_retries: int, concurrency: int) -> "OpenAIClientConfig":
        """The client config of `section`'s fields; InputError naming `section.base_url`
        or `section.model` when either is unset."""
        if not base_url:
            raise InputError(f"the openai {section} needs a base URL", field=f"{section}.base_url")
        if not model:
            raise InputError(f"the openai {section} needs a model name", field=f"{section}.model")
        return cls(section=section, base_url=base_url, model=model, api_key_env=api_key_env,
                   timeout_s=timeout_s, max_retries=max_retries, concurrency=concurrency)

    @property
    def url(self) -> str:
        """The endpoint's base URL without its trailing slashes."""
        return self.base_url.rstrip("/")


class OpenAIClient:
    """Chat completions over HTTP with retries and bounded concurrency."""

    def __init__(self, config: OpenAIClientConfig, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], Any] = time.sleep) -> None:
        self.config = config
        headers = {"Content-Type": "application/json"}
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise InputError(f"environment variable {config.api_key_env} is not set",
                                 field=f"{config.section}.api_key_env")
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(base_url=config.url + "/", headers=headers,
                                    timeout=httpx.Timeout(config.timeout_s), transport=transport)
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._sleep = sleep

    def close(self) -> None:
        self._client.close()

    def map(self, fn: Callable[[int], T], n: int) -> list[T]:
        """fn(0), ..., fn(n - 1), `concurrency` at a time, results in order."""
        if self.config.concurrency == 1 or n <= 1:
            return [fn(i) for i in range(n)]
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(fn, range(n)))

    def _backoff(self, attempt: int, response: httpx.Response | None) -> float:
        delay = BACKOFF_BASE_S * (2 ** attempt)
        if response is not None:
            try:
                delay = max(delay, float(response.headers.get("retry-after", 0)))
            except ValueError:
                pass
        return min(delay, BACKOFF_MAX_S)

    def post_chat(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """POST one chat/completions body with retries: (json, None) on success or
        (None, error) after the last retry."""
        c = self.config
        error = "no attempt"
        for attempt in range(c.max_retries + 1):
            response: httpx.Response | None = None
            try:
                with self._slots:
                    response = self._client.post("chat/completions", json=body)
            except httpx.TransportError as e:  # timeouts, refused connections, resets
                error = type(e).__name__
            else:
                if response.status_code == 200:
                    try:
                        return response.json(), None
                    except ValueError:
                        return None, "invalid JSON response"
                error = f"HTTP {response.status_code}"
                if response.status_code in FATAL_STATUS:
                    raise InputError(f"{c.base_url} answered {error} for model '{c.model}' "
                                     "(check URL, model and key)", field=c.section)
                if response.status_code not in RETRY_STATUS:
                    return None, error
            if attempt < c.max_retries:
                self._sleep(self._backoff(attempt, response))
        return None, f"{error} after {c.max_retries + 1} attempts"
