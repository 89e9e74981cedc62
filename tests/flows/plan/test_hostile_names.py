"""Names and output paths that would write outside the project or fail after every stage
ran (issue 39.3, 39.4): refused by `ablate check` and `ablate run` before any stage, one
line naming the experiment file's line and field, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.specs import vary, write_experiment


def _check(run_cli, capsys, *argv: str) -> tuple[int, str]:
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    code = run_cli("check", *argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", ["../../../../elsewhere/x", "..", "a\\b", "x" * 300, "实验" * 40])
def test_a_name_that_is_not_one_folder_name_is_refused_at_check(run_cli, capsys, tmp_path, name):
    spec = write_experiment(tmp_path, name, sweeps=[vary("chunking.size", 32)])
    code, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 2, err
    assert err.startswith(f"ablate: error: {spec}:1: field 'name': "), err
    assert len(err.strip().splitlines()) == 1


def test_a_chinese_name_within_the_limit_is_accepted(run_cli, capsys, tmp_path):
    spec = write_experiment(tmp_path, "检索消融 实验", sweeps=[vary("chunking.size", 32)])
    code, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err


def test_an_out_that_is_a_file_is_refused_at_check(run_cli, capsys, tmp_path):
    (tmp_path / "taken").write_text("a file\n")
    spec = write_experiment(tmp_path, "out-file", out=str(tmp_path / "taken"),
                            sweeps=[vary("chunking.size", 32)])
    code, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 2, err
    assert err.startswith(f"ablate: error: {spec}:3: field 'out': the output root "), err
    assert "is a file, not a folder" in err
    spec = write_experiment(tmp_path, "out-file", sweeps=[vary("chunking.size", 32)])
    for out in (str(tmp_path / "taken" / "below"), str(tmp_path / ("y" * 300))):
        code, err = _check(run_cli, capsys, str(spec), "--out", out)
        assert code == 2 and err.startswith("ablate: error: field '--out': "), err


def test_run_refuses_an_out_file_before_any_stage(prefect_server, run_cli, capsys, tmp_path,
                                                  monkeypatch):
    from ablate.flows.run.context import forget_contexts
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file\n")
    spec = write_experiment(tmp_path, "out-file-run", out="taken",
                            sweeps=[vary("chunking.size", 32)])
    forget_contexts()
    code = run_cli("run", str(spec), "--cache-dir", str(tmp_path / "cache"), "--no-mlflow")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "field 'out': the output root 'taken' cannot hold sweep folders" in err
    assert not (tmp_path / "cache").exists()  # no stage ran


def test_an_unsafe_name_never_leaves_the_artifact_root(tmp_path):
    """Folders logged before names were checked (`ablate sync`) keep their artifacts
    under the artifact root too."""
    from ablate.flows.track.tracking import experiment_id

    class Client:
        def get_experiment_by_name(self, name):
            return None

        def create_experiment(self, name, artifact_location, tags):
            self.location = artifact_location
            return "1"

    client = Client()
    root = tmp_path / "artifacts"
    experiment_id(client, "../../../../elsewhere/x", str(root))
    where = Path(client.location)
    assert where.parent == root and where.name not in ("..", ".")
    experiment_id(client, "检索 实验", str(root))
    assert client.location == f"{root}/检索 实验"  # a safe name is kept as it is
