"""`openai`: any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, hosted).

Config: generator.base_url (e.g. http://127.0.0.1:8000/v1), generator.model, and
generator.api_key_env, the *name* of the environment variable holding the key. The key
lives only in the HTTP client's headers: it is never part of the cache identity, a
repr, an error message or an Answer, so it cannot reach logs, MLflow or reports.
Timeouts, retries with exponential backoff on 429/5xx/transport errors (Retry-After
honoured, capped), and a semaphore bounding requests in flight across threads.
Auth / not-found errors stop the run (InputError); an answer whose retries are
exhausted carries `error` and is not put in the generation cache, so the next time the
generate stage runs only the failed prompts are sent again. (The stage store still counts
a generate result holding errors as complete, so an unchanged re-run does not run the
stage again yet: see flows/stages.run_stage.)
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import httpx

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.generation.base import GENERATORS, BaseGenerator, Finished, Job
from ablate.components.generation.settings import record_settings

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
FATAL_STATUS = frozenset({401, 403, 404})
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0


OpenAISettings = record_settings(
    "OpenAISettings", "An OpenAI-compatible chat completions endpoint.",
    "model", "base_url", "api_key_env", "timeout_s", "max_retries", "concurrency",
    "max_new_tokens", "temperature", "seed")


@GENERATORS.register("openai", remote=True, settings_model=OpenAISettings,
                     reads=("generator.model", "generator.base_url", "generator.max_new_tokens",
                            "generator.temperature", "generator.seed", "prompt"),
                     settings=("generator.timeout_s", "generator.max_retries",
                               "generator.concurrency", "generator.api_key_env"),
                     reads_context=True)
class OpenAIGenerator(BaseGenerator):
    """Chat completions over HTTP with retries and bounded concurrency."""

    version = "1"

    def __init__(self, cfg, prompt, transport: httpx.BaseTransport | None = None,
                 sleep=time.sleep) -> None:  # type: ignore[no-untyped-def]
        super().__init__(cfg, prompt)
        if not cfg.base_url:
            raise InputError("the openai generator needs a base URL", field="generator.base_url")
        if not cfg.model:
            raise InputError("the openai generator needs a model name", field="generator.model")
        headers = {"Content-Type": "application/json"}
        if cfg.api_key_env:
            key = os.environ.get(cfg.api_key_env)
            if not key:
                raise InputError(f"environment variable {cfg.api_key_env} is not set",
                                 field="generator.api_key_env")
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(base_url=cfg.base_url.rstrip("/") + "/", headers=headers,
                                    timeout=httpx.Timeout(cfg.timeout_s), transport=transport)
        self._slots = threading.BoundedSemaphore(cfg.concurrency)
        self._sleep = sleep

    @property
    def _base_url(self) -> str:
        """The endpoint's base URL without its trailing slashes."""
        url = self.cfg.base_url
        assert url is not None  # __init__ raised InputError without one (cfg is frozen)
        return url.rstrip("/")

    @property
    def cache_identity(self) -> str:
        c = self.cfg
        return (f"openai/v{self.version}/{self._base_url}/model={c.model}"
                f"/max_new_tokens={c.max_new_tokens}/temperature={c.temperature!r}/seed={c.seed}")

    def model_key(self) -> str:
        return f"openai:{self._base_url}/{self.cfg.model}"

    def close(self) -> None:
        self._client.close()

    def _generate_batch(self, jobs: Sequence[Job], finished: Finished) -> None:
        """`generator.concurrency` requests at a time, each answer handed over (and so
        cached) as its response arrives: a request paid for is never made again."""
        def one(n: int) -> None:
            finished(n, self._timed(*jobs[n]))
        if self.cfg.concurrency == 1 or len(jobs) <= 1:
            for n in range(len(jobs)):
                one(n)
            return
        with ThreadPoolExecutor(max_workers=self.cfg.concurrency) as pool:
            list(pool.map(one, range(len(jobs))))

    def _backoff(self, attempt: int, response: httpx.Response | None) -> float:
        delay = BACKOFF_BASE_S * (2 ** attempt)
        if response is not None:
            try:
                delay = max(delay, float(response.headers.get("retry-after", 0)))
            except ValueError:
                pass
        return min(delay, BACKOFF_MAX_S)

    def post_chat(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """POST one chat/completions body with this client's retries: (json, None) on
        success or (None, error) after the last retry (the judge's `openai` backend uses it
        with its own bodies)."""
        error = "no attempt"
        for attempt in range(self.cfg.max_retries + 1):
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
                    raise InputError(f"{self.cfg.base_url} answered {error} for model "
                                     f"'{self.cfg.model}' (check URL, model and key)",
                                     field="generator")
                if response.status_code not in RETRY_STATUS:
                    return None, error
            if attempt < self.cfg.max_retries:
                self._sleep(self._backoff(attempt, response))
        return None, f"{error} after {self.cfg.max_retries + 1} attempts"

    def _generate_one(self, question: Question, context: PackedContext | None,
                      system: str, user: str) -> Answer:
        body = {
            "model": self.cfg.model,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "max_tokens": self.cfg.max_new_tokens,
            "temperature": self.cfg.temperature,
            "seed": self.cfg.seed,
        }
        data, error = self.post_chat(body)
        if data is None:
            return Answer(text="", refused=True, error=error)
        try:
            reply = data["choices"][0]["message"].get("content") or ""
            text, cited = self.answer_of(reply, context)
        except (KeyError, IndexError, TypeError, AttributeError):
            return Answer(text="", refused=True, error="malformed completion")
        usage = data.get("usage") or {}
        return Answer(text=text, refused=self.refused(text),
                      tokens_in=int(usage.get("prompt_tokens") or 0),
                      tokens_out=int(usage.get("completion_tokens") or 0), citations=cited)
