"""`python -m ablate.components.retrieval.dense.onnx_export MODEL_DIR TARGET`: the `onnx`
backend's one-time export (onnx_encoder.export_fp32) in a process of its own, written
atomically to TARGET. The exporter imports torch and transformers and traces the model;
run here, none of that stays resident in the sweep's process, which only loads the file
into onnxruntime (issue 42: the same-work benchmark's peak memory)."""

from __future__ import annotations

import sys
from pathlib import Path

from ablate.components.retrieval.dense.onnx_encoder import export_fp32
from ablate.components.runtime.atomic import atomic_write


def main(argv: list[str] | None = None) -> int:
    model_dir, target = (Path(a) for a in (sys.argv[1:] if argv is None else argv))
    atomic_write(target, export_fp32(model_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
