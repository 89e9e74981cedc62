"""A damaged file in a finished sweep folder (issue 58.1-2): 64 bytes inverted in an
output. The unchanged-rerun shortcut does not take such a folder for in place (the run
writes it again); every command reading the folder names the file and the command that
writes it again in one line, exit 2, never a traceback; `ablate report` writes its own
damaged files again and leaves no damaged one beside a fresh report. A real 2 x 2
factorial sweep (every output file, worth.parquet too), stages run directly."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from ablate.components.runtime.sweep_files import SweepFolder

# SPEC: the shared `sweep` fixture runs it
from tests.flows.outputs.test_factorial_sweep import SPEC  # noqa: F401

DATA = ["per_query.parquet", "stats.parquet", "worth.parquet", "factorial.parquet",
        "timings.parquet", "questions.parquet", "contexts.parquet", "documents.parquet",
        "variants.json"]
REPORT = ["report.md", "report.html", "summary.txt", "plots/worth.svg"]
VARIANT = "chunking.size=96"


def _copy(sweep, tmp_path: Path) -> Path:
    _, folder, _ = sweep
    out = tmp_path / "runs" / folder.name
    shutil.copytree(folder, out)
    return out


def damage(path: Path) -> None:
    """Invert 64 bytes in the middle of the file (as the fault audit did)."""
    data = bytearray(path.read_bytes())
    mid = max(0, len(data) // 2 - 32)
    for i in range(mid, min(mid + 64, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", DATA + REPORT + ["manifest.json"])
def test_a_damaged_output_is_not_in_place(sweep, tmp_path, name):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, _, _ = sweep
    folder = _copy(sweep, tmp_path)
    assert outputs_in_place(ctx, folder.parent) == folder  # intact: reused
    damage(folder / name)
    assert outputs_in_place(ctx, folder.parent) is None  # damaged: written again


def test_a_missing_recorded_output_is_not_in_place(sweep, tmp_path):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, _, _ = sweep
    folder = _copy(sweep, tmp_path)
    (folder / "plots" / "worth.svg").unlink()
    assert outputs_in_place(ctx, folder.parent) is None


def test_the_rerun_writes_the_damaged_folder_again(sweep, tmp_path):
    from ablate.flows.outputs.write import outputs_in_place, write_outputs
    ctx, _, _ = sweep
    folder = _copy(sweep, tmp_path)
    before = (folder / "worth.parquet").read_bytes()
    damage(folder / "worth.parquet")
    assert write_outputs(ctx, folder.parent, time.time(), {}) == folder
    assert (folder / "worth.parquet").read_bytes() == before
    assert "worth.parquet" in SweepFolder(folder).recorded()
    assert SweepFolder(folder).damaged_files() == []
    assert outputs_in_place(ctx, folder.parent) == folder


def _command(sweep, command: str, folder: Path, tmp_path: Path) -> list[str]:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    intact = tmp_path / "intact"
    if command in ("gate-reference", "diff"):  # the damaged folder is the reference / B
        shutil.copytree(sweep[1], intact)
    return {
        "report": ["report", str(folder)],
        "explain": ["explain", str(folder), "--variant", VARIANT],
        "diff": ["diff", str(intact), str(folder)],
        "gate": ["gate", str(folder), "--metric", "answer/f1", "--max-drop", "0.1"],
        "gate-reference": ["gate", str(intact), "--reference", str(folder),
                           "--metric", "answer/f1", "--max-drop", "0.1"],
        "sync": ["sync", str(folder), "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
        "export": ["export", str(folder), "--out", str(tmp_path / "trec")],
        "plan-labels": ["judge", "plan-labels", str(folder), "--labels", str(labels),
                        "--half-width", "0.1"],
        "gold-labels": ["judge", "gold-labels", str(folder), "--out", str(tmp_path / "g.jsonl")],
        "stats": ["stats", str(folder / "per_query.parquet"), "--baseline", "baseline",
                  "--resamples", "100", "--bootstrap-resamples", "100"],
    }[command]


# what each command reads of the folder (the damage it must name)
READS = {
    "report": ["manifest.json", *DATA],
    "explain": ["manifest.json", *DATA],
    "diff": ["manifest.json", *DATA],
    "gate": ["manifest.json", "variants.json", "per_query.parquet", "stats.parquet"],
    "gate-reference": ["manifest.json", "per_query.parquet"],
    "sync": ["manifest.json", "variants.json", "per_query.parquet", "stats.parquet"],
    "export": ["manifest.json", "variants.json"],
    "plan-labels": ["manifest.json", "per_query.parquet"],
    "gold-labels": ["manifest.json", "variants.json", "per_query.parquet"],
    "stats": ["per_query.parquet"],
}
CASES = [(command, name) for command, names in READS.items() for name in names]


@pytest.mark.parametrize(("command", "name"), CASES, ids=[f"{c}-{n}" for c, n in CASES])
def test_a_reader_names_the_damaged_file_and_its_repair(sweep, tmp_path, run_cli, capsys,
                                                         command, name):
    _, _, spec = sweep
    folder = _copy(sweep, tmp_path)
    report = (folder / "report.md").read_bytes()
    damage(folder / name)
    capsys.readouterr()
    assert run_cli(*_command(sweep, command, folder, tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"ablate: error: {folder / name}: damaged: rerun ablate run"), err[0]
    if name != "manifest.json":  # the manifest names the experiment and its options
        assert f"ablate run {spec} --out {folder.parent}" in err[0], err[0]
    assert (folder / "report.md").read_bytes() == report  # no fresh report beside it


@pytest.mark.parametrize("name", REPORT)
def test_report_writes_its_own_damaged_files_again(sweep, tmp_path, run_cli, name):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, _, _ = sweep
    folder = _copy(sweep, tmp_path)
    damage(folder / name)
    assert run_cli("report", str(folder)) == 0
    assert name in SweepFolder(folder).recorded()
    assert SweepFolder(folder).damaged_files() == []
    assert outputs_in_place(ctx, folder.parent) == folder  # the record follows the report


def test_report_leaves_no_damaged_file_it_did_not_write(sweep, tmp_path, run_cli, capsys):
    folder = _copy(sweep, tmp_path)
    damage(folder / "plots" / "worth.svg")
    assert run_cli("report", str(folder), "--no-plots") == 0
    assert SweepFolder(folder).damaged_files() == []
    assert not (folder / "plots" / "worth.svg").exists()
    assert "plots/worth.svg" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["report.md", "plots/worth.svg"])
def test_sync_logs_no_damaged_report_file(sweep, tmp_path, run_cli, capsys, name):
    """`ablate sync` copies the report and plots to MLflow: a damaged one is named first."""
    folder = _copy(sweep, tmp_path)
    damage(folder / name)
    capsys.readouterr()
    assert run_cli(*_command(sweep, "sync", folder, tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ablate: error: {folder / name}: damaged: rerun ablate report {folder} to "
                   "write it again (its sha256 differs from the manifest's record)"]
    assert not (tmp_path / "mlflow.db").exists()


def test_a_reference_of_the_four_signed_off_files_reads(sweep, tmp_path):
    """A gate reference is the four files experiments/references/README.md names; the
    manifest records the rest of the sweep folder, which a reference leaves out: those are
    absent, not damaged (a damaged one of the four still is)."""
    from ablate.components.report.sweep_data import load_sweep
    _, folder, _ = sweep
    ref = tmp_path / "reference"
    ref.mkdir()
    for name in ("manifest.json", "variants.json", "per_query.parquet", "stats.parquet"):
        shutil.copy(folder / name, ref / name)
    got = load_sweep(ref)
    assert got.timings is None and got.worth is None and got.per_query.height
    damage(ref / "stats.parquet")
    with pytest.raises(Exception, match="stats.parquet.*damaged|damaged.*stats"):
        load_sweep(ref)
