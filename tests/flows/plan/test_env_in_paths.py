"""`${VAR}` in an experiment file's paths (issue 39.9): read as a folder literally named
`${DATA}` before; now refused when the file loads, naming its line and field."""

from __future__ import annotations

import pytest

from tests.specs import data_set, vary, write_experiment


def _check(run_cli, capsys, spec) -> tuple[int, str]:
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    code = run_cli("check", str(spec))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("field,line,fields", [
    ("dataset.path", 2, {"dataset": data_set("${DATA}/squad.json")}),
    ("out", 3, {"out": "$HOME/runs"}),
    ("cache_dir", 3, {"cache_dir": "${XDG_CACHE_HOME}/ablate"}),
    ("questions.ids_file", 3, {"questions": {"ids_file": "${IDS}"}}),
])
def test_an_environment_variable_in_a_path_is_refused(run_cli, capsys, tmp_path, monkeypatch,
                                                      field, line, fields):
    monkeypatch.setenv("DATA", str(tmp_path))
    spec = write_experiment(tmp_path, "env-paths", **fields, sweeps=[vary("chunking.size", 32)])
    code, err = _check(run_cli, capsys, spec)
    assert code == 2, err
    assert err.startswith(f"ablate: error: {spec}:{line}: field '{field}': "), err
    assert "environment variables are not expanded in paths" in err
