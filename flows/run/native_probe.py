"""A native library is tried in a child process before a stage runs it in the flow's.

llama.cpp and onnxruntime are native code: on some CPUs a build of them crashes the
process (a natively tuned llama.cpp on an AVX-512/AMX machine segfaults in its first
generation), which would take the whole sweep down with no word of why. So before a
model-bound stage whose components require one of them (their declarations' `requires`,
with `requires_when` applied to the stage's config) computes, a child process runs the
same loader on a tiny input. A crash there becomes one line naming the stage, the
library and what to do (`RunFailed`); the stages already computed stay cached. A library
that is not installed, or that its probe cannot import, is said to be so (not a crash).

What is tried is the library's build on this CPU, not the stage's own model: llama.cpp
loads the bundled SmolLM2 GGUF with ablate's loader (its N_CTX window) and generates 4
tokens; onnxruntime runs a 64x64 MatMul graph on its CPU provider. A build whose kernels
crash on this CPU crashes there; a crash that only the stage's model, its context size
or the exported embedder triggers is not caught before the stage runs.

A success is remembered per machine (`machine_state_dir("probes")`), keyed by the
library's version and its files on disk, the interpreter and the CPU's feature flags: a
rebuild, an upgrade or another CPU is tried again, an unchanged setup never twice.
"""

from __future__ import annotations

import hashlib
import platform
import signal
import subprocess
import sys
import threading
from importlib import metadata, util
from pathlib import Path
from typing import Any

from ablate.components.contract.errors import RunFailed

# What the child runs, per library (the product's own loaders, on a tiny input).
PROBES: dict[str, str] = {
    "llama_cpp": (
        "from ablate.components.generation.llama_local import N_CTX, load_llama\n"
        "from ablate.components.runtime.models import smollm2_gguf_path\n"
        "llm, _ = load_llama(smollm2_gguf_path(), N_CTX)\n"
        "out = llm.create_chat_completion(messages=[{'role': 'user', 'content': 'Hi'}],"
        " max_tokens=4, temperature=0.0, seed=0)\n"
        "assert out['choices'][0]['message'] is not None\n"),
    "onnxruntime": (
        "import numpy as np, onnx, onnxruntime as ort\n"
        "from onnx import TensorProto, helper\n"
        "w = helper.make_tensor('w', TensorProto.FLOAT, [64, 64], np.ones(4096, 'float32'))\n"
        "g = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'])], 'p',\n"
        "    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 64])],\n"
        "    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 64])], [w])\n"
        "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])\n"
        "m.ir_version = 8\n"
        "s = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])\n"
        "assert float(s.run(None, {'x': np.ones((1, 64), 'float32')})[0][0, 0]) == 64.0\n"),
}
DISTRIBUTIONS = {"llama_cpp": "llama_cpp_python", "onnxruntime": "onnxruntime"}
WHAT_TO_DO = {
    "llama_cpp": "use `generator.backend: torch` (no native code), or rebuild llama-cpp-python "
                 "portably: bash scripts/install.sh --llama-cpp",
    "onnxruntime": "use `retrieval.dense_backend: torch`, or reinstall onnxruntime from its "
                   "wheel: pip install --force-reinstall --no-cache-dir onnxruntime",
}
INSTALL = {"llama_cpp": "bash scripts/install.sh --llama-cpp",
           "onnxruntime": "bash scripts/install.sh (onnxruntime is in the default install)"}
TIMEOUT_S = 300.0
_SAFE: set[str] = set()  # probed in this process already
_LOCK = threading.Lock()


def native_libraries(node: Any) -> list[str]:
    """The probed libraries that the components of a stage node require for its config."""
    config = node.config.model_dump(mode="json")
    found = {module for decl in node.resolved.components
             for module in decl.required_modules(config) if module in PROBES}
    return sorted(found)


def _fingerprint(library: str) -> str:
    """Library version, its files' sizes and times, the interpreter and the CPU flags."""
    h = hashlib.sha256()
    try:
        h.update(metadata.version(DISTRIBUTIONS[library]).encode())
    except metadata.PackageNotFoundError:
        h.update(b"-")
    spec = util.find_spec(library)
    for loc in (spec.submodule_search_locations or []) if spec else []:
        for f in sorted(Path(loc).rglob("*.so*")):
            st = f.stat()
            h.update(f"{f.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    h.update(f"{sys.executable}:{sys.version}:{platform.machine()}".encode())
    h.update(_cpu_flags().encode())
    h.update(PROBES[library].encode())
    return h.hexdigest()[:20]


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


def _marker(library: str) -> Path:
    from ablate.flows.env import machine_state_dir
    return machine_state_dir("probes") / f"{library}-{_fingerprint(library)}.ok"


def _describe(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"crashed with {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"failed (exit code {returncode})"


def ensure_safe(library: str, stage: str) -> None:
    """Run the library's probe in a child process unless it passed on this setup before;
    raise RunFailed naming `stage`, the library and what to do when the child dies."""
    with _LOCK:
        if library in _SAFE:
            return
        marker = _marker(library)
        if marker.exists():
            _SAFE.add(library)
            return
        if util.find_spec(library) is None:  # nothing to try: not a crash of any CPU
            raise RunFailed(f"stage {stage}: {library} is not installed",
                            hint=f"install it: {INSTALL[library]}")
        try:
            proc = subprocess.run([sys.executable, "-c", PROBES[library]],
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
            returncode, tail = proc.returncode, (proc.stderr or "").strip().splitlines()[-1:]
        except subprocess.TimeoutExpired:
            returncode, tail = None, [f"no answer in {TIMEOUT_S:.0f} s"]
        if returncode == 0:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("ok\n")
            _SAFE.add(library)
            return
        if returncode is not None and returncode > 0 and tail and tail[0].startswith(
                ("ModuleNotFoundError", "ImportError")):  # an install problem, not the CPU
            raise RunFailed(f"stage {stage}: {library} ({_version(library)}) could not be "
                            f"imported in a test run ({tail[0][:160]})",
                            hint=f"reinstall it: {INSTALL[library]}")
        what = _describe(returncode) if returncode is not None else "hung"
        detail = f" ({tail[0][:160]})" if tail and returncode is not None and returncode > 0 else ""
        raise RunFailed(f"stage {stage}: {library} ({_version(library)}) {what} in a test run "
                        f"on this CPU{detail}; the stages before it are cached",
                        hint=WHAT_TO_DO[library])


def _version(library: str) -> str:
    try:
        return f"{DISTRIBUTIONS[library]} {metadata.version(DISTRIBUTIONS[library])}"
    except metadata.PackageNotFoundError:
        return "not installed"

