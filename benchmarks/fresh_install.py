"""The README's two steps as a new user meets them: a fresh clone, an empty pip cache and
an empty per-machine state folder (no converted model, no native probe, no Prefect server
or MLflow template), then `bash scripts/install.sh` and `ablate run experiments/demo.yaml`,
each timed. With --llama-cpp, `bash scripts/install.sh --llama-cpp` is timed as well (it
compiles llama-cpp-python portably). Prints each step's wall time and exit code, and this
machine's CPU (model name and whether it has AVX-512 / AMX).

    python benchmarks/fresh_install.py [--llama-cpp] [--keep]

It clones the repository's HEAD (commit first), downloads every package again, and takes
about 10 minutes on 2 cores (20 with --llama-cpp).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu  # noqa: E402  (model name and vector extensions)

ROOT = Path(__file__).resolve().parents[1]


def step(name: str, cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    print(f"{name:<32} {dt:8.1f} s  exit {rc}", flush=True)
    return dt, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-cpp", action="store_true", help="time the --llama-cpp install too")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ablate-fresh-"))
    clone, log = work / "ablate", work / "log.txt"
    head = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True)
    subprocess.check_call(["git", "clone", "-q", str(ROOT), str(clone)])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(PIP_CACHE_DIR=str(work / "pip-cache"), ABLATE_STATE_HOME=str(work / "state"),
               HF_HUB_OFFLINE="1")
    print(f"fresh clone of {head.strip()} in {clone}; {cpu()}; {os.cpu_count()} cores; log {log}")
    results = [step("install.sh", ["bash", "scripts/install.sh"], clone, env, log)]
    results.append(step("ablate run experiments/demo.yaml",
                        [".venv/bin/ablate", "run", "experiments/demo.yaml"], clone, env, log))
    if args.llama_cpp:
        results.append(step("install.sh --llama-cpp", ["bash", "scripts/install.sh", "--llama-cpp"],
                            clone, env, log))
    if (clone / ".venv/bin/ablate").exists():  # the demo's Prefect server, in this state folder
        subprocess.call([".venv/bin/ablate", "server", "stop"], cwd=clone, env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failed = any(rc != 0 for _, rc in results)
    if failed:
        print(f"a step failed; its output: {log}", file=sys.stderr)
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
