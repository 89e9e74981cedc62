"""Local generator backends side by side: `torch` (transformers + PyTorch) one question at
a time and in batches of --batch-size (generator.batch_size), against `llama_cpp`
(llama-cpp-python), the bundled SmolLM2-135M-Instruct GGUF on all.

Questions: --questions answerable questions of each bundled data set (SQuAD 2.0 dev half,
English; DRCD dev, Chinese), in regression-tier order; the context of each is its gold
passage (the document's text within --window characters around the first evidence span,
a third of that for Chinese, whose characters carry more and cost SmolLM2's tokenizer
more tokens each), rendered by the project's prompt. Each backend runs in a process of
its own (torch's and llama.cpp's OpenMP thread pools in one process wait on each other),
where it first loads (timed apart: the torch backend's converted copy of the GGUF is made
once per machine, so a first run prints that cost too), then answers every question
through the project's generator with no cache; --rounds such processes per backend,
alternating backends, the best kept, to damp noise from other load. Prints per backend:
load seconds, seconds per question, generated tokens per second; per language the
seconds per question and the ratios torch one at a time / batched and torch / llama_cpp;
the mean prompt tokens per language; per language how many batched answers are identical
to the one-at-a-time ones, token for token (the claim that generator.batch_size cannot
change an answer, so it is no part of the stage key), and how often the backends agree;
and their exact match / token F1 against the gold answers (the answer normaliser picked
per question, as in the product). `--no-llama` leaves llama_cpp out.

    python benchmarks/generation.py [--questions 50] [--rounds 1] [--max-new-tokens 32]
                                    [--batch-size 8] [--no-llama]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ablate.components.contract.config import GeneratorConfig, PromptConfig  # noqa: E402
from ablate.components.contract.records import PackedContext, Passage  # noqa: E402
from ablate.components.data import load_dataset  # noqa: E402
from ablate.components.data.tiers import select_questions  # noqa: E402
from ablate.components.generation import make_generator  # noqa: E402
from ablate.components.metrics.answer import exact_match, token_f1  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "experiments/data"
SETS = {"en": DATA / "squad2-dev-half/dev-v2.0.json", "zh": DATA / "drcd-dev/DRCD_dev.json"}
BATCHED = "torch-batched"


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


def child(backend: str, args: argparse.Namespace) -> None:
    """One backend in this process: load, then one timed round; JSON on stdout."""
    work = [it for lang, p in SETS.items() for it in items(p, args.questions, window(lang, args))]
    batch = args.batch_size if backend == BATCHED else 1
    gen = make_generator(GeneratorConfig(name="smollm2", backend=backend.split("-")[0],
                                         max_new_tokens=args.max_new_tokens, batch_size=batch),
                         PromptConfig())
    t0 = time.perf_counter()
    gen.generate_many(work[:1])  # loads the model (and makes torch's copy once)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    answers = gen.generate_many(work)
    print(json.dumps({"load_s": load_s, "seconds": time.perf_counter() - t0,
                      "texts": [a.text for a in answers],
                      "out_tokens": [a.tokens_out for a in answers],
                      "tokens": sum(a.tokens_out for a in answers),
                      "prompt_tokens": [a.tokens_in for a in answers],
                      "latency": [a.latency_s for a in answers]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50, help="per language")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--no-llama", action="store_true")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--window", type=int, default=1200, help="context characters")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args)
    backends = ("torch", BATCHED) + (() if args.no_llama else ("llama_cpp",))
    work = {lang: items(p, args.questions, window(lang, args)) for lang, p in SETS.items()}
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for b in backends:
            out = subprocess.run([sys.executable, __file__, "--child", b, "--questions",
                                  str(args.questions), "--max-new-tokens",
                                  str(args.max_new_tokens), "--window", str(args.window),
                                  "--batch-size", str(args.batch_size)],
                                 check=True, capture_output=True, text=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            if b not in best or r["seconds"] < best[b]["seconds"]:
                best[b] = r
    n = sum(len(v) for v in work.values())
    print(f"{n} questions ({args.questions} English, {args.questions} Chinese), "
          f"max_new_tokens {args.max_new_tokens}, batch size {args.batch_size}, "
          f"best of {args.rounds} rounds, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'backend':<14} {'load s':>7} {'s/question':>11} {'tokens/s':>9}")
    for b in backends:
        r = best[b]
        print(f"{b:<14} {r['load_s']:7.1f} {r['seconds'] / n:11.3f} {r['tokens'] / r['seconds']:9.1f}")
    half = len(work["en"])
    for lang, sl in (("English", slice(0, half)), ("Chinese", slice(half, n))):
        per = {b: sum(best[b]["latency"][sl]) / len(best[b]["latency"][sl]) for b in backends}
        line = (f"{lang}: s/question torch {per['torch']:.3f}, batched {per[BATCHED]:.3f}, "
                f"one at a time / batched {per['torch'] / per[BATCHED]:.2f}x")
        if "llama_cpp" in per:
            line += (f"; llama_cpp {per['llama_cpp']:.3f}, "
                     f"torch / llama_cpp {per['torch'] / per['llama_cpp']:.2f}x")
        print(line)
        same = sum(a == b and x == y for a, b, x, y in zip(
            best["torch"]["texts"][sl], best[BATCHED]["texts"][sl],
            best["torch"]["out_tokens"][sl], best[BATCHED]["out_tokens"][sl]))
        print(f"{lang}: batched answers identical to one at a time: {same}/{len(best['torch']['texts'][sl])}")
    print(f"time ratio torch one at a time / batched: "
          f"{best['torch']['seconds'] / best[BATCHED]['seconds']:.2f}x")
    if "llama_cpp" in best:
        print(f"time ratio torch / llama_cpp: "
              f"{best['torch']['seconds'] / best['llama_cpp']['seconds']:.2f}x")
        same = sum(a == b for a, b in zip(best["torch"]["texts"], best["llama_cpp"]["texts"]))
        print(f"identical answers torch / llama_cpp: {same}/{n}")
    prompts = best["torch"]["prompt_tokens"]
    print(f"prompt tokens, mean: English {sum(prompts[:half]) / half:.0f}, "
          f"Chinese {sum(prompts[half:]) / max(1, len(prompts) - half):.0f}")
    offset = 0
    for lang, its in work.items():
        for b in backends:
            texts = best[b]["texts"][offset:offset + len(its)]
            em = sum(exact_match(t, q.answers) for (q, _), t in zip(its, texts))
            f1 = sum(token_f1(t, q.answers) for (q, _), t in zip(its, texts))
            print(f"{lang} {b:<14} EM {em / len(its):.3f}  F1 {f1 / len(its):.3f}")
        offset += len(its)


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
