"""The whole flow at scale: a retrieval-only BM25 sweep over a large synthetic corpus, run
as a user would (`ablate run`, Prefect, the report, MLflow on SQLite), with its wall time
and the peak resident memory summed over its process tree.

The work (issue 30): N synthetic documents of 30 words (Zipf(1.1) over the whole-word
entries of the MiniLM WordPiece vocabulary, fixed seed), one chunk each (64-token
windows); 200 questions, each 8 words drawn from one document with that document's
middle 5 words as the evidence span; the baseline (bm25, depth 50, context budget 512,
`generator: none`) and one variant (`retrieval.bm25` b = 0.5). Memory is sampled every
0.2 s with its wall-clock time, so the peak is split into "during the stages" (from the
manifest's stage times) and "after the last stage" (the analysis, report and MLflow).

    python benchmarks/scaling_flow.py [--docs 1000000] [--work /tmp/ablate-scale]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from peers import _tree_rss  # noqa: E402  (the process tree's resident memory)

WORDS, QUERY_WORDS, QUESTIONS, SEED = 30, 8, 200, 0

EXPERIMENT = """\
name: scale
dataset: {{path: data, format: jsonl}}
split: all
tier: full
seed: 13
metrics:
  ks: [1, 10]
  key: [candidates/recall_at_10, final/recall_at_10]
baseline:
  chunking: {{method: token_window, size: 64, overlap: 0}}
  retrieval: {{paths: [bm25], depth: 50, analyzer: default}}
  fusion: {{method: rrf, rrf_k: 60}}
  rerank: {{method: none}}
  context: {{budget: 512, policy: skip}}
  generator: {{name: none}}
sweeps:
  - variable: retrieval.bm25
    values: [{{k1: 1.5, b: 0.5, epsilon: 0.25}}]
"""


def write_data(folder: Path, n_docs: int) -> None:
    """corpus.jsonl and questions.jsonl of the synthetic work (skipped when present)."""
    import numpy as np
    from tokenizers import Tokenizer  # noqa: F401  (the tokenizer's vocabulary, below)

    from ablate.components.text.tokenizer import get_tokenizer
    done = folder / ".complete"
    if done.exists() and done.read_text() == str(n_docs):
        return
    folder.mkdir(parents=True, exist_ok=True)
    vocab = sorted(w for w in get_tokenizer()._hf.get_vocab() if w.isalpha() and w.isascii() and len(w) > 1)
    rng = np.random.default_rng(SEED)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    p /= p.sum()
    words = np.asarray(vocab, dtype=object)
    picks = rng.choice(len(vocab), (n_docs, WORDS), p=p)
    asked = set(rng.choice(n_docs, QUESTIONS, replace=False).tolist())
    questions = []
    with (folder / "corpus.jsonl").open("w") as out:
        for i in range(n_docs):
            ws = words[picks[i]].tolist()
            text = " ".join(ws)
            doc_id = f"d{i:08d}"
            out.write(json.dumps({"doc_id": doc_id, "text": text}) + "\n")
            if i in asked:
                start = len(" ".join(ws[:12])) + 1
                end = start + len(" ".join(ws[12:17]))
                q = " ".join(rng.permutation(ws)[:QUERY_WORDS].tolist())
                questions.append({"qid": f"q{len(questions):04d}", "question": q,
                                  "answers": [text[start:end]], "answerable": True,
                                  "evidence": [[{"doc_id": doc_id, "start": start, "end": end}]]})
    with (folder / "questions.jsonl").open("w") as out:
        out.writelines(json.dumps(q) + "\n" for q in questions)
    done.write_text(str(n_docs))


def run(work: Path, args: list[str]) -> dict:
    """`ablate run` in `work` with a fresh cache: wall seconds and the RSS timeline."""
    for name in (".ablate", "runs"):
        shutil.rmtree(work / name, ignore_errors=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", "from ablate.flows.cli.main import main; main()", "run",
           "scale.yaml", *args]
    samples: list[tuple[float, int]] = []
    t0 = time.perf_counter()
    with (work / "run.log").open("w") as log:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                samples.append((time.time(), _tree_rss(proc.pid)))
                done.wait(0.2)
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        rc = proc.wait()
        done.set()
        th.join()
    wall = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"ablate run failed ({rc}); see {work / 'run.log'}")
    return {"wall_s": wall, "samples": samples}


def stage_times(work: Path) -> dict:
    """The manifest's stage record: start and end of each computed stage, seconds per kind."""
    sweep = next(p for p in (work / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))
    return json.loads((sweep / "manifest.json").read_text())["stages"]


def record(work: Path, n_docs: int, result: dict, stages: dict) -> dict:
    """The figures of one run: wall, peak (all, during the stages, after them), seconds
    per stage kind, the stages running at the peak and the seconds after the last stage."""
    gib = 2 ** 30
    samples = result["samples"]
    first = min(a for a, _ in stages["times"].values())
    last = max(b for _, b in stages["times"].values())
    names = {f.stem: f.parts[-3] for f in (work / ".ablate" / "cache").glob("*/*/*.parquet")}
    t_peak, peak = max(samples, key=lambda x: x[1])
    return {"docs": n_docs, "wall_s": result["wall_s"], "peak_gib": peak / gib,
            "stages_gib": max((r for t, r in samples if first <= t <= last), default=0) / gib,
            "after_gib": max((r for t, r in samples if t > last), default=0) / gib,
            "seconds": stages["seconds"], "after_s": samples[-1][0] - last,
            "at_peak": sorted({names.get(k, k[:8]) for k, (a, b) in stages["times"].items()
                               if a <= t_peak <= b})}


def summary(r: dict) -> list[str]:
    return [f"{r['docs']:,} documents, {QUESTIONS} questions, bm25 baseline + 1 variant: "
            f"wall {r['wall_s']:.0f} s, peak {r['peak_gib']:.2f} GiB (stages "
            f"{r['stages_gib']:.2f}, after them {r['after_gib']:.2f})",
            "  stage seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["seconds"].items())),
            f"  peak while running: {', '.join(r['at_peak']) or 'no stage'}; "
            f"after the last stage: {r['after_s']:.1f} s"]


def measure(n_docs: int, root: Path, mlflow: bool = True) -> dict:
    """Write the data (once per size), run the sweep with a fresh cache, return record()."""
    work = root / str(n_docs)
    work.mkdir(parents=True, exist_ok=True)
    write_data(work / "data", n_docs)
    (work / "scale.yaml").write_text(EXPERIMENT.format())
    result = run(work, [] if mlflow else ["--no-mlflow"])
    return record(work, n_docs, result, stage_times(work))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/ablate-scale"))
    ap.add_argument("--no-mlflow", action="store_true")
    args = ap.parse_args()
    print("\n".join(summary(measure(args.docs, args.work, not args.no_mlflow))))


if __name__ == "__main__":
    main()
