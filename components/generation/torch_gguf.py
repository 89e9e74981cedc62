"""The `torch` backend of the local GGUF generators: the GGUF file read by transformers
(its weights dequantised to float32, its tokenizer and chat template taken from the file)
and decoded by PyTorch. Pure Python on top of torch: nothing is compiled on install, and
it runs wherever torch runs (any x86-64, arm64), unlike a natively built llama.cpp.

Reading a GGUF file through transformers parses its metadata three times (~15 s for the
bundled SmolLM2), so the converted model (config, tokenizer, float32 weights: the same
numbers) is saved once per machine (`machine_state_dir("gguf-torch")`, keyed by the
file's full sha256 and the library versions) and loaded from there in about 2 s afterwards
(benchmarks/generation.py prints the load time).

Greedy decoding at temperature 0; with a temperature, sampling seeded per call. The model
is loaded once per process (keyed by path) and calls are serialised by a lock. Decoding
stops at the end-of-turn token, at the stop text or at `max_new_tokens`; each call starts
from an empty KV cache, so an answer never depends on the prompt before it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from ablate.components.contract.errors import InputError
from ablate.components.runtime.resources import on_release
from ablate.components.runtime.threads import idle_cores

_LOAD_LOCK = threading.Lock()
_MODELS: dict[str, tuple[Any, Any, threading.Lock]] = {}
DTYPE = "float32"  # the dequantised weights are held exactly in float32
LIBRARIES = ("torch", "transformers", "gguf")  # what computes the answers (cache identity)


def versions() -> str:
    """The versions of the libraries that compute the answers, for the cache identity."""
    from ablate.components.contract.registry import installed_version
    return ",".join(f"{lib}={installed_version(lib)}" for lib in LIBRARIES)


def _silent(iterable: Any, **_: Any) -> Any:
    return iterable


def converted_dir(path: Path) -> Path:
    """Where this GGUF file's converted model is kept on this machine."""
    from ablate.components.runtime.digest import file_sha256
    from ablate.components.runtime.models import machine_state_dir
    digest = hashlib.sha256(f"{file_sha256(path)}/{versions()}/{DTYPE}".encode()).hexdigest()
    return machine_state_dir("gguf-torch") / f"{path.stem}-{digest[:16]}"


def _transformers() -> tuple[Any, Any, Any]:
    """(AutoModelForCausalLM, AutoTokenizer, the float32 dtype), transformers made quiet."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    gguf_utils.tqdm = _silent  # its per-tensor progress bar ignores transformers' switch
    return AutoModelForCausalLM, AutoTokenizer, getattr(torch, DTYPE)


def _from_gguf(path: Path) -> tuple[Any, Any]:
    auto_model, auto_tok, dtype = _transformers()
    tok = auto_tok.from_pretrained(str(path.parent), gguf_file=path.name)
    model = auto_model.from_pretrained(str(path.parent), gguf_file=path.name, dtype=dtype)
    # dequantised already: a plain float32 model from here on (and so serialisable)
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model, tok


def _save(folder: Path, model: Any, tok: Any) -> bool:
    """Write the converted model whole or not at all (another process may be writing it);
    whether the folder holds a converted copy now."""
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        os.replace(tmp, folder)
    except OSError:  # written by another process meanwhile, or no room: load from GGUF next time
        shutil.rmtree(tmp, ignore_errors=True)
    return folder.is_dir()


def load(path: Path) -> tuple[Any, Any, threading.Lock]:
    """The process-wide (model, tokenizer, call lock) for this GGUF file, loaded once:
    from the converted copy when there is one, else from the file (then saved)."""
    key = str(Path(path).resolve())
    with _LOAD_LOCK:
        if key not in _MODELS:
            folder = converted_dir(Path(key))
            if folder.is_dir():
                auto_model, auto_tok, dtype = _transformers()
                tok = auto_tok.from_pretrained(str(folder))
                model = auto_model.from_pretrained(str(folder), dtype=dtype)
            else:
                try:
                    model, tok = _from_gguf(Path(key))
                except (ValueError, KeyError, OSError) as exc:  # not a model transformers reads
                    raise InputError(f"transformers cannot read {Path(key).name} "
                                     f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
                                     "try generator.backend: llama_cpp",
                                     field="generator.model") from None
                folder.parent.mkdir(parents=True, exist_ok=True)
                if _save(folder, model, tok):
                    # the conversion's own copies stay resident otherwise (~0.5 GB for
                    # SmolLM2, the whole run): load the saved copy instead, memory-mapped
                    del model
                    import gc
                    gc.collect()
                    from ablate.components.runtime.memory import release_freed_memory
                    release_freed_memory()
                    auto_model, _, dtype = _transformers()
                    model = auto_model.from_pretrained(str(folder), dtype=dtype)
            model.eval()
            _MODELS[key] = (model, tok, threading.Lock())
        return _MODELS[key]


def unload() -> None:
    """Drop the loaded models and hand their memory back (the sweep calls this when its
    model-bound stages are done); nothing to do when none is loaded."""
    import gc

    from ablate.components.runtime.memory import release_freed_memory
    with _LOAD_LOCK:
        if not _MODELS:
            return
        _MODELS.clear()
    gc.collect()
    release_freed_memory()


on_release("torch generator models", lambda memo: unload())  # runtime/resources.py


def _encode(tok: Any, messages: list[dict[str, str]]) -> list[int]:
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                  return_dict=True)["input_ids"]
    return [int(i) for i in (ids[0] if ids and isinstance(ids[0], list) else ids)]


def _kwargs(tok: Any, max_new_tokens: int, temperature: float, stop: list[str]) -> dict[str, Any]:
    sampling = temperature > 0
    kwargs: dict[str, Any] = dict(max_new_tokens=max_new_tokens, do_sample=sampling,
                                  eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
    if stop and sampling:  # per sequence: a batch's row stops at its own first stop text
        kwargs.update(stop_strings=stop, tokenizer=tok)
    if sampling:
        kwargs.update(temperature=temperature, top_k=0, top_p=1.0)
    else:
        kwargs.update(temperature=None, top_k=None, top_p=None)
    return kwargs


def _reply(tok: Any, new: list[int], stop: list[str]) -> tuple[str, int]:
    """(text cut at the first stop text, tokens generated) of one sequence's new tokens: up
    to its first end-of-turn token (in a batch, a finished sequence is padded with it)."""
    if tok.eos_token_id in new:
        new = new[:new.index(tok.eos_token_id)]
    text = tok.decode(new, skip_special_tokens=True)
    for s in stop:
        text = text.split(s, 1)[0]
    return text, len(new)


def decode_threads(most: int | None = None, cores: int | None = None,
                   load: float | None = None, running: int | None = None) -> int:
    """torch's intra-op threads for the next batch, at most `most` (torch's own setting):
    the cores other processes leave idle now
    (runtime.cpu_now: their CPU time since the last choice; given a `load`, the load
    average less this process's `running` decode threads), at least one. On a busy machine more threads than idle cores wait on each other at every
    operation (measured under load 17 on 2 cores: a batch of 3 took 136 s on 2 threads,
    11 s on 1). The thread count never changes an answer (test_llama_local.py::
    test_torch_thread_count_does_not_change_answers), so it is no part of any key;
    ABLATE_TORCH_THREADS fixes it. The rule is runtime.threads.idle_cores, the dense
    encoder's too."""
    if running is None:
        import torch
        running = torch.get_num_threads()
    return idle_cores(most, cores, load, running)


class WindowError(ValueError):
    """A prompt plus answer longer than the window; `index`: which conversation."""

    def __init__(self, index: int, n_in: int, max_new_tokens: int, n_ctx: int) -> None:
        super().__init__(f"Requested tokens ({n_in + max_new_tokens}) exceed context window "
                         f"of {n_ctx}")
        self.index = index


def chat(path: Path, messages: list[dict[str, str]], max_new_tokens: int, temperature: float,
         seed: int, stop: list[str], n_ctx: int) -> tuple[str, int, int]:
    """(reply text cut at the first stop text, prompt tokens, generated tokens).
    A prompt plus answer longer than `n_ctx` tokens raises ValueError ("context window")."""
    return chat_many(path, [messages], max_new_tokens, temperature, seed, stop, n_ctx, 1)[0]


def chat_many(path: Path, conversations: list[list[dict[str, str]]], max_new_tokens: int,
              temperature: float, seed: int, stop: list[str], n_ctx: int, batch_size: int,
              done: Any = None, constraints: Any = None) -> list[tuple[str, int, int]]:
    """One reply per conversation, in order, as `chat` gives it; a prompt that does not
    fit `n_ctx` raises WindowError (naming it) before anything is decoded.

    Greedy decoding runs `batch_size` conversations at a time, prompts of similar length
    together (sorted by token count), by torch_greedy.greedy: generate()'s answers one at a
    time, token for token, each prompt read alone and the batch's rows decoded together
    (their caches left-padded); sampling runs one at a time through generate(), each seeded
    with `seed` as `chat` is. `done(indices, replies)` is called after each batch with the
    conversations it answered and their replies (progress, and the generation cache keeping
    them before the next batch; a stop request is honoured between batches by raising from
    it). `constraints(i)`, when given, makes conversation i's constraint
    (`mask(scores)` sets the logits of the tokens it forbids next to -inf, `accept(token)`
    advances it): a logits mask per sequence, so a row's tokens never depend on its
    batch's other rows (ablate.components.judge.json_mask: the judge's JSON schemas)."""
    import torch
    model, tok, lock = load(path)
    prompts = [_encode(tok, m) for m in conversations]
    for i, ids in enumerate(prompts):
        if len(ids) + max_new_tokens > n_ctx:
            raise WindowError(i, len(ids), max_new_tokens, n_ctx)
    out: list[tuple[str, int, int] | None] = [None] * len(prompts)
    size = 1 if temperature > 0 else max(1, batch_size)
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), i))
    kwargs = _kwargs(tok, max_new_tokens, temperature, stop)
    pad = tok.eos_token_id
    threads = torch.get_num_threads()
    try:
        _decode(model, tok, lock, prompts, order, size, pad, kwargs, temperature, seed, stop,
                out, done, threads, constraints)
    finally:
        torch.set_num_threads(threads)
    return [o for o in out if o is not None]


def _decode(model: Any, tok: Any, lock: threading.Lock, prompts: list[list[int]],
            order: list[int], size: int, pad: int, kwargs: dict[str, Any], temperature: float,
            seed: int, stop: list[str], out: list[Any], done: Any, most: int,
            constraints: Any = None) -> None:
    import torch

    from ablate.components.generation.torch_greedy import StopTexts, greedy
    texts = StopTexts(tok, stop)
    for lo in range(0, len(order), size):
        batch = order[lo:lo + size]
        with lock, torch.inference_mode():
            torch.set_num_threads(decode_threads(most))
            if temperature > 0:  # sampling: generate(), one seeded sequence at a time
                torch.manual_seed(seed)
                gen = _generate(model, [prompts[i] for i in batch], pad, kwargs, constraints, batch)
            else:  # greedy: the batch's own loop (torch_greedy), generate()'s answers
                rows = None if constraints is None else [constraints(i) for i in batch]
                gen = greedy(model, [prompts[i] for i in batch], tok.eos_token_id,
                             int(kwargs["max_new_tokens"]), texts, rows)
        for row, i in enumerate(batch):
            text, n_out = _reply(tok, gen[row], stop)
            out[i] = (text, len(prompts[i]), n_out)
        if done is not None:
            done(batch, [out[i] for i in batch])


def _generate(model: Any, prompts: list[list[int]], pad: int, kwargs: dict[str, Any],
              constraints: Any, batch: list[int]) -> list[list[int]]:
    """transformers' generate() on left-padded prompts: each row's new tokens."""
    import torch
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    extra = ({} if constraints is None else
             {"logits_processor": [_RowMasks([constraints(i) for i in batch], width, pad)]})
    gen = model.generate(ids, attention_mask=mask, **kwargs, **extra)
    return [[int(t) for t in gen[row, width:]] for row in range(len(prompts))]


class _RowMasks:
    """A transformers logits processor applying one constraint per row of a batch: the
    token a row chose last is accepted by its constraint (until the row ends with the
    end-of-turn token, after which the row is padding and left alone), then the row's
    scores are masked."""

    def __init__(self, rows: list[Any], width: int, eos: int) -> None:
        self.rows, self.width, self.eos = rows, width, eos
        self.ended = [False] * len(rows)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        step = input_ids.shape[1] - self.width
        for r, row in enumerate(self.rows):
            if self.ended[r]:
                continue
            if step > 0:
                token = int(input_ids[r, -1])
                if token == self.eos:
                    self.ended[r] = True
                    continue
                row.accept(token)
            row.mask(scores[r])
        return scores
