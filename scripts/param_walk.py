"""The walk of one experiment parameter through the house: which of the project's files
(components/, flows/) hold the parameter's value, in the order a real `ablate run`
reaches them (issue 43, item 6).

The parameter is set to a sentinel value that nothing else in a run is equal to (a
variant of a one-variable sweep on it, over the tiny bundled test fixture, BM25 + dense
fused by RRF), and the run is profiled in-process, every thread: at each call of a
function defined in the project, the call's arguments and locals are searched (a few
levels into models, dataclasses, dicts and lists) for the sentinel. A *file entry* is a
call that holds the value in a different file from the previous such call; the walk's
length is the number of distinct files. Two counts: files whose calls hold the value
anywhere (a whole config that contains it counts: the report code that receives every
variant's config is on this list) and files whose calls hold the value itself (a local
equal to it: where the parameter is read). The longest trace is the longest unbroken
chain of nested project calls that hold the value.

    python scripts/param_walk.py [--param fusion.rrf_k] [--value 7919]

Prints the distinct files in first-reached order, the file-entry count and the longest
trace. Slow (the whole run is profiled): about a minute on the fixture.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOME = (str(ROOT / "components") + os.sep, str(ROOT / "flows") + os.sep)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def holds(value: Any, target: Any, depth: int = 5, seen: set[int] | None = None) -> bool:
    """True when `value` is the sentinel or holds it within `depth` levels."""
    if type(value) is type(target) and value == target:
        return True
    if depth == 0 or isinstance(value, (str, bytes, int, float, bool, type(None))):
        return False
    seen = set() if seen is None else seen
    if id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, dict):
        items: Any = list(value.values())[:50]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)[:50]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name, None) for f in dataclasses.fields(value)]
    elif hasattr(value, "model_fields") and not isinstance(value, type):
        items = [getattr(value, name, None) for name in type(value).model_fields]
    else:
        return False
    return any(holds(v, target, depth - 1, seen) for v in items)


class Walk:
    """The profile hook and what it saw."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.lock = threading.Lock()
        self.files: list[str] = []  # distinct, first-reached order
        self.entries = 0
        self.last: str | None = None
        self.depth: dict[int, int] = {}  # thread -> current chain of holding calls
        self.longest: list[str] = []
        self.chain: dict[int, list[Any]] = {}
        self.direct: list[str] = []  # files where a local is the value itself
        self.direct_entries = 0
        self.last_direct: str | None = None

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        name = frame.f_code.co_filename
        if not name.startswith(HOME):
            return
        tid = threading.get_ident()
        chain = self.chain.setdefault(tid, [])
        if event == "return":
            if chain and chain[-1][1] is frame:
                chain.pop()
            return
        try:
            hit = any(holds(v, self.target) for v in frame.f_locals.values())
        except Exception:  # noqa: BLE001 - a local whose inspection fails holds nothing here
            hit = False
        if not hit:
            return
        rel = os.path.relpath(name, ROOT)
        where = f"{rel}:{frame.f_code.co_name}"
        direct = any(holds(v, self.target, depth=0) for v in list(frame.f_locals.values()))
        with self.lock:
            if direct and rel != self.last_direct:
                self.direct_entries += 1
                self.last_direct = rel
            if direct and rel not in self.direct:
                self.direct.append(rel)
            if rel != self.last:
                self.entries += 1
                self.last = rel
            if rel not in self.files:
                self.files.append(rel)
            chain.append((where, frame))
            if len(chain) > len(self.longest):
                self.longest = [w for w, _ in chain]


def spec_file(folder: Path, param: str, value: Any) -> Path:
    """A one-variable sweep of `param` to `value` over the tiny fixture."""
    sys.path.insert(0, str(ROOT))
    from tests.specs import pipeline, vary, write_experiment
    return write_experiment(
        folder, "walk", tier="smoke", smoke_size=16, seed=5,
        metrics={"ks": [1, 3], "key": ["final/recall_at_3", "answer/f1"]},
        stats={"resamples": 200, "bootstrap_resamples": 200},
        baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10},
                          fusion={"rrf_k": 60}, rerank=None),
        sweeps=[vary(param, value)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--param", default="fusion.rrf_k")
    ap.add_argument("--value", type=int, default=7919)
    args = ap.parse_args()
    from ablate.flows.cli.main import main as cli
    walk = Walk(args.value)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        spec = spec_file(folder, args.param, args.value)
        sys.argv = ["ablate", "run", str(spec), "--out", str(folder / "runs"),
                    "--cache-dir", str(folder / "cache"),
                    "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}"]
        threading.setprofile(walk)
        sys.setprofile(walk)
        try:
            cli()
        except SystemExit as e:
            if e.code not in (0, None):
                raise
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    print(f"{args.param} = {args.value}: {len(walk.files)} files, {walk.entries} file entries")
    for f in walk.files:
        print(f"  {f}")
    print(f"holding the value itself (a local equal to it): {len(walk.direct)} files, "
          f"{walk.direct_entries} file entries")
    for f in walk.direct:
        print(f"  {f}")
    print(f"longest trace: {len(walk.longest)} nested calls")
    for w in walk.longest:
        print(f"  {w}")


if __name__ == "__main__":
    main()
