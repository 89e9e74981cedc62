"""The local judge side by side: today's `llama_cpp` judge (one request at a time, the
schema a llama.cpp grammar) against the `torch` judge one request at a time
(judge.batch_size 1) and batched (--batch-size), the bundled SmolLM2 GGUF on all.

Questions: --questions answerable questions of each bundled data set (SQuAD 2.0 dev half,
English; DRCD dev, Chinese), with their gold passages as benchmarks/generation.py builds
them. Each question is judged as the RAGAS metrics ask it, on its first gold answer: the
answer's claims, whether the answer is supported by the passage, whether it addresses the
question, whether the passage was useful (4 verdicts, through the project's ask_many: strict
parsing, one retry, no cache). Each backend runs in a process of its own (torch's and
llama.cpp's thread pools in one process wait on each other): it loads (timed apart), then
judges the English questions, then the Chinese ones, each timed. Prints per language and
backend the seconds per judged question and the ratios, how many of the batched verdicts
are identical to the one-at-a-time torch ones (the claim that judge.batch_size cannot
change a verdict) and how many agree with llama_cpp's, and the load average before and
after.

    python benchmarks/judge.py [--questions 8] [--batch-size 8] [--no-llama]
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generation import SETS, items, window  # noqa: E402

from ablate.components import catalogue  # noqa: E402
from ablate.components.judge.backends import make_judge  # noqa: E402
from ablate.components.judge.config import JudgeConfig  # noqa: E402
from ablate.components.judge.prompts import load_prompts  # noqa: E402
from ablate.components.judge.tasks import Ask, ask_many  # noqa: E402

BACKENDS = {"llama_cpp": ("llama_cpp", 1), "torch-1": ("torch", 1), "torch-batched": ("torch", 0)}
PER_QUESTION = 4


def asks(lang: str, args: argparse.Namespace) -> list[Ask]:
    out = []
    for q, ctx in items(SETS[lang], args.questions, window(lang, args)):
        answer, passage = q.answers[0], ctx.passages[0].text
        out += [Ask("claims", lang, {"question": q.question, "answer": answer}),
                Ask("support", lang, {"question": q.question, "statement": answer,
                                      "context": f"[1] {passage}"}),
                Ask("relevance", lang, {"question": q.question, "answer": answer}),
                Ask("usefulness", lang, {"question": q.question, "reference": answer,
                                         "passage": passage})]
    return out


def child(name: str, args: argparse.Namespace) -> None:
    catalogue.load()
    backend, size = BACKENDS[name]
    cfg = JudgeConfig(backend=backend, batch_size=size or args.batch_size)
    judge, prompts = make_judge(cfg), load_prompts()
    t = time.perf_counter()
    ask_many(judge, prompts, asks("en", args)[1:2], cfg.max_claims, cfg.max_new_tokens)  # load
    out: dict = {"load_s": time.perf_counter() - t}
    for lang in SETS:
        work = asks(lang, args)
        t = time.perf_counter()
        got = ask_many(judge, prompts, work, cfg.max_claims, cfg.max_new_tokens)
        out[lang] = {"s": time.perf_counter() - t, "n": len(work) // PER_QUESTION,
                     "verdicts": [[v.value, v.failure] for v in got]}
    print(json.dumps(out, ensure_ascii=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--window", type=int, default=600)
    ap.add_argument("--no-llama", action="store_true")
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args)
    names = [n for n in BACKENDS if not (args.no_llama and n == "llama_cpp")]
    print(f"load average before: {os.getloadavg()}")
    res = {}
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--questions", str(args.questions),
               "--batch-size", str(args.batch_size), "--window", str(args.window)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        res[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name}: load {res[name]['load_s']:.1f} s; load average now {os.getloadavg()}")
    print(f"\nseconds per judged question ({PER_QUESTION} verdicts each), batch size {args.batch_size}:")
    for lang in SETS:
        per = {n: res[n][lang]["s"] / res[n][lang]["n"] for n in names}
        line = "  ".join(f"{n} {s:.2f}" for n, s in per.items())
        ratios = f"torch-1/batched {per['torch-1'] / per['torch-batched']:.2f}x"
        if "llama_cpp" in per:
            ratios += f", llama_cpp/torch-batched {per['llama_cpp'] / per['torch-batched']:.2f}x"
        one, many = res["torch-1"][lang]["verdicts"], res["torch-batched"][lang]["verdicts"]
        same = sum(a == b for a, b in zip(one, many, strict=True))
        agree = ""
        if "llama_cpp" in res:
            lc = res["llama_cpp"][lang]["verdicts"]
            agree = f"; agree with llama_cpp {sum(a == b for a, b in zip(lc, many, strict=True))}/{len(lc)}"
        print(f"  {lang} ({res['torch-1'][lang]['n']} questions): {line}  ({ratios}); "
              f"batched identical to one at a time {same}/{len(one)} verdicts{agree}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
