"""What changed between two sweep folders (`ablate diff A B`), from what each folder
records: the experiment file's settings (dotted fields, old → new), the run's options,
each variant's config and resolved model files, the data's fingerprints and which
questions and documents were added, removed or edited, the library versions, and where
the first changed input enters the stage graph (the first stage whose key differs);
then which key metrics and verdicts moved (run_diff_metrics.py). Plain data, ready for
diff.json; run_diff_text.py prints it.

What a folder records decides what can be told: questions are compared from
questions.parquet (text, answers, gold spans), else only by id from per_query.parquet;
documents by id from documents.parquet (each document's sha256), else only where both
runs kept the same gold span or context passage of a document with different text, and
then which documents were added or removed cannot be told (notes say so)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from ablate.components.contract.dotted import flatten
from ablate.components.pipeline import STAGE_NAMES, STAGES
from ablate.components.report.run_diff_metrics import metric_rows
from ablate.components.report.sweep_data import SweepResults

EVERY = "every variant"
# the run's own facts outside the experiment file's settings (command-line options, git)
RUN_FIELDS = ("experiment", "experiment_file", "git_sha", "git_dirty", "tier", "split", "seed",
              "tokenizer", "label_mode", "analysis_code")


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Dotted fields whose values differ: {field, old, new}, and `absent` ("old" or
    "new") for a field one side lacks; lists compared whole; sorted by field."""
    a, b = flatten(old or {}), flatten(new or {})
    out = []
    for f in sorted(set(a) | set(b)):
        if f in a and f in b:
            if _same(a[f], b[f]):
                continue
            out.append({"field": f, "old": a[f], "new": b[f]})
        else:
            side = "new" if f in a else "old"
            out.append({"field": f, "old": a.get(f), "new": b.get(f), "absent": side})
    return out


def _same(x: Any, y: Any) -> bool:
    return json.dumps(x, sort_keys=True, default=str) == json.dumps(y, sort_keys=True, default=str)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _by_name(res: SweepResults) -> dict[str, dict[str, Any]]:
    return {str(v.get("name")): v for v in res.variants}


def grouped(per_variant: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Changes every compared variant shares under EVERY, the rest under their variant
    (variants without a change left out)."""
    if not per_variant:
        return {}
    lists = list(per_variant.values())
    shared = [c for c in lists[0] if all(any(_same(c, d) for d in other) for other in lists[1:])]
    out = {EVERY: shared} if shared and len(per_variant) > 1 else {}
    for name, found in per_variant.items():
        own = [c for c in found if not any(_same(c, s) for s in out.get(EVERY, []))]
        if own:
            out[name] = own
    return out


def variant_changes(a: SweepResults, b: SweepResults) -> tuple[dict[str, Any], dict[str, Any]]:
    """(variants: added, removed and the common variants' config changes, models: their
    resolved model changes; both grouped as `grouped`)."""
    va, vb = _by_name(a), _by_name(b)
    common = [n for n in vb if n in va]
    config = {n: changes(_dict(va[n].get("config")), _dict(vb[n].get("config"))) for n in common}
    models = {n: changes(_dict(va[n].get("models")), _dict(vb[n].get("models"))) for n in common}
    variants = {"added": [n for n in vb if n not in va], "removed": [n for n in va if n not in vb],
                "config": grouped(config)}
    return variants, grouped(models)


def _stage_of(label: str) -> str:
    return label.split(":", 1)[0]


def _order(label: str) -> tuple[int, str]:
    stage = _stage_of(label)
    return (STAGE_NAMES.index(stage) if stage in STAGE_NAMES else len(STAGE_NAMES), label)


def stage_changes(a: SweepResults, b: SweepResults) -> dict[str, Any]:
    """Per common variant the stages whose key differs or that only one run has (in
    stage-graph order) and the first of them; `first`: the earliest over all variants
    (None: every stage of every common variant has the same key, so the same inputs)."""
    va, vb = _by_name(a), _by_name(b)
    by_variant: dict[str, Any] = {}
    firsts = []
    for name in (n for n in vb if n in va):
        ka, kb = _dict(va[name].get("stage_keys")), _dict(vb[name].get("stage_keys"))
        if not ka and not kb:
            continue
        labels = sorted({lb for lb in set(ka) | set(kb) if ka.get(lb) != kb.get(lb)}, key=_order)
        stages = list(dict.fromkeys(_stage_of(lb) for lb in labels))
        by_variant[name] = {"first": stages[0] if stages else None, "changed": stages}
        if stages:
            firsts.append(stages[0])
    first = min(firsts, key=_order) if firsts else None
    return {"first": first, "by_variant": by_variant, "recorded": bool(by_variant),
            "entered_by": [n for n, v in by_variant.items() if v["first"] == first] if first else []}


def input_stages() -> dict[str, str]:
    """The first stage (graph order) each experiment-level input enters: the data set's
    fingerprint, the questions, the tokenizer...; ablate's own version enters every
    stage's code, so the first."""
    out = {"code": STAGE_NAMES[0]}
    for sd in STAGES:
        for name in sd.experiment:
            out.setdefault(name, sd.name)
    return out


def input_entries(d: dict[str, Any]) -> list[dict[str, str]]:
    """The stage each changed experiment-level input enters first (input_stages): the
    data set, the questions, the tokenizer, ablate's version (its code)."""
    where = input_stages()
    found = [("data set", "data", d["data"]["fingerprints"], "dataset"),
             ("questions", "questions", d["data"]["fingerprints"], "questions"),
             ("tokenizer", "tokenizer", d["run"], "tokenizer"),
             ("ablate version", "code", d["versions"], "ablate")]
    return [{"input": label, "stage": where[name]} for label, name, cs, f in found
            if name in where and any(c["field"] == f for c in cs)]


def _questions(res: SweepResults) -> dict[str, Any] | None:
    """qid -> (question, answers, gold span texts, gold span ranges) from
    questions.parquet, None without it."""
    if res.evidence is None:
        return None
    return {q: (g.question, list(g.answers), [[(p.doc_id, p.text) for p in grp] for grp in g.evidence],
                [[(p.doc_id, p.start, p.end) for p in grp] for grp in g.evidence])
            for q, g in res.evidence.questions.items()}


# what differs in an edited question (its record, as the questions' fingerprint hashes it):
# its text, its answers, its gold spans ("evidence"), or only where they stand ("evidence
# offsets": the same text moved, e.g. by an edit earlier in the document). A gold span whose
# range is the same but whose text differs is a document's edit (document_changes).
def _edited_fields(x: tuple, y: tuple) -> list[str]:
    fields = [f for f, u, v in zip(("question", "answers"), x, y) if u != v]
    if x[3] != y[3]:
        fields.append("evidence" if x[2] != y[2] else "evidence offsets")
    return fields


def _qids(res: SweepResults) -> list[str]:
    return sorted(set(res.per_query["qid"].cast(str).to_list())) if "qid" in res.per_query.columns else []


def question_changes(a: SweepResults, b: SweepResults, notes: list[str]) -> dict[str, Any]:
    qa, qb = _questions(a), _questions(b)
    if qa is None or qb is None:
        ia, ib = set(_qids(a)), set(_qids(b))
        notes.append("edited questions cannot be told: "
                     f"{'neither folder' if qa is None and qb is None else 'one folder'} keeps "
                     "questions.parquet (an older sweep); questions compared by id only")
        return {"compared_from": "per_query.parquet", "added": sorted(ib - ia),
                "removed": sorted(ia - ib), "edited": [], "common": len(ia & ib)}
    edited = []
    for q in sorted(set(qa) & set(qb)):
        fields = _edited_fields(qa[q], qb[q])
        if fields:
            edited.append({"qid": q, "fields": fields})
    return {"compared_from": "questions.parquet", "added": sorted(set(qb) - set(qa)),
            "removed": sorted(set(qa) - set(qb)), "edited": edited, "common": len(set(qa) & set(qb))}


def _spans(res: SweepResults) -> dict[tuple[str, int, int], str]:
    """Every document range a folder keeps the text of: gold spans and context passages."""
    out: dict[tuple[str, int, int], str] = {}
    if res.evidence is None:
        return out
    for g in res.evidence.questions.values():
        for p in g.spans():
            out[(p.doc_id, p.start, p.end)] = p.text
    for passages in res.evidence.contexts.values():
        for p in passages:
            out[(p.doc_id, p.start, p.end)] = p.text
    return out


def _doc_hashes(res: SweepResults) -> dict[str, str] | None:
    frame = res.documents
    if frame is None or not {"doc_id", "sha256"} <= set(frame.columns):
        return None
    return dict(zip(frame["doc_id"].cast(str).to_list(), frame["sha256"].cast(str).to_list()))


def document_changes(a: SweepResults, b: SweepResults, data_changed: bool,
                     notes: list[str]) -> dict[str, Any]:
    ha, hb = _doc_hashes(a), _doc_hashes(b)
    if ha is not None and hb is not None:
        return {"compared_from": "documents.parquet", "added": sorted(set(hb) - set(ha)),
                "removed": sorted(set(ha) - set(hb)),
                "edited": sorted(d for d in set(ha) & set(hb) if ha[d] != hb[d])}
    sa, sb = _spans(a), _spans(b)
    common = set(sa) & set(sb)
    edited = sorted({r[0] for r in common if sa[r] != sb[r]})
    if data_changed:
        notes.append("which documents were added or removed cannot be told, and an edited "
                     "document is named only where both runs kept the same gold span or "
                     f"context passage of it ({len(common)} ranges compared): the folders "
                     "record the corpus's fingerprint and size, not each document's hash "
                     "(documents.parquet, written by newer sweeps)")
    return {"compared_from": "gold spans and contexts", "added": [], "removed": [], "edited": edited}


def data_changes(a: SweepResults, b: SweepResults, notes: list[str]) -> dict[str, Any]:
    ma, mb = a.manifest, b.manifest
    da, db = _dict(ma.get("dataset")), _dict(mb.get("dataset"))
    qa, qb = _dict(ma.get("questions")), _dict(mb.get("questions"))
    fps = changes({"dataset": da.get("fingerprint"), "questions": qa.get("fingerprint")},
                  {"dataset": db.get("fingerprint"), "questions": qb.get("fingerprint")})
    counts = changes({"documents": da.get("documents"), "questions in the data set": da.get("questions"),
                      "questions run": qa.get("total"), "answerable": qa.get("answerable"),
                      "path": da.get("path"), "format": da.get("format")},
                     {"documents": db.get("documents"), "questions in the data set": db.get("questions"),
                      "questions run": qb.get("total"), "answerable": qb.get("answerable"),
                      "path": db.get("path"), "format": db.get("format")})
    data_changed = any(c["field"] == "dataset" for c in fps)
    return {"fingerprints": fps, "counts": counts,
            "questions": question_changes(a, b, notes),
            "documents": document_changes(a, b, data_changed, notes)}


def plugin_changes(a: SweepResults, b: SweepResults, notes: list[str]) -> list[dict[str, Any]]:
    """Changes of the plugins' source digests the manifests record (`plugin_code`); a
    folder without that record: a note (a plugin's source enters the stage keys of the
    components it registers, so a changed key with nothing else changed points at it)."""
    pa, pb = a.manifest.get("plugin_code"), b.manifest.get("plugin_code")
    if isinstance(pa, dict) and isinstance(pb, dict):
        return changes(pa, pb)
    plugins = [_dict(r.manifest.get("settings")).get("plugins") for r in (a, b)]
    if any(plugins):
        notes.append("plugin code cannot be compared: a folder does not record its plugins' "
                     "source digests (plugin_code); their source is part of the stage keys, so "
                     "a stage key that changed with no config, data or version change points at it")
    return []


def diff_runs(a: SweepResults, b: SweepResults, labels: Sequence[str] = ("A", "B"),
              key: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything that differs between run `a` (old) and `b` (new), as JSON-ready data."""
    notes: list[str] = []
    ma, mb = a.manifest, b.manifest
    variants, models = variant_changes(a, b)

    def side(label: str, m: dict[str, Any]) -> dict[str, Any]:
        return {"folder": label, "sweep_id": m.get("sweep_id"), "experiment": m.get("experiment"),
                "created": m.get("created")}
    config = changes(_dict(ma.get("settings")), _dict(mb.get("settings")))
    out: dict[str, Any] = {
        "old": side(labels[0], ma), "new": side(labels[1], mb),
        # a run option the experiment file set (its seed, tier): said under config only
        "run": [c for c in changes({f: ma.get(f) for f in RUN_FIELDS if f in ma},
                                   {f: mb.get(f) for f in RUN_FIELDS if f in mb})
                if not any(_same(c, k) for k in config)],
        "config": config,
        "variants": variants,
        "data": data_changes(a, b, notes),
        "models": models,
        "versions": changes(_dict(ma.get("versions")), _dict(mb.get("versions"))),
        "plugin_code": plugin_changes(a, b, notes),
        "stages": stage_changes(a, b),
    }
    out["entries"] = input_entries(out)
    if not out["stages"]["recorded"]:
        notes.append("the folders record no stage keys (variants.json): where a config change "
                     "enters the stage graph cannot be told")
    rows = metric_rows(a, b, key)
    out["metrics"] = [r for r in rows if r["key"]]
    out["verdicts_moved"] = [r for r in rows if r["moved"]]
    out["notes"] = notes
    return out

