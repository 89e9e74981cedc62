"""Reading a regression file (experiments/regressions/*.yaml, the format is in
components/export/regression.py): through the experiment file's guarded YAML loader
(components/contract/yaml_source.py: safe loading, alias bombs and repeated keys
refused), every text field a string, every expected figure and the tolerance a finite
number. Each error is one InputError naming the file, the line and the dotted field."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.yaml_source import line_of, read_yaml
from ablate.components.data.text_encoding import codec_name
from ablate.components.data.trec import COLLECTION_FORMATS, TOPIC_FORMATS
from ablate.components.metrics import trec as trec_metrics

INDEX_STATS = ("documents", "unique_terms", "total_terms")
KEYS = {"name", "description", "source", "data_hint", "collection", "topics", "qrels",
        "encoding", "pipeline", "expected", "tolerance"}
TEXT_KEYS = ("description", "source", "data_hint")


@dataclass(frozen=True)
class Regression:
    name: str
    path: Path
    collection: tuple[str, str]  # (path, format)
    topics: tuple[str, str]
    qrels: str
    cfg: PipelineConfig
    metrics: dict[str, float]
    index: dict[str, int]
    tolerance: float
    source: str = ""
    data_hint: str = ""
    encoding: str = "utf-8"  # of the collection, topics and qrels files


class _File:
    """The YAML of one regression file and its errors, each at its line."""

    def __init__(self, path: Path, node: Any) -> None:
        self.path, self.node = path, node

    def error(self, message: str, *loc: Any) -> InputError:
        return InputError(message, path=str(self.path),
                          line=line_of(self.node, loc) if loc else None,
                          field=".".join(str(p) for p in loc) or None)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _file_part(spec: Any, key: str, f: _File, formats: tuple[str, ...]) -> tuple[str, str]:
    if isinstance(spec, str) and spec:
        return spec, "auto"
    if not isinstance(spec, dict):
        raise f.error("expected a path, or {path, format}", key)
    extra = sorted(str(k) for k in spec if k not in ("path", "format"))
    if extra:
        raise f.error(f"unknown key(s) {', '.join(extra)} (known: path, format)", key)
    for part in ("path", "format"):
        if part in spec and not (isinstance(spec[part], str) and spec[part]):
            raise f.error("not a non-empty string", key, part)
    if "path" not in spec:
        raise f.error("missing", key, "path")
    if spec.get("format", "auto") not in formats:
        raise f.error(f"unknown format '{spec['format']}' (known: {', '.join(formats)})", key, "format")
    return spec["path"], spec.get("format", "auto")


def _metrics(expected: dict, f: _File) -> dict[str, float]:
    raw = expected.get("metrics") or {}
    if not isinstance(raw, dict):
        raise f.error("expected {name: value, ...} of trec_eval's measures", "expected", "metrics")
    for k, v in raw.items():
        if k not in trec_metrics.MEASURES:
            raise f.error(f"unknown measure (known: {', '.join(trec_metrics.MEASURES)})",
                          "expected", "metrics", k)
        if not _is_number(v) or not math.isfinite(v):
            raise f.error(f"not a finite number: {v!r}", "expected", "metrics", k)
    return {str(k): float(v) for k, v in raw.items()}


def _index(expected: dict, f: _File) -> dict[str, int]:
    raw = expected.get("index") or {}
    if not isinstance(raw, dict):
        raise f.error(f"expected {{statistic: count}} of {', '.join(INDEX_STATS)}", "expected", "index")
    for k, v in raw.items():
        if k not in INDEX_STATS or not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise f.error(f"an index statistic ({', '.join(INDEX_STATS)}) as a non-negative "
                          "integer", "expected", "index", k)
    return {str(k): v for k, v in raw.items()}


def _pipeline(raw: Any, f: _File) -> PipelineConfig:
    try:
        cfg = PipelineConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise f.error(err["msg"], "pipeline", *err["loc"]) from None
    if cfg.retrieval.paths != ("bm25",):
        raise f.error("a regression runs the bm25 path alone (retrieval.paths: [bm25])",
                      "pipeline", "retrieval", "paths")
    return cfg


def load(path: str | Path) -> Regression:
    """Read and check a regression file (InputError naming the file, line and field)."""
    p = Path(path)
    data, node = read_yaml(p, what="a regression file")
    f = _File(p, node)
    if not isinstance(data, dict):
        raise InputError("a regression file holds a mapping", path=str(p), line=1)
    unknown = sorted(str(k) for k in data if k not in KEYS)
    if unknown:
        raise f.error(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})",
                      unknown[0])
    for key in ("name", "collection", "topics", "qrels", "pipeline", "expected"):
        if key not in data:
            raise InputError("missing", path=str(p), field=key)
    name = data["name"]
    if not isinstance(name, str) or not name or any(ch.isspace() for ch in name):
        raise f.error("a non-empty string without white space (the run file's tag)", "name")
    for key in TEXT_KEYS + ("qrels",):
        if key in data and not isinstance(data[key], str):
            raise f.error("not a string", key)
    if not data["qrels"]:
        raise f.error("an empty path", "qrels")
    try:
        encoding = codec_name(data.get("encoding", "utf-8"))
    except ValueError as exc:
        raise f.error(str(exc), "encoding") from None
    cfg = _pipeline(data["pipeline"], f)
    expected = data["expected"]
    if not isinstance(expected, dict):
        raise f.error("expected {metrics: {...}, index: {...}}", "expected")
    extra = sorted(str(k) for k in expected if k not in ("metrics", "index"))
    if extra:
        raise f.error(f"unknown key(s) {', '.join(extra)} (known: metrics, index)", "expected", extra[0])
    tol = data.get("tolerance", 0.0005)
    if not _is_number(tol) or not math.isfinite(tol) or tol < 0:
        raise f.error(f"a finite non-negative number, not {tol!r}", "tolerance")
    return Regression(name, p, _file_part(data["collection"], "collection", f, COLLECTION_FORMATS),
                      _file_part(data["topics"], "topics", f, TOPIC_FORMATS), data["qrels"], cfg,
                      _metrics(expected, f), _index(expected, f), float(tol),
                      data.get("source", ""), data.get("data_hint", ""), encoding)
