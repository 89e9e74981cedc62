"""The graph path's cost: building the graph of N paragraphs, and searching it per question.

Corpus (deterministic, any size): the real paragraphs of the bundled HotpotQA sample
(994, title line first) and SQuAD 2.0 dev half (646); beyond them, seeded
recombinations: a real paragraph's title line, then 3 to 6 sentences drawn from the real
paragraphs (so names keep their real frequencies, and new co-occurrences appear). The
split is printed. Questions: every question of both sets.

Timed (best of --repeats): the build (node extraction, incidence, NPMI edges; the
analyzer `english`, the default graph settings) and the search of every question in one
call (linking, Personalized PageRank, scoring, top k), per question = batch / n, in wall
and CPU seconds (the search is single-threaded, so CPU seconds are its cost on an idle
core; wall seconds depend on the load). Printed
with the graph's statistics, the peak resident memory of the process, the date, the
machine, the commit and the load average, and the issue's targets (build <= 30 s at
5,000 paragraphs, <= 10 min and <= 2 GB at 100,000; search <= 20 ms per question at
5,000).

    python -m benchmarks.graph_build [--paragraphs 5000] [--repeats 3] [--k 50] [--questions N]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import time
from pathlib import Path

from ablate.components import catalogue
from ablate.components.contract.config import GraphConfig
from ablate.components.contract.records import Chunk
from ablate.components.retrieval.graph.build import build_graph
from ablate.components.retrieval.graph.nodes import NODE_EXTRACTORS
from ablate.components.retrieval.graph.search import search
from ablate.components.retrieval.graph.spread import SPREADING
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from benchmarks.machine import describe, load_average

ROOT = Path(__file__).resolve().parent.parent
HOTPOT = ROOT / "experiments/data/hotpotqa-sample"
SQUAD = ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json"
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def real_data() -> tuple[list[str], list[str]]:
    """(paragraphs, questions) of the two bundled English sets."""
    paragraphs = [json.loads(line)["text"] for line in
                  (HOTPOT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    questions = [json.loads(line)["question"] for line in
                 (HOTPOT / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    for article in json.loads(SQUAD.read_text(encoding="utf-8"))["data"]:
        for p in article["paragraphs"]:
            paragraphs.append(article["title"].replace("_", " ") + "\n" + p["context"])
            questions.extend(q["question"] for q in p["qas"])
    return paragraphs, questions


def corpus(n: int, seed: int = 13) -> tuple[list[str], int]:
    """n paragraphs (the real ones first, then recombinations) and how many are real."""
    real, _ = real_data()
    out = real[:n]
    sentences = [s for p in real for s in SENTENCE.split(p.split("\n", 1)[-1]) if s.strip()]
    rng = random.Random(seed)
    while len(out) < n:
        title = rng.choice(real).split("\n", 1)[0]
        out.append(title + "\n" + " ".join(rng.choice(sentences) for _ in range(rng.randint(3, 6))))
    return out, min(n, len(real))


def commit() -> str:
    """The checked-out commit, '+dirty' when a tracked file differs from it."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                             capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha + ("+dirty" if dirty.strip() else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paragraphs", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--questions", type=int, default=0,
                    help="search only the first N questions (0: all)")
    args = ap.parse_args()
    code = commit()  # the code that runs: read before, not after, the minutes it takes
    catalogue.load()
    texts, real = corpus(args.paragraphs)
    chunks = [Chunk(f"p{i:07d}", f"p{i:07d}", 0, len(t), t, 0) for i, t in enumerate(texts)]
    _, questions = real_data()
    questions = questions[:args.questions] if args.questions > 0 else questions
    analyzer = get_analyzer("english")
    settings = GraphConfig()
    extract = NODE_EXTRACTORS.get(settings.extractor)
    spread = SPREADING.get(settings.spreading)
    builds, searches, cpu = [], [], []
    for _ in range(args.repeats):
        graph = build_graph(chunks, extract, analyzer, settings)
        builds.append(graph.build_s)
        queries = [analyzer(q) for q in questions]
        t0, c0 = time.perf_counter(), time.process_time()
        found = search(graph, queries, args.k, spread, settings)
        searches.append((time.perf_counter() - t0) / len(queries))
        cpu.append((time.process_time() - c0) / len(queries))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine {describe()}; "
          f"commit {code}; load {load_average()}")
    print(f"corpus: {len(texts)} paragraphs ({real} real, {len(texts) - real} recombined); "
          f"{len(questions)} questions; k {args.k}; analyzer english; {settings.model_dump()}")
    print(f"graph: {json.dumps(graph.stats())}")
    print(f"questions linked to no node: {sum(not r for r in found)} of {len(found)}")
    print(f"build: best {min(builds):.2f} s of {args.repeats} "
          f"({', '.join(f'{b:.2f}' for b in builds)})")
    print(f"search: best {min(searches) * 1000:.2f} ms per question of {args.repeats} "
          f"({', '.join(f'{s * 1000:.2f}' for s in searches)}); CPU "
          f"{min(cpu) * 1000:.2f} ms (the search runs on one core: on a loaded machine the "
          f"wall time is the larger)")
    print(f"peak resident memory: {peak_mb:.0f} MB")
    print("targets: build <= 30 s and search <= 20 ms/question at 5,000 paragraphs; "
          "build <= 600 s and <= 2,048 MB at 100,000")


if __name__ == "__main__":
    main()
