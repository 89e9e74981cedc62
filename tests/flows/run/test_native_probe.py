"""A native library is tried in a child process before a stage uses it: a crash there is
one line naming the stage, the library and what to do, never a dead sweep."""

import pytest

from ablate.components.contract.errors import RunFailed
from ablate.flows.run import native_probe


@pytest.fixture(autouse=True)
def state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(native_probe, "_SAFE", set())
    return tmp_path / "state"


def test_a_crash_in_the_child_is_one_line_naming_stage_library_and_remedy(monkeypatch, state_home):
    monkeypatch.setitem(native_probe.PROBES, "llama_cpp",
                        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    with pytest.raises(RunFailed) as info:
        native_probe.ensure_safe("llama_cpp", "generate abc123")
    line = info.value.one_line()
    assert "\n" not in line
    assert "stage generate abc123" in line and "llama_cpp" in line and "SIGSEGV" in line
    assert "generator.backend: torch" in line and "install.sh --llama-cpp" in line
    assert not list(state_home.rglob("*.ok"))  # a failure is not remembered: tried again


def test_a_failing_child_names_its_last_error_line(monkeypatch):
    monkeypatch.setitem(native_probe.PROBES, "onnxruntime", "raise SystemExit('bad build')")
    with pytest.raises(RunFailed, match="exit code 1.*bad build"):
        native_probe.ensure_safe("onnxruntime", "retrieve xyz")


def test_a_success_is_remembered_per_machine(monkeypatch, state_home):
    monkeypatch.setitem(native_probe.PROBES, "llama_cpp", "print('fine')")
    native_probe.ensure_safe("llama_cpp", "generate")
    assert len(list(state_home.rglob("llama_cpp-*.ok"))) == 1
    monkeypatch.setattr(native_probe, "_SAFE", set())  # a new process: the marker is enough
    monkeypatch.setitem(native_probe.PROBES, "llama_cpp", "raise SystemExit(3)")
    monkeypatch.setattr(native_probe, "_fingerprint", lambda library: "same")
    (state_home / "probes" / "llama_cpp-same.ok").write_text("ok\n")
    native_probe.ensure_safe("llama_cpp", "generate")  # not run again: no RunFailed


@pytest.mark.slow
def test_the_real_probes_pass_here(state_home):
    """The shipped probes, on this machine's builds of llama.cpp and onnxruntime."""
    for library in ("llama_cpp", "onnxruntime"):
        native_probe.ensure_safe(library, "test")
    assert len(list(state_home.rglob("*.ok"))) == 2


def test_only_stages_that_need_a_library_are_probed(tmp_path):
    from ablate.components.contract.config import PipelineConfig
    from ablate.components.pipeline import STAGES, resolve

    class Node:
        def __init__(self, cfg, stage):
            sd = next(s for s in STAGES if s.name == stage)
            self.config, self.resolved = cfg, resolve(cfg, sd.select(cfg, None))

    torch_cfg = PipelineConfig.model_validate({"generator": {"name": "smollm2"}})
    llama_cfg = PipelineConfig.model_validate(
        {"generator": {"name": "smollm2", "backend": "llama_cpp"}})
    assert native_probe.native_libraries(Node(torch_cfg, "generate")) == []
    assert native_probe.native_libraries(Node(llama_cfg, "generate")) == ["llama_cpp"]


def test_a_missing_package_is_not_read_as_a_crash_on_this_cpu(monkeypatch, state_home):
    """A library that is not installed (or whose probe fails on import) says so: not a
    test run that failed "on this CPU", and not remembered as a pass."""
    monkeypatch.setattr(native_probe.util, "find_spec", lambda name: None)
    monkeypatch.setitem(native_probe.PROBES, "llama_cpp", "raise SystemExit('never run')")
    with pytest.raises(RunFailed) as info:
        native_probe.ensure_safe("llama_cpp", "generate abc123")
    line = info.value.one_line()
    assert "stage generate abc123" in line and "llama_cpp is not installed" in line
    assert "CPU" not in line and "never run" not in line and "install.sh --llama-cpp" in line
    assert not list(state_home.rglob("*.ok"))


def test_an_import_error_in_the_probe_is_not_read_as_a_crash_on_this_cpu(monkeypatch):
    monkeypatch.setitem(native_probe.PROBES, "onnxruntime",
                        "raise ModuleNotFoundError(\"No module named 'onnx'\")")
    with pytest.raises(RunFailed) as info:
        native_probe.ensure_safe("onnxruntime", "retrieve xyz")
    line = info.value.one_line()
    assert "could not be imported" in line and "No module named 'onnx'" in line
    assert "on this CPU" not in line
