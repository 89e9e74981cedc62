"""Generator registry, protocol and the shared cached batch loop.

A generator turns (question, packed context) pairs into Answers; a model generator reads
its reply through `answer_of` (the first answer line; with `prompt.cite` the passages it
cites, markers removed from the answer). `cache_identity` is a
stable string of everything that changes its outputs (model file, decoding settings,
code version); with the rendered prompt it keys the GenerationCache.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from ablate.components.contract.config import GeneratorConfig, PromptConfig, provide_settings_models
from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.contract.registry import Declaration, Registry
from ablate.components.generation.cache import GenerationCache
from ablate.components.generation.citations import cited_reply
from ablate.components.generation.prompt import first_answer_line, is_refusal, render_prompt
from ablate.components.generation.settings import check_declaration, settings_of
from ablate.components.runtime.progress import Progress

Item = tuple[Question, "PackedContext | None"]
Job = tuple[Question, "PackedContext | None", str, str]  # question, context, system, user
# what `_generate_batch` hands each answer to as soon as it is final: (index of its job, answer)
Finished = Callable[[int, Answer], None]


@runtime_checkable
class Generator(Protocol):
    @property
    def cache_identity(self) -> str: ...

    def generate_many(self, items: Sequence[Item],
                      cache: GenerationCache | None = None) -> list[Answer]: ...

    def model_key(self) -> str | None: ...


class GeneratorRegistry(Registry[Callable[[GeneratorConfig, PromptConfig], Generator]]):
    """Generators, each registered with its typed settings (`settings_model=`, a pydantic
    model of the `generator.*` fields it reads, declared beside it:
    components/generation/settings.py)."""

    def _check(self, decl: Declaration) -> None:
        check_declaration(decl, self.declarations())


GENERATORS = GeneratorRegistry("generator", config_field="generator.name")
# a built-in generator (no plugin source digest) has its fields held in every config
provide_settings_models(lambda: [(d.name, d.settings_model, not d.source)
                                 for d in GENERATORS.declarations() if d.settings_model is not None])


def make_generator(cfg: GeneratorConfig, prompt: PromptConfig) -> Generator:
    """Build the generator named by cfg.name (unknown name -> InputError listing names)."""
    return GENERATORS.get(cfg.name)(cfg, prompt)


class BaseGenerator:
    """Render prompts, serve cache hits, generate each remaining prompt once, keep order.

    Subclasses implement `cache_identity` and `_generate_one(question, context, system,
    user) -> Answer` (or override `_generate_batch(jobs, finished)` to run requests
    concurrently or in batches, handing each answer to `finished(job index, answer)` as soon
    as it is final: the cache keeps it at once, so an interruption loses only the answers
    not yet handed over).
    """

    version = "1"  # bump when a code change changes outputs

    def __init__(self, cfg: GeneratorConfig, prompt: PromptConfig) -> None:
        self.cfg = cfg
        self.prompt = prompt

    @property
    def cache_identity(self) -> str:
        raise NotImplementedError

    @functools.cached_property
    def settings(self) -> Any:
        """Its typed settings (its registered settings model holding this config's
        values), e.g. `self.settings.threshold`: built once per generator (the config is
        frozen), so reading it per question costs an attribute lookup."""
        decl = getattr(type(self), "declaration", None)
        if decl is None:
            raise RuntimeError(f"{type(self).__name__} is not a registered generator")
        return settings_of(self.cfg, decl)

    def model_key(self) -> str | None:
        """The model itself (file or endpoint + name), compared with the judge's to flag
        self-preference; None for a generator without a model."""
        return None

    @property
    def uses_context(self) -> bool:
        """Its declaration's reads_context (closed book: the context is not rendered)."""
        decl = getattr(type(self), "declaration", None)
        return decl.reads_context if decl is not None else True

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cache_identity})"

    def _generate_one(self, question: Question, context: PackedContext | None,
                      system: str, user: str) -> Answer:
        raise NotImplementedError

    @property
    def progress_label(self) -> str:
        """How progress lines name it: its registered name (`generate smollm2`), with the
        engine that runs it where it has a choice (`generate smollm2 (torch)`)."""
        decl = getattr(type(self), "declaration", None)
        name = decl.name if decl is not None else type(self).__name__
        engine = self.engine
        return f"generate {name}" + (f" ({engine})" if engine else "")

    @property
    def engine(self) -> str | None:
        """The backend that runs the model, for progress lines (None: no choice of one)."""
        return None

    def _generate_batch(self, jobs: Sequence[Job], finished: Finished) -> None:
        """Each job's answer, one at a time, handed to `finished` as it is made."""
        progress = Progress(self.progress_label, len(jobs))
        for n, job in enumerate(jobs):
            finished(n, self._timed(*job))
            progress.step()

    def _timed(self, question: Question, context: PackedContext | None,
               system: str, user: str) -> Answer:
        """Run one generation and stamp its wall-clock latency."""
        t0 = time.perf_counter()
        ans = self._generate_one(question, context, system, user)
        return dataclasses.replace(ans, latency_s=time.perf_counter() - t0)

    def refused(self, text: str) -> bool:
        return is_refusal(text, self.prompt.refusal)

    def answer_of(self, reply: str,
                  context: PackedContext | None) -> tuple[str, tuple[int, ...] | None]:
        """(answer text, passages cited) of a model's reply: its first answer line; with
        `prompt.cite` and a context, the citation markers parsed from the reply and removed
        from the answer (citations.cited_reply), else no citations (None)."""
        if self.prompt.cite and context is not None:
            return cited_reply(reply)
        return first_answer_line(reply), None

    def generate_many(self, items: Sequence[Item],
                      cache: GenerationCache | None = None) -> list[Answer]:
        """Answers in input order; identical prompts are generated once per call. Each
        answer is put in `cache` the moment the generator finishes it (not when the call
        returns), so a call interrupted (Ctrl-C, SIGTERM, kill -9, an exception) has kept
        every answer finished before, and the next call generates only the rest."""
        identity = self.cache_identity
        groups: dict[tuple[str, str], list[int]] = {}
        contexts: list[PackedContext | None] = []
        for i, (q, ctx) in enumerate(items):
            ctx = ctx if self.uses_context else None
            contexts.append(ctx)
            groups.setdefault(render_prompt(self.prompt, q.question, ctx), []).append(i)
        out: list[Answer | None] = [None] * len(items)
        todo: list[tuple[str, str]] = []
        for prompt, idx in groups.items():
            hit = cache.get(cache.key(identity, *prompt)) if cache is not None else None
            if hit is None or hit.error is not None:  # a failure is never served: retry it
                todo.append(prompt)
                continue
            for i in idx:
                out[i] = hit

        def finished(n: int, ans: Answer) -> None:
            prompt = todo[n]
            if cache is not None and ans.error is None:  # a failure is never stored
                cache.put(cache.key(identity, *prompt), ans)
            for k, i in enumerate(groups[prompt]):
                out[i] = ans if k == 0 else dataclasses.replace(ans, cached=True)

        jobs = [(items[groups[p][0]][0], contexts[groups[p][0]], *p) for p in todo]
        if jobs:
            self._generate_batch(jobs, finished)
        answers = [a for a in out if a is not None]
        if len(answers) < len(out):
            raise RuntimeError(f"{type(self).__name__} returned {len(out) - len(answers)} of "
                               f"{len(jobs)} prompts unanswered")
        return answers
