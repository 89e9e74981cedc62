"""A native library that crashes on this CPU, through the real Prefect flow and CLI: the
crash happens in the child process that tries the library before the stage runs it
(flows/run/native_probe.py), so the flow ends Failed with one line naming the stage, the
library and what to do, and the stages before it stay cached. The crash is a real
SIGSEGV, in a probe replaced for the test (the shipped build does not crash here)."""

from __future__ import annotations

from ablate.flows.run import native_probe
from tests.e2e.test_console import FIELDS as CONSOLE
from tests.flows.direct import write_spec
from tests.specs import experiment, pipeline

# the console test's tiny spec, its generator on the llama_cpp backend
SPEC = experiment("native-crash", **CONSOLE, baseline=pipeline(
    generator={"name": "smollm2", "backend": "llama_cpp", "max_new_tokens": 4}))
SEGFAULT = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"


def test_crashing_library_fails_the_run_in_one_line_and_keeps_the_cache(
        prefect_server, tmp_path, monkeypatch, run_cli, capsys):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from ablate.flows.run.context import RunOptions, build_context, forget_contexts
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(native_probe, "_SAFE", set())
    monkeypatch.setitem(native_probe.PROBES, "llama_cpp", SEGFAULT)
    spec = write_spec(tmp_path, SPEC)
    cache = tmp_path / "cache"
    forget_contexts()
    code = run_cli("run", str(spec), "--no-mlflow", "--cache-dir", str(cache),
                   "--out", str(tmp_path / "runs"))
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("ablate: error: ")]
    assert code == 1 and len(errors) == 1 and "Traceback" not in err, err
    line = errors[0]
    assert "stage generate" in line and "llama_cpp" in line and "SIGSEGV" in line
    assert "generator.backend: torch" in line
    assert not (tmp_path / "runs").exists()  # no half-written outputs

    # what ran before the crash is cached: chunking, retrieval and context are not redone
    ctx = build_context(str(spec), RunOptions(cache_dir=str(cache)))
    done = {n.stage for n in ctx.plan.nodes.values() if ctx.store.has(n.stage, n.key)}
    assert {"chunk", "retrieve", "assemble"} <= done and "generate" not in done

    with get_client(sync_client=True) as client:
        arts = [a for a in client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=["ablate-native-crash-failure"]))) if "SIGSEGV" in a.data]
        assert arts and client.read_flow_run(arts[0].flow_run_id).state.is_failed()

