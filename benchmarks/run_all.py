"""Run every benchmark in one go and print one table of the ratios measured side by side.

Each benchmark runs as its own process (its output is echoed, indented, as it finishes);
lines of the form `<label>: <value> (target <= | >= <t>)` are gathered into the table,
with the parity / speed-up lines beside them. Scaling's growth table is printed after.

    python benchmarks/run_all.py [--quick] [--skip NAME ...] [--only NAME ...]

--quick: smaller workloads (a smoke check of the scripts, not figures to quote).
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# name -> (script, full args, quick args)
BENCHMARKS: dict[str, tuple[str, list[str], list[str]]] = {
    "bm25-20k": ("bm25.py", ["--chunks", "20000", "--k", "10"],
                 ["--chunks", "5000", "--queries", "300", "--rank-sample", "10", "--k", "10"]),
    "bm25-200k": ("bm25.py", ["--chunks", "200000", "--k", "10", "--rank-sample", "20"],
                  ["--chunks", "200000", "--queries", "200", "--rank-sample", "5", "--k", "10"]),
    "dense": ("dense.py", [], ["--texts", "128", "--rounds", "1"]),
    "dense-backends": ("dense_backends.py", [], ["--texts", "100", "--questions", "20",
                                                 "--rounds", "1"]),
    "stats": ("stats.py", [], ["--questions", "200", "--variants", "5", "--resamples", "2000"]),
    "sharing": ("sweep_sharing.py", [], []),
    "overhead": ("overhead.py", [], []),
    "scaling": ("scaling.py", [], ["--sizes", "10000", "30000", "--queries", "50"]),
    "demo": ("demo_time.py", [], []),
    "analyzers-zh": ("analyzers_zh.py", [], ["--tier", "smoke"]),
}
TARGET = re.compile(r"^(?P<label>.+?)[:=]?\s+(?P<val>[\d.]+)\s*(?P<unit>x|s)?\s+"
                    r"\(target (?P<op><=|>=) (?P<tgt>[\d.]+)")
INFO = re.compile(r"(speed-up|identical top-|max \|embedding diff|max \|score diff|^cold: |"
                  r"^unchanged re-run: |^recall@5 by path)")


def run(name: str, quick: bool) -> tuple[int, str, float]:
    script, full, small = BENCHMARKS[name]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / script), *(small if quick else full)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    out = proc.stdout + (f"\n[exit {proc.returncode}] " + proc.stderr.strip().splitlines()[-1]
                         if proc.returncode and proc.stderr.strip() else "")
    return proc.returncode, out, time.perf_counter() - t0


def rows_of(name: str, code: int, out: str) -> list[tuple[str, str, str, str, str]]:
    """(benchmark, measure, value, target, status) rows from one benchmark's output."""
    rows = []
    for line in out.splitlines():
        m = TARGET.match(line.strip())
        if m:
            val, tgt = float(m["val"]), float(m["tgt"])
            ok = val <= tgt if m["op"] == "<=" else val >= tgt
            unit = m["unit"] or ""
            rows.append((name, m["label"].strip(), f"{m['val']}{unit}",
                         f"{m['op']} {m['tgt']}{unit}", "ok" if ok else "MISSED"))
        elif INFO.search(line):
            label, _, value = line.strip().partition(":")
            rows.append((name, label.strip(), value.strip(), "", "info"))
    if code != 0:
        last = out.strip().splitlines()[-1] if out.strip() else "no output"
        rows.append((name, "FAILED", last[:70], "", "error"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[], choices=list(BENCHMARKS))
    ap.add_argument("--only", nargs="*", default=None, choices=list(BENCHMARKS))
    args = ap.parse_args()
    names = [n for n in (args.only or BENCHMARKS) if n not in args.skip]
    print(f"ablate benchmarks{' (quick)' if args.quick else ''}: {platform.python_version()}, "
          f"{platform.machine()}, {__import__('os').cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    rows, scaling = [], ""
    for name in names:
        code, out, secs = run(name, args.quick)
        print(f"\n== {name} ({BENCHMARKS[name][0]}, {secs:.0f} s)")
        print("\n".join("   " + line for line in out.strip().splitlines()))
        rows += rows_of(name, code, out)
        if name == "scaling" and code == 0:
            scaling = out
    widths = [max(len(r[i]) for r in rows + [("benchmark", "measure", "value", "target", "")])
              for i in range(5)]
    head = ("benchmark", "measure", "value", "target", "status")
    print("\n" + " | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    if scaling:
        print("\nscaling (wall s and peak resident MiB per step; growth exponent b of time ~ n^b):")
        print("\n".join("  " + line for line in scaling.strip().splitlines()))
    print(f"\ncommand: python benchmarks/run_all.py{' --quick' if args.quick else ''}")
    sys.exit(1 if any(r[4] == "error" for r in rows) else 0)


if __name__ == "__main__":
    main()
