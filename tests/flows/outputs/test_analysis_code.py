"""An unchanged re-run reuses the outputs in place only when the statistics and report
code that made them is the code running now (flows/outputs/analysis_code.py)."""

from __future__ import annotations

from ablate.flows.outputs.analysis_code import analysis_version
from tests.e2e.test_console import SPEC
from tests.flows.direct import run_direct


def test_version_follows_the_sources(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "one.py").write_text("y = 2\n")
    sources = ("pkg", "one.py")
    before = analysis_version(tmp_path, sources)
    assert analysis_version(tmp_path, sources) == before
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert analysis_version(tmp_path, sources) != before
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "b.py").write_text("")
    assert analysis_version(tmp_path, sources) != before


def test_new_analysis_code_means_the_outputs_are_made_again(tmp_path, monkeypatch):
    from ablate.flows.outputs.write import outputs_in_place
    ctx, folder, _ = run_direct(tmp_path, SPEC)
    assert outputs_in_place(ctx, tmp_path / "runs") == folder
    monkeypatch.setattr("ablate.flows.outputs.write.analysis_version", lambda: "0123456789abcdef")
    assert outputs_in_place(ctx, tmp_path / "runs") is None
