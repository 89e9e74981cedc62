"""Counting the judge's prompt tokens before a run (`ablate check`), with the judge model's
own tokenizer where it is at hand, else the experiment tokenizer, saying which.

- `llama_cpp` (a local GGUF file, the bundled SmolLM2 by default): the tokenizer and the
  chat template ship in the file. Only the vocabulary is loaded (llama.cpp's
  `vocab_only`: no weights, a fraction of a second), the messages are put in the file's
  chat template and tokenized as the model reads them (role markers included).
- any other backend (an endpoint's model is not on this machine), or a GGUF file whose
  vocabulary cannot be loaded: the experiment tokenizer (MiniLM WordPiece) over the
  messages' text, the reason stated. It counts each CJK character as a token, so Chinese
  text is never undercounted as whitespace-separated words.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from ablate.components.judge.config import JudgeConfig
from ablate.components.text.tokenizer import TOKENIZER_NAME, get_tokenizer

Messages = Sequence[tuple[str, str]]  # (role, content) pairs


@dataclass(frozen=True)
class PromptCounter:
    """`count(messages)`: the prompt tokens of a chat; `name` says how they are counted."""

    name: str
    count: Callable[[Messages], int]


def experiment_counter(why: str) -> PromptCounter:
    """The experiment tokenizer over the messages' text (no chat template: a few tokens
    per message fewer than the model reads)."""
    tok = get_tokenizer()

    def count(messages: Messages) -> int:
        return sum(tok.count_batch([c for _, c in messages])) if messages else 0
    return PromptCounter(f"the experiment tokenizer {TOKENIZER_NAME}, {why}", count)


@lru_cache(maxsize=4)
def _vocab(path: str) -> Any:
    from llama_cpp import Llama
    try:
        from llama_cpp._utils import suppress_stdout_stderr
        quiet: Any = suppress_stdout_stderr(disable=False)
    except ImportError:  # pragma: no cover - another llama-cpp-python layout
        quiet = contextlib.nullcontext()
    with quiet:  # llama.cpp writes its context notes to the process's stderr
        return Llama(model_path=path, vocab_only=True, n_ctx=64, verbose=False)


def gguf_counter(path: Path) -> PromptCounter:
    """The GGUF file's own tokenizer and chat template (module doc)."""
    llm = _vocab(str(path))
    template = llm.metadata.get("tokenizer.chat_template")
    render: Callable[[Messages], str]
    if template:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        formatter = Jinja2ChatFormatter(template=template, eos_token="", bos_token="",
                                        add_generation_prompt=True)

        def render(messages: Messages) -> str:
            chat: Any = [{"role": r, "content": c} for r, c in messages]
            return formatter(messages=chat).prompt
        how = "and chat template"
    else:
        def render(messages: Messages) -> str:
            return "\n".join(c for _, c in messages)
        how = "(no chat template in the file: the messages' text)"

    def count(messages: Messages) -> int:
        return len(llm.tokenize(render(messages).encode("utf-8"), add_bos=True, special=True))
    return PromptCounter(f"{path.name}'s tokenizer {how}", count)


def prompt_counter(cfg: JudgeConfig) -> PromptCounter:
    """How the judge of `cfg` counts prompt tokens here (module doc)."""
    if cfg.backend != "llama_cpp":
        return experiment_counter(f"not the {cfg.backend} judge's own")
    from ablate.components.generation.llama_local import resolve_gguf
    try:
        path = resolve_gguf(cfg.model)
        return gguf_counter(path)
    except Exception as exc:  # noqa: BLE001 - any failure falls back, and says so
        return experiment_counter(f"the judge's GGUF tokenizer could not be loaded "
                                  f"({type(exc).__name__}: {str(exc)[:80]})")
