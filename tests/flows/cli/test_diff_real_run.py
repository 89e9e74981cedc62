"""`ablate diff` on a real sweep folder (run stage by stage in this process, with a
plugin metric) against a copy whose manifest and documents.parquet were edited: the
folder keeps each document's digest and each plugin component's source digest, and
the diff names the edited settings, versions, plugin code and documents; the stage keys
are the same, so it says no stage key changed."""

from __future__ import annotations

import json
import shutil

import polars as pl

from ablate.components.runtime.sweep_files import SweepFolder
from tests.conftest import registries_restored
from tests.flows.direct import run_direct
from tests.flows.outputs.test_recorded_directions import PLUGIN, SPEC


def test_real_run_against_an_edited_copy(tmp_path, run_cli, capsys):
    (tmp_path / "lowplug.py").write_text(PLUGIN)
    with registries_restored():
        _, a, _ = run_direct(tmp_path, SPEC)
    man = json.loads((a / "manifest.json").read_text())
    assert list(man["plugin_code"]) == ["metric:answer/wrong_words"]
    docs = pl.read_parquet(a / "documents.parquet")
    assert docs.height == man["dataset"]["documents"] and docs["doc_id"].is_unique().all()
    assert "documents.parquet" in man["files"]  # recorded: damage is seen

    b = tmp_path / "b"
    shutil.copytree(a, b)
    man["settings"]["baseline"]["context"]["budget"] += 1
    man["versions"]["polars"] = "0.0.1"
    man["plugin_code"]["metric:answer/wrong_words"] = "0" * 16
    (b / "manifest.json").write_text(json.dumps(man))
    first, second = docs["doc_id"][0], docs["doc_id"][1]
    edited = docs.filter(pl.col("doc_id") != second).with_columns(
        pl.when(pl.col("doc_id") == first).then(pl.lit("f" * 16)).otherwise(pl.col("sha256")).alias("sha256"))
    edited.write_parquet(b / "documents.parquet")
    SweepFolder(b).rerecord(["documents.parquet"])

    capsys.readouterr()
    assert run_cli("diff", str(a), str(b), "--out", str(tmp_path / "d.json")) == 0
    out = capsys.readouterr().out
    budget = man["settings"]["baseline"]["context"]["budget"]
    assert f"baseline.context.budget: {budget - 1} → {budget}" in out
    assert "polars:" in out and "→ 0.0.1" in out
    assert f"metric:answer/wrong_words: {json.loads((a / 'manifest.json').read_text())['plugin_code']['metric:answer/wrong_words']} → {'0' * 16}" in out
    assert f"documents removed (1): {second}" in out and f"documents edited (1): {first}" in out
    assert "no stage key changed" in out
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["stages"]["first"] is None and not d["verdicts_moved"]
    assert all(r["mean_old"] == r["mean_new"] for r in d["metrics"])
