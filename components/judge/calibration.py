"""Calibration: how often the judge agrees with labelled examples.

A calibration set is JSONL, one labelled item a line:
- `{"kind": "support", "question", "claim", "context": str | [str], "label": bool}`: is the
  claim supported by the context (the verdict behind faithfulness and context recall);
- `{"kind": "relevance", "question", "answer", "label": bool}`: does the answer address
  the question (answer relevancy; the judge agrees when yes/partly meets a true label,
  no a false one: a score of at least 0.5 counts as relevant);
- `{"kind": "usefulness", "question", "reference", "passage", "label": bool}`: is the passage
  useful for the reference answer (context precision).
Optional: `id` (default: the line number), `lang` (default: by the question's script, as
in the sweep), `how` (how the label was made). A context list is numbered as in the
sweep's prompts.

The judge is asked exactly the prompts the sweep asks (same templates, same verdict cache).
Agreement = share of judged items where the judge's verdict equals the label; Cohen's
kappa corrects it for the agreement expected by chance from both sides' marginals
(undefined when that expected agreement is 1); the confusion matrix counts
(label, verdict) pairs. A judge failure is counted apart and excluded, never a verdict.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ablate.components.errors import InputError
from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import Ask, JudgeCache, ask_many
from ablate.components.metrics.judged import SCORES

KINDS = {"support": ("question", "claim", "context"), "relevance": ("question", "answer"),
         "usefulness": ("question", "reference", "passage")}
TARGET_AGREEMENT = 0.8  # below this the report warns: the judge is not to be trusted


@dataclass(frozen=True)
class CalibItem:
    id: str
    kind: str
    lang: str | None
    fields: dict[str, Any]
    label: bool
    how: str = ""


def _context(value: Any) -> str:
    passages = [value] if isinstance(value, str) else list(value)
    return "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, 1))


def read_items(path: Path) -> list[CalibItem]:
    """Read a calibration set; InputError naming the file, line and field when malformed."""
    items: list[CalibItem] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the calibration set: {exc}", path=str(path)) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=n) from None
        if not isinstance(raw, dict):
            raise InputError("an item must be a JSON object", path=str(path), line=n)
        kind = raw.get("kind")
        if kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}", path=str(path), line=n,
                             field="kind")
        if not isinstance(raw.get("label"), bool):
            raise InputError("label must be true or false", path=str(path), line=n, field="label")
        for f in KINDS[kind]:
            v = raw.get(f)
            ok = isinstance(v, str) and v.strip() or (
                f == "context" and isinstance(v, list) and v and all(isinstance(p, str) for p in v))
            if not ok:
                raise InputError("missing or empty", path=str(path), line=n, field=f)
        lang = raw.get("lang")
        if lang not in (None, "en", "zh"):
            raise InputError("lang must be en or zh", path=str(path), line=n, field="lang")
        items.append(CalibItem(str(raw.get("id", n)), kind, lang,
                               {f: raw[f] for f in KINDS[kind]}, raw["label"], str(raw.get("how", ""))))
    if not items:
        raise InputError("the calibration set holds no item", path=str(path))
    return items


def ask_of(item: CalibItem, cfg: JudgeConfig) -> Ask:
    """The exact question the sweep would ask for this item."""
    f = item.fields
    lang = item.lang or language(cfg.language, f["question"])
    q = f["question"].strip()
    if item.kind == "support":
        return Ask("support", lang, {"question": q, "statement": f["claim"].strip(),
                                     "context": _context(f["context"])})
    if item.kind == "relevance":
        return Ask("relevance", lang, {"question": q, "answer": f["answer"].strip()})
    return Ask("usefulness", lang, {"question": q, "reference": f["reference"].strip(),
                                    "passage": f["passage"].strip()})


def judge_items(judge: BaseJudge, prompts: PromptSet, cfg: JudgeConfig,
                items: Sequence[CalibItem], cache: JudgeCache | None = None,
                progress: Any = None) -> list[dict[str, Any]]:
    """One row per item: id, kind, lang, label, verdict, predicted (bool or None), failure, error."""
    rows = []
    for n, item in enumerate(items, 1):
        ask = ask_of(item, cfg)
        v = ask_many(judge, prompts, [ask], cfg.max_claims, cfg.max_new_tokens, cache)[0]
        predicted = None if not v.ok else SCORES[v.value] >= 0.5
        rows.append({"id": item.id, "kind": item.kind, "lang": ask.lang, "label": item.label,
                     "verdict": v.value if v.ok else None, "predicted": predicted,
                     "failure": v.failure, "error": v.error, "cached": v.cached})
        if progress is not None:
            progress(n, len(items), item, rows[-1])
    return rows


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Cohen's kappa of (label, verdict) pairs; NaN when chance agreement is 1 or no pair."""
    n = len(pairs)
    if not n:
        return math.nan
    po = sum(a == b for a, b in pairs) / n
    pl = sum(a for a, _ in pairs) / n
    pj = sum(b for _, b in pairs) / n
    pe = pl * pj + (1 - pl) * (1 - pj)
    return math.nan if pe >= 1 else (po - pe) / (1 - pe)


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Agreement, kappa, confusion matrix and failures: overall and per kind."""
    rows = list(rows)

    def one(sel: list[dict[str, Any]]) -> dict[str, Any]:
        pairs = [(r["label"], r["predicted"]) for r in sel if r["predicted"] is not None]
        n = len(pairs)
        return {"items": len(sel), "judged": n,
                "failures": sum(r.get("failure") is not None for r in sel),
                "errors": sum(r.get("error") is not None for r in sel),
                "agreement": sum(a == b for a, b in pairs) / n if n else math.nan,
                "kappa": cohen_kappa(pairs),
                "confusion": {"label_true": {"judge_true": sum(a and b for a, b in pairs),
                                             "judge_false": sum(a and not b for a, b in pairs)},
                              "label_false": {"judge_true": sum(b and not a for a, b in pairs),
                                              "judge_false": sum(not a and not b for a, b in pairs)}}}
    out = one(rows)
    out["by_kind"] = {k: one([r for r in rows if r["kind"] == k])
                      for k in KINDS if any(r["kind"] == k for r in rows)}
    out["by_lang"] = {g: one([r for r in rows if r["lang"] == g])
                      for g in sorted({r["lang"] for r in rows})}
    out["target"] = TARGET_AGREEMENT
    out["meets_target"] = bool(out["agreement"] >= TARGET_AGREEMENT) if out["judged"] else False
    return out


def render(summary: dict[str, Any]) -> str:
    """A plain-text table of a summary (the `ablate judge calibrate` output)."""
    def f(x: float) -> str:
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"
    lines = ["kind        items  judged  failures  agreement  kappa   confusion (label/judge: TT TF FT FF)"]
    for name, s in [("all", summary)] + list(summary["by_kind"].items()):
        c = summary_confusion(s)
        lines.append(f"{name:<11} {s['items']:>5}  {s['judged']:>6}  {s['failures']:>8}  "
                     f"{f(s['agreement']):>9}  {f(s['kappa']):>6}   {c}")
    verdict = ("meets" if summary["meets_target"] else "is BELOW")
    lines.append(f"agreement {f(summary['agreement'])} {verdict} the {summary['target']:.0%} "
                 f"needed to trust the judge")
    return "\n".join(lines)


def summary_confusion(s: dict[str, Any]) -> str:
    c = s["confusion"]
    return (f"{c['label_true']['judge_true']} {c['label_true']['judge_false']} "
            f"{c['label_false']['judge_true']} {c['label_false']['judge_false']}")
