"""`ablate diff`'s printed form of run_diff.diff_runs' data: one section per kind of
change (a section with nothing changed says so in one line), old → new throughout."""

from __future__ import annotations

import json
from typing import Any

from ablate.components.report.numbers import fmt, fmt_signed

MAX_IDS = 20
ABSENT = "(absent)"


def _value(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, default=str)


def change_line(c: dict[str, Any]) -> str:
    old = ABSENT if c.get("absent") == "old" else _value(c["old"])
    new = ABSENT if c.get("absent") == "new" else _value(c["new"])
    return f"{c['field']}: {old} → {new}"


def _ids(ids: list[Any]) -> str:
    shown = [str(i) for i in ids[:MAX_IDS]]
    more = f", … ({len(ids) - MAX_IDS} more)" if len(ids) > MAX_IDS else ""
    return ", ".join(shown) + more


def _section(title: str, items: list[str], none: str = "unchanged") -> list[str]:
    if not items:
        return [f"{title}: {none}"]
    return [f"{title}:"] + [f"  {line}" for line in items]


def _grouped(groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    return [f"{name}: {change_line(c)}" for name, found in groups.items() for c in found]


def _data(data: dict[str, Any]) -> list[str]:
    lines = [change_line({**c, "field": f"{c['field']} fingerprint"}) for c in data["fingerprints"]]
    lines += [change_line(c) for c in data["counts"]]
    q, d = data["questions"], data["documents"]
    for word, ids in (("added", q["added"]), ("removed", q["removed"])):
        if ids:
            lines.append(f"questions {word} ({len(ids)}): {_ids(ids)}")
    if q["edited"]:
        lines.append(f"questions edited ({len(q['edited'])}): "
                     + _ids([f"{e['qid']} ({', '.join(e['fields'])})" for e in q["edited"]]))
    for word in ("added", "removed", "edited"):
        if d[word]:
            lines.append(f"documents {word} ({len(d[word])}): {_ids(d[word])}")
    return lines


def _stages(stages: dict[str, Any], entries: list[dict[str, str]]) -> list[str]:
    enter = [f"changed input {e['input']} enters at: {e['stage']}" for e in entries]
    if not stages["recorded"]:
        return ["stages: not recorded (no stage keys in variants.json)"] + enter
    if stages["first"] is None:
        return ["stages: no stage key changed (every stage of every common variant had the "
                "same inputs, code and components)"] + enter
    lines = [f"first changed stage: {stages['first']} ({', '.join(stages['entered_by'])}): the "
             "first stage whose key differs, where the first changed input enters"]
    for name, v in stages["by_variant"].items():
        lines.append(f"  {name}: {' → '.join(v['changed']) if v['changed'] else 'no stage changed'}")
    return lines + enter


def _verdict(v: str | None) -> str:
    return "not compared" if v is None else v


def metric_lines(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        delta = ""
        if r["delta_old"] is not None or r["delta_new"] is not None:
            delta = (f"  Δ {fmt_signed(r['delta_old'])} → {fmt_signed(r['delta_new'])}"
                     f"  {_verdict(r['verdict_old'])} → {_verdict(r['verdict_new'])}")
        mark = "  MOVED" if r["moved"] else ""
        out.append(f"{r['variant']}  {r['metric']}  mean {fmt(r['mean_old'])} → "
                   f"{fmt(r['mean_new'])}{delta}{mark}")
    return out


def diff_text(d: dict[str, Any]) -> str:
    """The printed diff."""
    old, new = d["old"], d["new"]
    lines = [f"ablate diff: {old['folder']} ({old['sweep_id']}, {old['created']}) → "
             f"{new['folder']} ({new['sweep_id']}, {new['created']})"]
    lines += _section("run", [change_line(c) for c in d["run"]])
    lines += _section("config (experiment file)", [change_line(c) for c in d["config"]])
    v = d["variants"]
    items = [f"added: {_ids(v['added'])}"] if v["added"] else []
    items += [f"removed: {_ids(v['removed'])}"] if v["removed"] else []
    items += [f"{name}: {change_line(c)}" for name, found in v["config"].items() for c in found]
    lines += _section("variants", items)
    lines += _section("data", _data(d["data"]))
    lines += _section("model files", _grouped(d["models"]))
    lines += _section("library versions", [change_line(c) for c in d["versions"]])
    lines += _section("plugin code", [change_line(c) for c in d["plugin_code"]])
    lines += _stages(d["stages"], d["entries"])
    q = d["data"]["questions"]
    own = (f"; means over each run's own questions, {q['common']} in common"
           if q["added"] or q["removed"] else "")
    lines += _section(f"key metrics (mean; Δ against the baseline and verdict{own})",
                      metric_lines(d["metrics"]), none="none in both runs")
    others = [r for r in d["verdicts_moved"] if not r["key"]]
    lines += _section("other verdicts that moved", metric_lines(others), none="none")
    lines += [f"note: {n}" for n in d["notes"]]
    return "\n".join(lines) + "\n"
