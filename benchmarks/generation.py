"""Local generator backends side by side, the bundled SmolLM2-135M-Instruct GGUF on all:
`torch` greedy decoding as it was before the greedy loop (transformers' `model.generate()`
one question at a time, and one `generate()` call per batch of --batch-size left-padded
prompts; stop texts through `stop_strings`), `torch` through its greedy loop
(components/generation/torch_greedy.py) in batches of --batch-size (generator.batch_size),
and `llama_cpp` (llama-cpp-python).

Questions: --questions answerable questions of each bundled data set (SQuAD 2.0 dev half,
English; DRCD dev, Chinese), in regression-tier order; the context of each is its gold
passage (the document's text within --window characters around the first evidence span,
a third of that for Chinese, whose characters carry more and cost SmolLM2's tokenizer
more tokens each), rendered by the project's prompt (`--closed-book`: no context, the
closed_book generator's short prompts). Each mode runs in a process of its
own (torch's and llama.cpp's OpenMP thread pools in one process wait on each other), where
it first loads (timed apart: the torch backend's converted copy of the GGUF is made once
per machine, so a first run prints that cost too), then answers each language's questions
through the project's generator with no cache, one language after the other, each timed;
--rounds such processes per mode, alternating modes, the best kept, to damp noise from
other load. Both torch modes go through the generator's own batching and thread rule
(`torch_gguf.decode_threads` before every batch); the old path only swaps the loop for
`generate()`, one question at a time, with the kwargs `torch_gguf._kwargs` gave greedy
decoding before the loop.

Prints the date, the machine and the load average before and after; per mode: load
seconds, seconds per question per language, generated tokens per second, the torch thread
counts its batches ran on; per language the seconds per question and the ratios
generate() one at a time / loop batched and padded batches / loop (and torch / llama_cpp); per language how many
answers of the loop are token-identical (the generated token ids) to generate()'s, the
claim that lets the loop keep the generator's cache identity; the loop's time per language
split into prompt reading (prefill, each prompt alone), stacking the caches, and the rest
(the batched decode steps, the per-row stop-text check); the mean prompt tokens per
language; how often torch and llama_cpp give the same text; exact match / token F1 against
the gold answers. `--no-llama` leaves llama_cpp out; `--threads N` fixes torch's
threads in both torch modes (on a shared machine the load-average rule may pick 2 threads
while another process takes a core, which can slow decoding several times over).

    python benchmarks/generation.py [--questions 50] [--rounds 1] [--max-new-tokens 32]
                                    [--batch-size 8] [--no-llama] [--threads N]
                                    [--closed-book]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load_average  # noqa: E402

from ablate.components.contract.config import GeneratorConfig, PromptConfig  # noqa: E402
from ablate.components.contract.records import PackedContext, Passage  # noqa: E402
from ablate.components.data import load_dataset  # noqa: E402
from ablate.components.data.tiers import select_questions  # noqa: E402
from ablate.components.generation import make_generator  # noqa: E402
from ablate.components.metrics.answer import exact_match, token_f1  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "experiments/data"
SETS = {"en": DATA / "squad2-dev-half/dev-v2.0.json", "zh": DATA / "drcd-dev/DRCD_dev.json"}
LANGS = {"en": "English", "zh": "Chinese"}
GENERATE, PADDED, LOOP, LLAMA = "torch-generate", "torch-padded", "torch-loop", "llama_cpp"


def items(path: Path, n: int, window: int) -> list:
    ds = load_dataset(path)
    docs = ds.doc_by_id()
    out = []
    for q in select_questions(ds.questions, tier="regression", split="dev", seed=13):
        if not q.evidence:
            continue
        span = q.evidence[0][0]
        text = docs[span.doc_id].text
        lo = max(0, span.start - window // 2)
        passage = text[lo:lo + window]
        out.append((q, PackedContext(("c",), (Passage(span.doc_id, lo, lo + len(passage), passage),),
                                     n_tokens=0, budget=0)))
        if len(out) == n:
            break
    return out


def window(lang: str, args: argparse.Namespace) -> int:
    return args.window if lang == "en" else args.window // 3


def work_items(args: argparse.Namespace) -> dict[str, list]:
    """Each language's (question, context) pairs; no context with --closed-book."""
    work = {lang: items(p, args.questions, window(lang, args)) for lang, p in SETS.items()}
    if args.closed_book:
        work = {lang: [(q, None) for q, _ in its] for lang, its in work.items()}
    return work


def _old_kwargs(eos: int, max_new_tokens: int, stop: Any) -> dict[str, Any]:
    """torch_gguf._kwargs for greedy decoding before the loop (commit 220a280): stop texts
    as transformers' stop_strings."""
    kwargs: dict[str, Any] = dict(max_new_tokens=max_new_tokens, do_sample=False,
                                  eos_token_id=eos, pad_token_id=eos,
                                  temperature=None, top_k=None, top_p=None)
    if stop is not None and stop.stop:
        kwargs.update(stop_strings=stop.stop, tokenizer=stop.tok)
    return kwargs


def _generate_one_at_a_time(model: Any, prompts: list[list[int]], eos: int, max_new_tokens: int,
                            stop: Any = None, rows: Any = None) -> list[list[int]]:
    """torch_greedy.greedy's signature, computed as the torch backend's greedy decoding
    was at batch size 1 before the loop: model.generate() on each prompt alone."""
    from ablate.components.generation import torch_gguf
    assert rows is None, "the generators decode without constraints"
    kwargs = _old_kwargs(eos, max_new_tokens, stop)
    return [torch_gguf._generate(model, [p], eos, kwargs, None, [0])[0] for p in prompts]


def _generate_padded(model: Any, prompts: list[list[int]], eos: int, max_new_tokens: int,
                     stop: Any = None, rows: Any = None) -> list[list[int]]:
    """The same, as it was at batch size > 1 before the loop: one model.generate() call on
    the batch's prompts left-padded and attention-masked."""
    from ablate.components.generation import torch_gguf
    assert rows is None, "the generators decode without constraints"
    kwargs = _old_kwargs(eos, max_new_tokens, stop)
    return torch_gguf._generate(model, prompts, eos, kwargs, None, list(range(len(prompts))))


class Probe:
    """What the torch backend's decoding did, read from inside torch_greedy: each prompt's
    generated token ids, the thread count of each batch, and the seconds spent reading
    prompts (_prefill) and stacking caches (_stack)."""

    def __init__(self, mode: str) -> None:
        import torch

        from ablate.components.generation import torch_greedy
        self.tokens: dict[tuple[int, ...], list[int]] = {}
        self.threads: Counter[int] = Counter()
        self.seconds = {"prefill": 0.0, "stack": 0.0}
        decode = {GENERATE: _generate_one_at_a_time, PADDED: _generate_padded}.get(
            mode, torch_greedy.greedy)

        def greedy(model: Any, prompts: list[list[int]], *a: Any, **kw: Any) -> list[list[int]]:
            self.threads[torch.get_num_threads()] += 1
            out = decode(model, prompts, *a, **kw)
            for p, g in zip(prompts, out, strict=True):
                self.tokens[tuple(p)] = list(g)
            return out

        def timed(name: str, fn: Any) -> Any:
            def run(*a: Any, **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    self.seconds[name] += time.perf_counter() - t0
            return run

        # torch_gguf._decode imports greedy at each call, and greedy looks up _prefill and
        # _stack in its module: replacing the module's names reaches them
        torch_greedy.greedy = greedy
        torch_greedy._prefill = timed("prefill", torch_greedy._prefill)
        torch_greedy._stack = timed("stack", torch_greedy._stack)


def child(mode: str, args: argparse.Namespace) -> None:
    """One mode in this process: load, then each language timed; JSON on stdout."""
    work = work_items(args)
    torch = mode != LLAMA
    probe = Probe(mode) if torch else None
    gen = make_generator(GeneratorConfig(name="smollm2", backend="torch" if torch else LLAMA,
                                         max_new_tokens=args.max_new_tokens,
                                         batch_size=1 if mode == GENERATE else args.batch_size),
                         PromptConfig())
    t0 = time.perf_counter()
    gen.generate_many(work["en"][:1])  # loads the model (and makes torch's copy once)
    out: dict[str, Any] = {"load_s": time.perf_counter() - t0}
    if probe is not None:
        probe.tokens.clear()
        probe.threads.clear()
    for lang, its in work.items():
        if probe is not None:
            probe.seconds = dict.fromkeys(probe.seconds, 0.0)
        t0 = time.perf_counter()
        answers = gen.generate_many(its)
        r: dict[str, Any] = {"seconds": time.perf_counter() - t0,
                             "texts": [a.text for a in answers],
                             "out_tokens": [a.tokens_out for a in answers],
                             "prompt_tokens": [a.tokens_in for a in answers]}
        if probe is not None:
            r["ids"] = [probe.tokens[tuple(p)] for p in _prompt_ids(gen, its)]
            r["split"] = dict(probe.seconds)
        out[lang] = r
    if probe is not None:
        out["threads"] = {str(k): v for k, v in sorted(probe.threads.items())}
    print(json.dumps(out))


def _prompt_ids(gen: Any, its: list) -> list[list[int]]:
    """The token ids of each question's prompt, as the torch backend encodes it."""
    from ablate.components.generation import torch_gguf
    from ablate.components.generation.llama_local import _messages
    from ablate.components.generation.prompt import render_prompt
    tok = torch_gguf.load(gen.path)[1]
    return [torch_gguf._encode(tok, _messages(*render_prompt(gen.prompt, q.question, ctx)))
            for q, ctx in its]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50, help="per language")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--no-llama", action="store_true")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--window", type=int, default=1200, help="context characters")
    ap.add_argument("--closed-book", action="store_true", help="questions without context")
    ap.add_argument("--threads", type=int, help="torch threads for both torch modes "
                    "(ABLATE_TORCH_THREADS); by default the generator's rule, which follows "
                    "the load average before each batch")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args)
    modes = (GENERATE, PADDED, LOOP) + (() if args.no_llama else (LLAMA,))
    env = dict(os.environ)
    if args.threads:
        env["ABLATE_TORCH_THREADS"] = str(args.threads)
    work = work_items(args)
    start, load_before = _now(), load_average()
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for m in modes:
            out = subprocess.run([sys.executable, __file__, "--child", m, "--questions",
                                  str(args.questions), "--max-new-tokens",
                                  str(args.max_new_tokens), "--window", str(args.window),
                                  "--batch-size", str(args.batch_size)]
                                 + (["--closed-book"] if args.closed_book else []),
                                 check=True, capture_output=True, text=True, env=env)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            r["total"] = sum(r[lang]["seconds"] for lang in SETS)
            if m not in best or r["total"] < best[m]["total"]:
                best[m] = r
    print(f"{start} to {_now()}; {describe()}; load average {load_before} before, "
          f"{load_average()} after")
    n = {lang: len(its) for lang, its in work.items()}
    print(f"{n['en']} English (SQuAD) and {n['zh']} Chinese (DRCD) questions "
          f"{'closed book' if args.closed_book else 'with their gold passage'}, max_new_tokens {args.max_new_tokens}, loop batch size {args.batch_size}, "
          f"best of {args.rounds} rounds, torch threads "
          f"{env.get('ABLATE_TORCH_THREADS') or 'by the load average (decode_threads)'}")
    print(f"{'mode':<15} {'load s':>7} {'s/q English':>12} {'s/q Chinese':>12} {'tokens/s':>9}  threads")
    for m in modes:
        r = best[m]
        tokens = sum(sum(r[lang]["out_tokens"]) for lang in SETS)
        threads = ", ".join(f"{k} thr x{v}" for k, v in r.get("threads", {}).items()) or "-"
        print(f"{m:<15} {r['load_s']:7.1f} {r['en']['seconds'] / n['en']:12.3f} "
              f"{r['zh']['seconds'] / n['zh']:12.3f} {tokens / r['total']:9.1f}  {threads}")
    for lang, name in LANGS.items():
        per = {m: best[m][lang]["seconds"] / n[lang] for m in modes}
        line = (f"{name}: s/question generate() one at a time {per[GENERATE]:.3f}, "
                f"generate() padded batches {per[PADDED]:.3f}, loop batched {per[LOOP]:.3f}, "
                f"generate / loop {per[GENERATE] / per[LOOP]:.2f}x, "
                f"padded / loop {per[PADDED] / per[LOOP]:.2f}x")
        if LLAMA in per:
            line += (f"; llama_cpp {per[LLAMA]:.3f}, loop / llama_cpp {per[LOOP] / per[LLAMA]:.2f}x")
        print(line)
        same = sum(a == b for a, b in zip(best[GENERATE][lang]["ids"], best[LOOP][lang]["ids"],
                                          strict=True))
        # a padded batch's finished rows go on with padding: its answers are compared as
        # the generator stores them (the text cut at the first stop, the tokens counted)
        stored = {m: list(zip(best[m][lang]["texts"], best[m][lang]["out_tokens"], strict=True))
                  for m in (GENERATE, PADDED)}
        padded = sum(a == b for a, b in zip(stored[GENERATE], stored[PADDED], strict=True))
        print(f"{name}: loop answers token-identical to generate()'s: {same}/{n[lang]}; "
              f"padded batches' stored answers (text, tokens) equal to generate()'s: "
              f"{padded}/{n[lang]}")
        split = best[LOOP][lang]["split"]
        total = best[LOOP][lang]["seconds"]
        rest = total - split["prefill"] - split["stack"]
        print(f"{name}: loop {total:.1f} s = prefill {split['prefill']:.1f} s "
              f"({split['prefill'] / total:.0%}) + stacking caches {split['stack']:.1f} s "
              f"({split['stack'] / total:.0%}) + decode steps and the rest {rest:.1f} s "
              f"({rest / total:.0%}); per question prefill {split['prefill'] / n[lang]:.3f} s, "
              f"decode {rest / n[lang]:.3f} s")
    print(f"time ratio generate() one at a time / loop batched, all questions: "
          f"{best[GENERATE]['total'] / best[LOOP]['total']:.2f}x; padded batches / loop: "
          f"{best[PADDED]['total'] / best[LOOP]['total']:.2f}x")
    prompts = {lang: best[GENERATE][lang]["prompt_tokens"] for lang in SETS}
    print("prompt tokens, mean: " + ", ".join(
        f"{LANGS[lang]} {sum(p) / max(1, len(p)):.0f}" for lang, p in prompts.items()))
    if LLAMA in best:
        print(f"time ratio torch loop / llama_cpp: {best[LOOP]['total'] / best[LLAMA]['total']:.2f}x")
        same = sum(a == b for lang in SETS for a, b in zip(best[GENERATE][lang]["texts"],
                                                           best[LLAMA][lang]["texts"]))
        print(f"identical answers torch / llama_cpp: {same}/{sum(n.values())}")
    for lang, its in work.items():
        for m in modes:
            texts = best[m][lang]["texts"]
            em = sum(exact_match(t, q.answers) for (q, _), t in zip(its, texts))
            f1 = sum(token_f1(t, q.answers) for (q, _), t in zip(its, texts))
            print(f"{lang} {m:<15} EM {em / len(its):.3f}  F1 {f1 / len(its):.3f}")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
