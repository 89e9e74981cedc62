"""ONNX Runtime embedders of a local sentence-transformers model folder, exported locally.

The folder's transformer is exported with torch.onnx.export (the TorchScript exporter,
dynamic batch and sequence axes) from the files on disk: nothing is downloaded. Texts are
tokenised with the folder's own tokenizer.json, truncated at sentence_bert_config.json's
`max_seq_length` as sentence-transformers does, and run one text per call (see
OnnxEmbedder); pooling (mean or CLS, as 1_Pooling/config.json says) and L2 normalisation
run here in numpy. So the `onnx` backend computes what `SentenceTransformer.encode`
computes, on another runtime. `onnx-int8` runs onnxruntime's dynamic quantisation of that export
(int8 weights per output channel, activations quantised on the fly): smaller and faster,
and its vectors differ from the float ones; that difference is an ablation variable.

Exported files live under `export_dir/<model fingerprint>-<backend>-<versions>/model.onnx`
(the versions of onnx, onnxruntime, torch and transformers, which all shape the file),
each written to a temporary file and renamed, so a killed export never leaves a broken
model behind.
Without `export_dir` the export is made in a temporary folder and held in memory. The
fp32 export itself is made once per machine, in a child process (onnx_export: the
sweep's process never imports torch or transformers for it), under
`machine_state_dir("onnx")`, and hard-linked (else copied) into `export_dir`: a new cache
folder, a test's included, does not pay the export again.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
import tempfile
import warnings
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ablate.components.contract.errors import InputError
from ablate.components.runtime.atomic import atomic_write, file_mode

FIELD = "retrieval.dense_backend"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SUPPORTED_MODULES = {"sentence_transformers.models.Transformer",
                     "sentence_transformers.models.Pooling",
                     "sentence_transformers.models.Normalize"}


def runtime_versions() -> str:
    """`onnx<v>-ort<v>-torch<v>-tf<v>`: the packages that shape an exported file
    (transformers builds the model torch traces)."""
    def ver(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "none"
    return f"onnx{ver('onnx')}-ort{ver('onnxruntime')}-torch{ver('torch')}-tf{ver('transformers')}"


def export_name(fingerprint: str, backend: str) -> str:
    """The export folder's name of one model and backend (also the embedding cache's id)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{fingerprint}-{backend}-{runtime_versions()}")


def read_pipeline(model_path: Path) -> dict:
    """Pooling mode, max_seq_length and lower-casing of a sentence-transformers folder;
    an InputError for a pipeline this backend does not reproduce (a Dense layer, ...)."""
    model_path = Path(model_path)
    modules_file = model_path / "modules.json"
    modules = json.loads(modules_file.read_text()) if modules_file.is_file() else []
    other = sorted({m.get("type", "") for m in modules} - SUPPORTED_MODULES)
    if other:
        raise InputError(f"the ONNX backends reproduce Transformer + Pooling (+ Normalize) models; "
                         f"{model_path.name} also has {', '.join(other)}: use dense_backend torch",
                         field=FIELD)
    pool_dir = next((m.get("path", "") for m in modules if m.get("type", "").endswith(".Pooling")),
                    "1_Pooling")
    pool_file = model_path / pool_dir / "config.json"
    pool = json.loads(pool_file.read_text()) if pool_file.is_file() else \
        {"pooling_mode_mean_tokens": True}
    modes = sorted(k for k, v in pool.items() if k.startswith("pooling_mode_") and v)
    if modes not in (["pooling_mode_mean_tokens"], ["pooling_mode_cls_token"]):
        raise InputError(f"the ONNX backends do mean or CLS pooling; {model_path.name} pools by "
                         f"{', '.join(modes) or 'nothing'}: use dense_backend torch", field=FIELD)
    sbert_file = model_path / "sentence_bert_config.json"
    sbert = json.loads(sbert_file.read_text()) if sbert_file.is_file() else {}
    tok_cfg_file = model_path / "tokenizer_config.json"
    tok_cfg = json.loads(tok_cfg_file.read_text()) if tok_cfg_file.is_file() else {}
    window = sbert.get("max_seq_length") or tok_cfg.get("model_max_length") or 512
    return {"pooling": "cls" if modes == ["pooling_mode_cls_token"] else "mean",
            "max_seq_length": int(min(window, tok_cfg.get("model_max_length", window))),
            "lower_case": bool(sbert.get("do_lower_case", False))}


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporter's deprecation/tracer warnings and the quantiser's advice."""
    class _Drop(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return record.levelno >= logging.ERROR
    root, drop = logging.getLogger(), _Drop()
    root.addFilter(drop)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.removeFilter(drop)


def export_fp32(model_path: Path) -> bytes:
    """The folder's transformer as an ONNX graph: inputs as its forward takes them,
    output `last_hidden_state` (batch, sequence, hidden), batch and sequence dynamic."""
    import inspect

    import torch
    from transformers import AutoModel

    with _quiet():
        hf = AutoModel.from_pretrained(str(model_path), local_files_only=True,
                                       attn_implementation="eager").eval()
    names = [n for n in INPUTS if n in inspect.signature(hf.forward).parameters]

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hf = hf

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            return self.hf(**dict(zip(names, args))).last_hidden_state

    # a padded example (the second row is shorter): the traced graph must honour the mask
    ids = torch.tensor([[101, 2000, 2001, 102], [101, 2000, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    example = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    axes = {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]}
    buf = io.BytesIO()
    with _quiet(), torch.no_grad():
        # the TorchScript exporter (dynamo=False) writes to a file object too; torch's
        # annotation of `f` names paths only
        torch.onnx.export(LastHidden().eval(), tuple(example[n] for n in names),
                          buf,  # type: ignore[arg-type]
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False,
                          do_constant_folding=True)
    return buf.getvalue()


def quantize_int8(fp32_file: Path, out_file: Path) -> None:
    """onnxruntime dynamic quantisation: int8 weights, one scale per output channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    with _quiet():
        quantize_dynamic(str(fp32_file), str(out_file), per_channel=True,
                         weight_type=QuantType.QInt8)


def exported_model(model_path: Path, fingerprint: str, backend: str,
                   export_dir: Path | None) -> Path | bytes:
    """The model file of `backend` (`onnx` or `onnx-int8`), exported once and reused from
    `export_dir`; without one, the file's bytes (made in a temporary folder)."""
    if export_dir is None:
        with tempfile.TemporaryDirectory(prefix="ablate-onnx-") as tmp:
            return _exported_into(model_path, fingerprint, backend, Path(tmp)).read_bytes()
    return _exported_into(model_path, fingerprint, backend, export_dir)


def _exported_into(model_path: Path, fingerprint: str, backend: str, export_dir: Path) -> Path:
    """The model file of `backend` in `export_dir`, exported there unless it already is."""
    target = Path(export_dir) / export_name(fingerprint, backend) / "model.onnx"
    if target.is_file():
        return target
    if backend == "onnx":
        _link_or_copy(_machine_export(model_path, fingerprint), target)
    elif backend == "onnx-int8":
        fp32 = _exported_into(model_path, fingerprint, "onnx", export_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".model.onnx.", suffix=".tmp")
        os.close(fd)
        try:
            quantize_int8(fp32, Path(tmp))
            os.chmod(tmp, file_mode())  # not mkstemp's 0600: a shared cache is readable
            os.replace(tmp, target)  # same folder: readers see no file or the whole file
        finally:
            Path(tmp).unlink(missing_ok=True)
    else:
        raise InputError(f"no ONNX export for backend '{backend}'", field=FIELD)
    return target


def _machine_export(model_path: Path, fingerprint: str) -> Path:
    """The fp32 export of a model, made once per machine (runtime.models.machine_state_dir,
    like the torch copy of the GGUF generators), in a child process (onnx_export)."""
    from ablate.components.runtime.models import machine_state_dir
    target = machine_state_dir("onnx") / export_name(fingerprint, "onnx") / "model.onnx"
    if not target.is_file():
        _export_in_child(model_path, target)
    return target


def export_command(model_path: Path, target: Path) -> list[str]:
    """The child process that exports `model_path` to `target` (onnx_export)."""
    return [sys.executable, "-m", "ablate.components.retrieval.dense.onnx_export", str(model_path),
            str(target)]


def _export_in_child(model_path: Path, target: Path) -> None:
    """export_fp32 in a child process; a failure is one line with the child's last words."""
    import subprocess
    proc = subprocess.run(export_command(model_path, target), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0 or not target.is_file():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"exporting {Path(model_path).name} to ONNX failed (exit "
                           f"{proc.returncode}): {last}")


def _link_or_copy(src: Path, target: Path) -> None:
    """`target` as a hard link to `src` (no second copy on disk), else an atomic copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.link"
    try:
        os.link(src, tmp)
    except OSError:  # another file system, or links refused: copy
        atomic_write(target, src.read_bytes())
        return
    os.replace(tmp, target)


class FolderEmbedder:
    """What the in-project runtimes share: a sentence-transformers folder's pipeline
    (read_pipeline) and tokenizer (truncating at its window, never padding), and the
    parts of SentenceTransformer's interface the DenseEncoder reads. Subclasses set
    `dim` and implement `encode`."""

    dim: int

    def __init__(self, model_path: Path) -> None:
        from tokenizers import Tokenizer
        self.model_path = Path(model_path)
        self.pipeline = read_pipeline(self.model_path)
        self.tokenizer = folder_tokenizer(Tokenizer, self.model_path, self.pipeline["max_seq_length"])

    @property
    def max_seq_length(self) -> int:
        return int(self.pipeline["max_seq_length"])

    def get_embedding_dimension(self) -> int:
        return self.dim

    get_sentence_embedding_dimension = get_embedding_dimension


class OnnxEmbedder(FolderEmbedder):
    """L2-normalised sentence embeddings from an exported model on onnxruntime (CPU).

    Each text runs alone (no padding, no batch mates), on `workers` threads (default: the
    CPU count) each running a single-threaded session call. So a text's vector depends on
    that text only, which the embedding cache needs: int8's activations are quantised
    with one scale per call, so batching texts would make a text's vector depend on the
    texts beside it. On this 2-core machine this was also faster than padded batches.
    """

    def __init__(self, model_path: Path, fingerprint: str, backend: str,
                 export_dir: Path | None, workers: int | None = None) -> None:
        import onnxruntime as ort  # the backend checked it is installed (dense_backends)
        super().__init__(model_path)
        model = exported_model(self.model_path, fingerprint, backend, export_dir)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # parallel over texts instead (see the class doc)
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3  # errors only
        self.session = ort.InferenceSession(model if isinstance(model, bytes) else str(model),
                                            opts, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self.workers = max(int(workers or os.cpu_count() or 1), 1)

    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize_embeddings: bool = True,
               convert_to_numpy: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """float32 (len(texts), dim) in input order, as SentenceTransformer.encode returns
        (numpy only; `batch_size` and `show_progress_bar` are accepted and not used:
        every text runs alone)."""
        from concurrent.futures import ThreadPoolExecutor
        texts = [t.lower() for t in texts] if self.pipeline["lower_case"] else list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        with ThreadPoolExecutor(min(self.workers, len(texts))) as pool_:
            rows = list(pool_.map(lambda e: self._one(e, normalize_embeddings), encodings))
        return np.stack(rows)

    def _one(self, enc, normalize: bool) -> np.ndarray:  # type: ignore[no-untyped-def]
        feed = {"input_ids": np.array([enc.ids], dtype=np.int64),
                "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([enc.type_ids], dtype=np.int64)}
        (hidden,) = self.session.run(["last_hidden_state"], {n: feed[n] for n in self.inputs})
        return pool(hidden, feed["attention_mask"], self.pipeline["pooling"], normalize)[0]


def pool(hidden: np.ndarray, mask: np.ndarray, mode: str, normalize: bool = True) -> np.ndarray:
    """Sentence vectors from token vectors: the mean over unmasked tokens (or the first
    token), L2-normalised as sentence-transformers' Normalize module does."""
    if mode == "cls":
        vec = hidden[:, 0, :]
    else:
        m = mask[..., None].astype(np.float32)
        vec = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    if normalize:
        vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
    return vec.astype(np.float32)


def folder_tokenizer(cls, model_path: Path, window: int):  # type: ignore[no-untyped-def]
    """The folder's tokenizer.json, truncating at the model's window, never padding (the
    file itself may pad every text to a fixed length; a text runs alone here)."""
    path = model_path / "tokenizer.json"
    if not path.is_file():
        raise InputError(f"the ONNX backends need {model_path.name}/tokenizer.json: "
                         "use dense_backend torch", field=FIELD)
    tok = cls.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_length=window)
    return tok
