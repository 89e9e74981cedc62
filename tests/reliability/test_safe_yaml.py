"""No experiment file can make ablate import or run code: Python YAML tags are refused by
the safe loader, and component names are looked up in registries, never imported."""

from __future__ import annotations

import pytest

from tests.reliability.test_malformed_inputs import S, _write

TOUCH = "touch PWNED"  # what the payloads would run; the test checks it never ran

CASES = [
    ("python-name", ("name: malformed", "name: !!python/name:os.system"), 1, None),
    ("python-module", ("name: malformed", "name: !!python/module:os"), 1, None),
    ("python-object-apply", ("name: malformed", f"name: !!python/object/apply:os.system ['{TOUCH}']"),
     1, None),
    ("python-object-new", ("smoke_size: 2", f"smoke_size: !!python/object/new:subprocess.Popen [['{TOUCH}']]"),
     3, None),
    ("tag-in-sweep-value", ("values: [10, 200]", f"values: [10, !!python/object/apply:os.system ['{TOUCH}']]"),
     13, None),
    ("generator-os-system", ("name: extractive", "name: os.system"), 10, "baseline.generator.name"),
    ("generator-dotted-import", ("name: extractive", "name: subprocess.run"), 10,
     "baseline.generator.name"),
    ("chunker-eval", ("{size: 32,", "{method: builtins.eval, size: 32,"), 5, "baseline.chunking.method"),
    ("fusion-exec", ("{rrf_k: 60}", "{method: builtins.exec, rrf_k: 60}"), 7, "baseline.fusion.method"),
    ("path-import-in-sweep", ("variable: fusion.rrf_k\n    values: [10, 200]",
                              "variable: retrieval.paths\n    values: [[os.system]]"), 13,
     "sweeps.0.values.0"),
]


@pytest.mark.parametrize("case,edit,line,field", CASES, ids=[c[0] for c in CASES])
def test_experiment_file_cannot_run_code(case, edit, line, field, tmp_path, capsys, monkeypatch):
    from ablate.flows import sweep
    from ablate.flows.cli import main as cli
    from ablate.flows.run.context import forget_contexts
    monkeypatch.setattr(sweep, "run_sweep", lambda *a, **k: pytest.fail(f"{case}: sweep started"))
    monkeypatch.chdir(tmp_path)
    spec = _write(tmp_path, edit, None, None)
    forget_contexts()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", str(spec), "--out", str(tmp_path / "runs"), "--no-mlflow"])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1, err
    assert f"{tmp_path / S}:{line}:" in err and "Traceback" not in err, err
    if field is None:
        assert "invalid YAML" in err and "constructor" in err, err
    else:
        assert f"field '{field}'" in err and "unknown" in err, err
    assert not (tmp_path / "PWNED").exists()
    assert not (tmp_path / "runs").exists()


def test_spec_loader_is_the_safe_loader(tmp_path, monkeypatch):
    """Direct check on ablate.flows.plan.spec: the tag is refused before any constructor runs."""
    from ablate.components.contract.errors import InputError
    from ablate.flows.plan.spec_load import load_spec
    p = tmp_path / "exp.yaml"
    p.write_text(f"name: !!python/object/apply:os.system ['{TOUCH}']\ndataset: {{path: x}}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        load_spec(p)
    assert info.value.line == 1 and not (tmp_path / "PWNED").exists()
