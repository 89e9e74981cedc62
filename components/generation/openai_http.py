"""`openai`: any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, hosted).

Config: generator.base_url (e.g. http://127.0.0.1:8000/v1), generator.model, and
generator.api_key_env, the *name* of the environment variable holding the key. The HTTP
client (key in its headers only, timeouts, retries with backoff, bounded concurrency) is
the one the `openai` judge uses too (components/generation/openai_client.py), built from
this section's fields, so its errors name `generator.<field>`. Auth / not-found errors
stop the run (InputError); an answer whose retries are exhausted carries `error` and is
not put in the generation cache, so the next time the generate stage runs only the failed
prompts are sent again. (The stage store still counts a generate result holding errors as
complete, so an unchanged re-run does not run the stage again yet: see
flows/stages.run_stage.)
"""

from __future__ import annotations

import time
from typing import Sequence

import httpx
from pydantic import Field

from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.generation.base import GENERATORS, BaseGenerator, Finished, Job
from ablate.components.generation.openai_client import OpenAIClient, OpenAIClientConfig
from ablate.components.generation.settings import SamplingSettings


class OpenAISettings(SamplingSettings):
    """An OpenAI-compatible chat completions endpoint."""

    model: str | None = None
    """The model name sent to the endpoint."""
    base_url: str | None = None
    """The endpoint, e.g. `http://localhost:11434/v1`."""
    api_key_env: str | None = None
    """The environment variable holding the API key (the key is never logged)."""
    timeout_s: float = Field(60.0, gt=0)
    """Seconds per request."""
    max_retries: int = Field(3, ge=0)
    """Retries of a failed request."""
    concurrency: int = Field(2, ge=1)
    """Requests in flight."""


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
        self.client_config = OpenAIClientConfig.build(
            "generator", base_url=cfg.base_url, model=cfg.model, api_key_env=cfg.api_key_env,
            timeout_s=cfg.timeout_s, max_retries=cfg.max_retries, concurrency=cfg.concurrency)
        self._http = OpenAIClient(self.client_config, transport, sleep)

    @property
    def cache_identity(self) -> str:
        c = self.cfg
        return (f"openai/v{self.version}/{self.client_config.url}/model={c.model}"
                f"/max_new_tokens={c.max_new_tokens}/temperature={c.temperature!r}/seed={c.seed}")

    def model_key(self) -> str:
        return f"openai:{self.client_config.url}/{self.cfg.model}"

    def close(self) -> None:
        self._http.close()

    def _generate_batch(self, jobs: Sequence[Job], finished: Finished) -> None:
        """`generator.concurrency` requests at a time, each answer handed over (and so
        cached) as its response arrives: a request paid for is never made again."""
        self._http.map(lambda n: finished(n, self._timed(*jobs[n])), len(jobs))

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
        data, error = self._http.post_chat(body)
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
