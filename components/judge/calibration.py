"""Calibration: how often the judge agrees with labelled examples (docs/judge-calibration.md).

A calibration set is JSONL, one labelled item a line:
- `{"kind": "support", "question", "claim", "context": str | [str], "label": bool}`: is the
  claim supported by the context (the verdict behind faithfulness and context recall);
- `{"kind": "relevance", "question", "answer", "label": bool}`: does the answer address
  the question (judge/addresses_question; the judge agrees when yes/partly meets a true label,
  no a false one: a score of at least 0.5 counts as relevant);
- `{"kind": "usefulness", "question", "reference", "passage", "label": bool}`: is the passage
  useful for the reference answer (context precision).
Where the label comes from, on every item: `"synthetic": true` (made by construction,
components/judge/calibset.py), or `annotator` (who) and `labelled_at` (when: an ISO 8601
date or date-time) for a human label.
Optional: `id` (unique; default: the line number), `qid` (the question's id in its data
set: items of one question form a cluster for the intervals, and a qid the experiment
selects is refused: calibration items are held out from the sweep; `source` is read as
`qid` in sets made before), `lang` (default: by the question's script, as in the sweep),
`how` (how the label was made), `negative` (which construction made a synthetic false
label). Any other field, a duplicate id, or malformed JSON is an InputError naming the file
and line. A context list is numbered as in the sweep's prompts.

The judge is asked exactly the prompts the sweep asks (same templates, same verdict cache).
The figures (ablate.components.judge.agreement) count an item without a usable verdict as
a disagreement, never drop it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.judge.agreement import TARGET_AGREEMENT, summarize
from ablate.components.judge.backends import BaseJudge
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.labels import is_iso_date
from ablate.components.judge.prompts import PromptSet, language
from ablate.components.judge.tasks import Ask, JudgeCache, ask_many
from ablate.components.metrics.judged import SCORES

KINDS = {"support": ("question", "claim", "context"), "relevance": ("question", "answer"),
         "usefulness": ("question", "reference", "passage")}
OPTIONAL = ("id", "qid", "source", "lang", "how", "synthetic", "negative", "annotator",
            "labelled_at")
__all__ = ["TARGET_AGREEMENT", "CalibItem", "read_items", "ask_of", "judge_items",
           "with_items", "held_out", "overlap", "summarize", "render", "confusion"]


@dataclass(frozen=True)
class CalibItem:
    id: str
    kind: str
    lang: str | None
    fields: dict[str, Any]
    label: bool
    how: str = ""
    qid: str | None = None
    synthetic: bool = False
    annotator: str | None = None
    labelled_at: str | None = None
    line: int = 0


def _context(value: Any) -> str:
    passages = [value] if isinstance(value, str) else list(value)
    return "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, 1))


def _item(raw: Any, n: int, path: str) -> CalibItem:
    def bad(message: str, field: str | None = None) -> InputError:
        return InputError(message, path=path, line=n, field=field)
    if not isinstance(raw, dict):
        raise bad("an item must be a JSON object")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise bad(f"kind must be one of {', '.join(KINDS)}", "kind")
    unknown = sorted(set(raw) - {"kind", "label", *KINDS[kind], *OPTIONAL})
    if unknown:
        raise bad(f"unknown field for a {kind} item (known: {', '.join(KINDS[kind] + OPTIONAL)})",
                  unknown[0])
    if not isinstance(raw.get("label"), bool):
        raise bad("label must be true or false", "label")
    for f in KINDS[kind]:
        v = raw.get(f)
        ok = isinstance(v, str) and v.strip() or (
            f == "context" and isinstance(v, list) and v and all(isinstance(p, str) for p in v))
        if not ok:
            raise bad("missing or empty", f)
    lang = raw.get("lang")
    if lang not in (None, "en", "zh"):
        raise bad("lang must be en or zh", "lang")
    synthetic = raw.get("synthetic", False)
    if not isinstance(synthetic, bool):
        raise bad("synthetic must be true or false", "synthetic")
    annotator, when = raw.get("annotator"), raw.get("labelled_at")
    if annotator is not None and not (isinstance(annotator, str) and annotator.strip()):
        raise bad("annotator must be a non-empty string", "annotator")
    if when is not None and not is_iso_date(when):
        raise bad("labelled_at must be an ISO 8601 date or date-time", "labelled_at")
    if not synthetic and (annotator is None or when is None):
        raise bad("say where the label comes from: \"synthetic\": true, or \"annotator\" and "
                  "\"labelled_at\" for a human label", "labelled_at" if annotator else "annotator")
    qid = raw.get("qid", raw.get("source"))
    if qid is not None and not (isinstance(qid, str) and qid.strip()):
        raise bad("qid must be a non-empty string", "qid")
    return CalibItem(str(raw.get("id", n)), kind, lang, {f: raw[f] for f in KINDS[kind]},
                     raw["label"], str(raw.get("how", "")), qid, synthetic, annotator, when, n)


def read_items(path: Path) -> list[CalibItem]:
    """Read a calibration set; InputError naming the file, line and field when malformed."""
    items: list[CalibItem] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the calibration set: {exc}", path=str(path)) from None
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=str(path), line=n) from None
        item = _item(raw, n, str(path))
        if item.id in seen:
            raise InputError(f"duplicate id '{item.id}' (first on line {seen[item.id]})",
                             path=str(path), line=n, field="id")
        seen[item.id] = n
        items.append(item)
    if not items:
        raise InputError("the calibration set holds no item", path=str(path))
    return items


def held_out(items: Sequence[CalibItem], selected: Collection[str], path: Path | str) -> None:
    """InputError naming the file and the first item's line when an item's question is one
    of the experiment's selected questions (calibration items are held out from the sweep)."""
    chosen = set(selected)
    overlap = [i for i in items if i.qid is not None and i.qid in chosen]
    if overlap:
        first = overlap[0]
        raise InputError(
            f"item '{first.id}' is about question '{first.qid}', one of the experiment's "
            f"{len(chosen)} selected questions ({len(overlap)} of {len(items)} items are): "
            "calibration items must be held out from the sweep", path=str(path),
            line=first.line, field="qid")


def overlap(items: Sequence[CalibItem], selected: Collection[str]) -> dict[str, Any]:
    """Items whose question the experiment selects: {items, questions, first ids}."""
    chosen = set(selected)
    hit = [i for i in items if i.qid is not None and i.qid in chosen]
    return {"items": len(hit), "questions": len({i.qid for i in hit}),
            "ids": [i.id for i in hit[:5]]}


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
    """One row per item: id, kind, lang, label, verdict, predicted (bool, None without a
    usable verdict), failure, error, cached, qid, synthetic."""
    rows = []
    for n, item in enumerate(items, 1):
        ask = ask_of(item, cfg)
        v = ask_many(judge, prompts, [ask], cfg.max_claims, cfg.max_new_tokens, cache)[0]
        predicted = None if not v.ok else SCORES[v.value] >= 0.5
        rows.append({"id": item.id, "kind": item.kind, "lang": ask.lang, "label": item.label,
                     "verdict": v.value if v.ok else None, "predicted": predicted,
                     "failure": v.failure, "error": v.error, "cached": v.cached,
                     "qid": item.qid, "synthetic": item.synthetic})
        if progress is not None:
            progress(n, len(items), item, rows[-1])
    return rows


def with_items(rows: Sequence[dict[str, Any]], items: Sequence[CalibItem]) -> list[dict[str, Any]]:
    """Rows with each item's qid and synthetic flag (a calibrate stage's stored rows keep
    only the verdicts)."""
    by_id = {i.id: i for i in items}
    return [r | ({"qid": by_id[r["id"]].qid, "synthetic": by_id[r["id"]].synthetic}
                 if r["id"] in by_id else {}) for r in rows]


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ci(pair: Sequence[float], digits: int = 3) -> str:
    return f"[{_f(pair[0], digits)}, {_f(pair[1], digits)}]"


def render(summary: dict[str, Any]) -> str:
    """A plain-text table of a summary (the `ablate judge calibrate` output)."""
    lines = ["group       items  verdicts  no verdict   agreement [95% CI]      kappa [95% CI]"
             "         confusion (label/judge: TT TF T- FT FF F-)"]
    groups = ([("all", summary)] + list(summary["by_kind"].items())
              + [(f"lang {g}", s) for g, s in summary["by_lang"].items()])
    for name, s in groups:
        share = f"{s['no_verdict']} ({s['no_verdict_share']:.0%})" if s["items"] else "0"
        lines.append(f"{name:<11} {s['items']:>5}  {s['judged']:>8}  {share:>10}   "
                     f"{_f(s['agreement'])} {_ci(s['agreement_ci']):<15} "
                     f"{_f(s['kappa'], 2):>5} {_ci(s['kappa_ci'], 2):<14} {confusion(s)}")
    clusters = summary["clusters"]
    lines.append(f"{summary['intervals']}; {clusters} clusters"
                 + (" (items of one question together)" if clusters < summary["items"] else
                    " (one item per question)" if summary.get("with_qid") else
                    " (no qid: items taken as independent)"))
    lines.append("an item without a usable verdict (judge failure or error) counts as a "
                 "disagreement")
    syn = summary["synthetic"]
    if syn:
        lines.append("synthetic labels" + ("" if syn == summary["items"] else
                                           f": {syn} of {summary['items']} items")
                     + " (true by construction; not a human judgement)")
    target = summary["target"]
    for kind, s in summary["by_kind"].items():
        verdict = "meets" if s["meets_target"] else "is BELOW"
        lines.append(f"{kind}: agreement {_f(s['agreement'])} {_ci(s['agreement_ci'])} "
                     f"{verdict} the {target:.0%} needed to trust the judge's {kind} verdicts")
    return "\n".join(lines)


def confusion(s: dict[str, Any]) -> str:
    t, f = s["confusion"]["label_true"], s["confusion"]["label_false"]
    return " ".join(str(x) for x in (t["judge_true"], t["judge_false"], t["no_verdict"],
                                     f["judge_true"], f["judge_false"], f["no_verdict"]))
