"""The labels file of judge-corrected estimates (`judge.labels: FILE`; docs/judge-labels.md):
human or gold verdicts on some questions' answers, for ablate.components.stats.ppi.

JSONL, one label per line (blank lines skipped):

    {"qid": "q17", "metric": "judge/faithfulness", "answer": "Paris.", "label": "yes",
     "annotator": "ann", "labelled_at": "2025-03-01"}

- `qid`: a question id of the data set (checked when the known ids are given);
- `metric`: the judged metric the label is for (`judge/<name>`; checked against the known
  judged metrics when given);
- exactly one of `answer` (the answer text the label is for: it applies to every variant
  that gave this answer) or `variant` (the variant whose answer it is);
- `label`: a number in [0, 1] or a verdict word yes / partly / no,
  scored as the judged metrics score them (1, 0.5, 0);
- optional `annotator` (a string) and `labelled_at` (an ISO 8601 date or date-time).

Unknown fields, a duplicate (qid, metric, answer or variant), a label outside the
allowed values, an unknown question id or malformed JSON are an InputError naming the
file and the line. The result is a polars frame with LABEL_COLUMNS (`line`: where the
label is in the file).
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from pathlib import Path
from typing import Any, Collection

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.metrics.judged import SCORES

LABEL_SCHEMA: dict[str, pl.DataType] = {
    "qid": pl.String(), "metric": pl.String(), "answer": pl.String(), "variant": pl.String(),
    "label": pl.Float64(), "annotator": pl.String(), "labelled_at": pl.String(),
    "line": pl.Int64(),
}
LABEL_COLUMNS: tuple[str, ...] = tuple(LABEL_SCHEMA)
FIELDS = ("qid", "metric", "answer", "variant", "label", "annotator", "labelled_at")
LOW, HIGH = 0.0, 1.0


def is_iso_date(text: Any) -> bool:
    """Whether `text` is an ISO 8601 date or date-time string (`labelled_at`)."""
    if not isinstance(text, str):
        return False
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            parse(text)
            return True
        except ValueError:
            pass
    return False


def _label(value: Any) -> float | None:
    """The label as a score, None when it is not an allowed value."""
    if isinstance(value, str):
        return SCORES.get(value.strip().lower())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        return v if math.isfinite(v) and LOW <= v <= HIGH else None
    return None


def _row(obj: dict, err, known_qids: Collection[str] | None,
         metrics: Collection[str] | None,
         variants: Collection[str] | None = None) -> dict[str, Any]:
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise err(f"unknown field '{unknown[0]}' (known: {', '.join(FIELDS)})")
    for name in ("qid", "metric"):
        if not isinstance(obj.get(name), str) or not obj[name]:
            raise err("missing, empty or not a string", name)
    qid, metric = obj["qid"], obj["metric"]
    if known_qids is not None and qid not in known_qids:
        raise err(f"unknown question id '{qid}'", "qid")
    if not metric.startswith("judge/"):
        raise err(f"'{metric}' is not a judged metric name (judge/<name>)", "metric")
    if metrics is not None and metric not in metrics:
        raise err(f"unknown judged metric '{metric}' (known: {', '.join(sorted(metrics))})",
                  "metric")
    has_answer, has_variant = obj.get("answer") is not None, obj.get("variant") is not None
    if has_answer == has_variant:
        raise err("give the answer or variant the label is for" if not has_answer
                  else "give answer or variant, not both")
    key_field = "answer" if has_answer else "variant"
    if not isinstance(obj[key_field], str) or (key_field == "variant" and not obj[key_field]):
        raise err("must be a string" + (" (not empty)" if key_field == "variant" else ""),
                  key_field)
    if key_field == "variant" and variants is not None and obj["variant"] not in variants:
        raise err(f"unknown variant '{obj['variant']}' (known: {', '.join(variants)})",
                  "variant")
    if "label" not in obj:
        raise err("missing required field", "label")
    label = _label(obj["label"])
    if label is None:
        raise err(f"{json.dumps(obj['label'])} is not an allowed label: a number in "
                  f"[{LOW:g}, {HIGH:g}] or one of {', '.join(SCORES)}", "label")
    annotator, when = obj.get("annotator"), obj.get("labelled_at")
    if annotator is not None and not isinstance(annotator, str):
        raise err("must be a string", "annotator")
    if when is not None and not is_iso_date(when):
        raise err(f"{json.dumps(when)} is not an ISO 8601 date or date-time "
                  "(2025-03-01, 2025-03-01T10:00:00)", "labelled_at")
    return {"qid": qid, "metric": metric, "answer": obj.get("answer"),
            "variant": obj.get("variant"), "label": label, "annotator": annotator,
            "labelled_at": when}


def read_labels(path: str | Path, *, known_qids: Collection[str] | None = None,
                metrics: Collection[str] | None = None,
                variants: Collection[str] | None = None) -> pl.DataFrame:
    """Read a labels file (module docstring); `known_qids`: the data set's question ids,
    `metrics`: the judged metric names a label may be for, `variants`: the experiment's
    variant names a `variant` label may name (None: not checked)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the labels file: {exc.strerror or exc}",
                         path=str(path)) from None
    rows: list[dict[str, Any]] = []
    first: dict[tuple[str, str, str, str], int] = {}
    for n, raw in enumerate(data.splitlines(), 1):
        def err(message: str, field: str | None = None, _n: int = n) -> InputError:
            return InputError(message, path=str(path), line=_n, field=field)
        try:
            text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise err(f"undecodable bytes (not UTF-8) at byte {exc.start}") from None
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise err(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise err(f"a line must hold a JSON object, got {type(obj).__name__}")
        row = _row(obj, err, known_qids, metrics, variants)
        kind = "answer" if row["answer"] is not None else "variant"
        key = (row["qid"], row["metric"], kind, row[kind])
        if key in first:
            raise err(f"duplicate label for question '{row['qid']}', {row['metric']}, "
                      f"{kind} {json.dumps(row[kind], ensure_ascii=False)[:60]} "
                      f"(first at line {first[key]})")
        first[key] = n
        rows.append({**row, "line": n})
    if not rows:
        raise InputError("the labels file holds no label", path=str(path))
    return pl.DataFrame(rows, schema=LABEL_SCHEMA)
