"""`ablate check`: validates spec and data, prints the plan (variants, unique stages and
how many are cached, questions per comparison, a time estimate from earlier runs), writes
nothing; `ablate validate` says when it is handed an experiment file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from tests.conftest import FIXTURES
from tests.specs import TINY_SQUAD, data_set, vary, write_experiment

# The layout of tests.specs puts the chunking.size sweep's values on line 15, an extra
# field (`questions`) on line 5 and the data set on line 2: the checks below name them.
SWEEPS = [vary("fusion.rrf_k", 60), vary("chunking.size", 32)]


def _spec(tmp_path: Path, data: str | None = None, format: str = "squad",
          sweeps: list | None = SWEEPS, **extra) -> Path:
    """The check-me experiment as tmp_path/exp.yaml; `extra` fields before the baseline."""
    return write_experiment(tmp_path, "check-me", dataset=data_set(data or TINY_SQUAD, format),
                            tier="full", split="all", **extra, sweeps=sweeps)


def _files(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


def _check(run_cli, capsys, *argv: str) -> tuple[int, str, str]:
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw Python warning may reach the user
        code = run_cli("check", *argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_printed_nothing_written(run_cli, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path)
    before = _files(tmp_path)
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert err == ""
    assert f"OK {spec}: experiment 'check-me', tier full, split all" in out
    assert "questions: 55 per comparison (" in out
    assert "in 3 clusters (by document; fewer than 10: only large effects can be decided)" in out
    assert "data set: 55 -> split all: 55 -> tier full: 55" in out
    assert "variants:  2\n  baseline\n  chunking.size=32  (line 15)\n" in out
    assert "stages:    " in out and "0 cached" in out
    assert "chunk 2 (0 cached)" in out
    assert "estimate:  no earlier runs with timings in runs;" in out
    # the value equal to the baseline is a notice, printed once, not a Python warning
    assert out.count("notice: ") == 1 and "fusion.rrf_k=60 equals the baseline; dropped" in out
    assert _files(tmp_path) == before


def test_cached_stages_and_estimate_from_an_earlier_run(run_cli, capsys, tmp_path, monkeypatch):
    """Run the baseline's stages for real (no Prefect), write its outputs, then check a
    spec with one more variant: the cache holds the baseline's stages and the estimate
    comes from the earlier run's manifest."""
    from ablate.flows.outputs.write import write_outputs
    from ablate.flows.run.context import RunOptions, build_context, forget_contexts
    from ablate.flows.run.stages import run_stage
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, sweeps=None)  # the baseline alone
    ctx = build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "cache")))
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    sweep_dir = write_outputs(ctx, tmp_path / "runs", ctx.started, {})
    man = json.loads((sweep_dir / "manifest.json").read_text())
    by = man["stages"]["by_component"]
    assert set(by) >= {"chunk:token_window", "retrieve:bm25+default", "generate:extractive"}
    assert all(v["computed"] == 1 and v["seconds"] >= 0 for v in by.values())
    # units of work: the documents a chunk stage chunked, the questions the others ran on
    assert by["chunk:token_window"]["units"] == man["dataset"]["documents"]
    assert by["generate:extractive"]["units"] == man["questions"]["total"]
    forget_contexts()
    _spec(tmp_path)  # baseline + chunking.size=32
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    n_base = len(ctx.plan.nodes)
    assert f", {n_base} cached in {tmp_path / 'cache'}" in out
    assert "chunk 2 (1 cached)" in out
    assert "(rates from 1 earlier run on this data set in runs)" in out
    assert "estimate:  about " in out and "without a rate" not in out


def test_everything_cached_says_nothing_to_compute(run_cli, capsys, tmp_path, monkeypatch):
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path)
    ctx = build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "cache")))
    for node in ctx.plan.nodes.values():
        run_stage(ctx, node)
    code, out, _ = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0 and "nothing to compute (every stage is cached)" in out


def test_estimate_uses_component_rates_never_another_components():
    from ablate.flows.plan.estimate import estimate, rates
    man = {"dataset": {"fingerprint": "f", "documents": 10}, "questions": {"total": 100},
           "stages": {"by_component": {"chunk:token_window": {"computed": 2, "seconds": 4.0},
                                       "generate:smollm2": {"computed": 1, "seconds": 200.0},
                                       "generate:extractive": {"computed": 1, "seconds": 2.0}}}}
    other = json.loads(json.dumps(man))
    other["dataset"]["fingerprint"] = "g"
    other["stages"]["by_component"]["generate:smollm2"]["seconds"] = 1000.0
    r = rates([man, other], "f")
    assert r.runs == 1 and r.same_data  # the run on other data is not used
    est = estimate(["chunk:sentence", "generate:smollm2", "generate:closed_book", "score:x"], r,
                   documents=20, questions=50)
    # smollm2: 2 s per question x 50; the sentence chunker, the closed_book generator and
    # score ran in no earlier run: unknown, not priced at another component's rate (the
    # generate stages pooled would give closed_book 50.5 s)
    assert est.seconds == pytest.approx(100.0)
    assert est.estimated == 1
    assert est.unknown == ("chunk:sentence", "generate:closed_book", "score:x")
    assert rates([other], "f").same_data is False


def test_estimate_per_question_each_stage_ran_on():
    """A stage's recorded units (the 50 questions of a sweep on its own tier, of a run on
    500) make its rate; estimate_work prices each stage at its own questions."""
    from ablate.flows.plan.estimate import estimate_work, rates
    man = {"dataset": {"fingerprint": "f", "documents": 10}, "questions": {"total": 500},
           "stages": {"by_component": {
               "generate:smollm2": {"computed": 1, "seconds": 100.0, "units": 50}}}}
    r = rates([man], "f")
    est = estimate_work([("generate:smollm2", 50), ("generate:smollm2", 500)], r)
    assert est.seconds == pytest.approx(100.0 + 1000.0) and est.estimated == 2


def test_estimate_from_a_manifest_without_component_timings():
    """Manifests written before per-component timings give per-stage rates."""
    from ablate.flows.plan.estimate import estimate, rates
    old = {"dataset": {"fingerprint": "f", "documents": 10}, "questions": {"total": 100},
           "stages": {"run": {"generate": {"computed": 2, "reused": 0}},
                      "seconds": {"generate": 40.0}}}
    r = rates([old], "f")
    assert r.runs == 1 and not r.by_key
    est = estimate(["generate:smollm2"], r, documents=10, questions=50)
    assert est.seconds == pytest.approx(10.0) and est.estimated == 1


def test_unknown_id_in_ids_file_points_at_its_line(run_cli, capsys, tmp_path):
    from ablate.components.data import load_dataset
    first = load_dataset(FIXTURES / "squad_tiny.json").questions[0].qid
    (tmp_path / "ids.txt").write_text(f"{first}\n\nno-such-question\n")
    spec = _spec(tmp_path, questions={"ids_file": "ids.txt"})
    code, out, err = _check(run_cli, capsys, str(spec))
    assert code == 2 and out == ""
    assert err.strip() == (f"ablate: error: {tmp_path / 'ids.txt'}:3: question id "
                           "'no-such-question' is not in the data set")


def test_missing_ids_file_points_at_the_spec_field(run_cli, capsys, tmp_path):
    spec = _spec(tmp_path, questions={"ids_file": "nowhere.txt"})
    code, _, err = _check(run_cli, capsys, str(spec))
    assert code == 2 and err.startswith(f"ablate: error: {spec}:5: field 'questions.ids_file': "
                                        "no such file")


def test_ids_file_and_answerable_only_select_the_questions(run_cli, capsys, tmp_path):
    from ablate.components.data import load_dataset
    qs = load_dataset(FIXTURES / "squad_tiny.json").questions
    chosen = qs[::4][:12]  # from every article: one article would be one cluster (an error)
    (tmp_path / "ids.txt").write_text("\n".join(q.qid for q in chosen) + "\n")
    spec = _spec(tmp_path, questions={"ids_file": "ids.txt", "answerable_only": True})
    code, out, err = _check(run_cli, capsys, str(spec))
    n = sum(q.answerable for q in chosen)
    assert code == 0, err
    assert f"questions: {n} per comparison ({n} answerable, 0 unanswerable" in out
    assert f"ids_file (12 listed): 12 -> answerable_only: {n} -> tier full: {n}" in out


def test_missing_dataset_path_points_at_the_spec_field(run_cli, capsys, tmp_path):
    spec = _spec(tmp_path, data="no/such/data.json")
    code, _, err = _check(run_cli, capsys, str(spec))
    assert code == 2
    assert err.strip() == (f"ablate: error: {spec}:2: field 'dataset.path': no such file or "
                           f"folder: {tmp_path / 'no/such/data.json'}")


def test_dataset_path_of_the_wrong_kind_points_at_the_spec_field(run_cli, capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    _spec(tmp_path, data="notes.txt", format="auto")
    code, _, err = _check(run_cli, capsys, str(tmp_path / "exp.yaml"))
    assert code == 2 and f"{tmp_path / 'exp.yaml'}:2: field 'dataset.path': a file data set" in err


def test_selection_is_part_of_the_sweep_identity(tmp_path):
    from ablate.flows.outputs.write import sweep_id
    from ablate.flows.run.context import RunOptions, build_context
    ids = {}
    for name, extra in (("plain", {}), ("share", {"split_share": 0.5}),
                        ("answerable", {"questions": {"answerable_only": True}}),
                        ("max", {"questions": {"max": 20}})):
        folder = tmp_path / name
        folder.mkdir()
        ctx = build_context(str(_spec(folder, **extra)), RunOptions(cache_dir=str(tmp_path / "c")))
        ids[name] = (sweep_id(ctx), ctx.questions_fp)
    assert len({v[0] for v in ids.values()}) == 4
    assert len({v[1] for v in ids.values()}) == 3  # split all: split_share selects the same questions


def test_validate_says_an_experiment_file_is_not_a_data_set(run_cli, capsys, tmp_path):
    spec = _spec(tmp_path)
    code = run_cli("validate", str(spec))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.strip() == (f"ablate: error: {spec}: this is an experiment file, not a data set; "
                           f"`ablate validate` checks data sets: check an experiment with "
                           f"`ablate check {spec}`")


def test_one_cluster_for_every_question_is_one_line_at_check_time(run_cli, capsys, tmp_path):
    one = json.loads(TINY_SQUAD.read_text())
    one["data"] = one["data"][:1]  # one article: every question in one cluster
    (tmp_path / "one.json").write_text(json.dumps(one))
    spec = _spec(tmp_path, data=str(tmp_path / "one.json"))
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "field 'stats.cluster': every question is in one cluster ('" in err
    assert "use stats.cluster: none" in err
    spec.write_text(spec.read_text().replace("tier: full", "tier: full\nstats: {cluster: none}"))
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert "independent questions (stats.cluster: none)" in out


def test_a_cluster_field_some_questions_lack_is_one_line(run_cli, capsys, tmp_path):
    spec = _spec(tmp_path)
    spec.write_text(spec.read_text().replace("tier: full", "tier: full\nstats: {cluster: type}"))
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "has no 'type' field (55 of 55 lack it)" in err


# ---- key metrics the pipeline cannot produce; candidates/reranked @k across chunkings ------

NO_ANSWER = "it needs the generate stage, which generator.name: none leaves out"


def _keyed(tmp_path: Path, key: list[str] | None, baseline: dict, sweeps: list) -> Path:
    """An experiment with `metrics.key` on line 5 (None: the default key metrics)."""
    from tests.specs import pipeline
    return write_experiment(tmp_path, "keyed", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", metrics=None if key is None else {"key": key},
                            baseline=pipeline(**baseline), sweeps=sweeps)


def test_a_key_metric_no_variant_produces_is_a_warning_in_check_and_run_refuses(
        run_cli, capsys, tmp_path):
    spec = _keyed(tmp_path, ["answer/f1", "reranked/recall_at_5"], {"generator": {"name": "none"}},
                  [vary("rerank.depth", 4)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert f"warning: key metric answer/f1: no variant produces it ({NO_ANSWER})\n" in out
    assert "reranked/recall_at_5:" not in out  # every variant produces it
    # run: one line naming the key metric and why, exit 2, before any stage runs
    code = run_cli("run", str(spec), "--no-mlflow", "--cache-dir", str(tmp_path / "cache"),
                   "--out", str(tmp_path / "runs"))
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    assert err.strip() == (f"ablate: error: {spec}:5: field 'metrics.key': key metric answer/f1: "
                           f"no variant produces it ({NO_ANSWER}); remove it from metrics.key "
                           "or configure a pipeline that produces it")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()
    # a deployment runs the flow itself: it refuses the same way, before any stage
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import sweep_flow
    forget_contexts()
    with pytest.raises(InputError, match="key metric answer/f1: no variant produces it"):
        sweep_flow.fn(str(spec), out=str(tmp_path / "runs"), cache_dir=str(tmp_path / "cache"),
                      mlflow=False)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_a_key_metric_some_variants_do_not_produce_names_them(run_cli, capsys, tmp_path):
    spec = _keyed(tmp_path, ["answer/f1", "reranked/recall_at_5"], {},
                  [vary("generator.name", "none"), vary("rerank.depth", 4)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert (f"warning: key metric answer/f1: 1 of 3 variants do not produce it "
            f"(generator.name=none: {NO_ANSWER})\n") in out


def test_default_key_metrics_no_variant_produces_are_named_as_defaults(run_cli, capsys, tmp_path):
    """Unset metrics.key: the defaults a retrieval-only pipeline cannot produce are a
    warning in check, never a reason for run to refuse."""
    from ablate.flows.plan.producible import refusal
    from ablate.flows.run.context import RunOptions, build_context
    spec = _keyed(tmp_path, None, {"generator": {"name": "none"}}, [vary("rerank.depth", 4)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert (f"warning: key metric answer/f1 (a default: metrics.key is not set): no variant "
            f"produces it ({NO_ANSWER})\n") in out
    assert refusal(build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "c")))) is None


def test_candidates_at_k_across_chunk_sizes_is_a_warning(run_cli, capsys, tmp_path):
    spec = _keyed(tmp_path, ["candidates/recall_at_5", "reranked/ndcg_at_5", "answer/f1"], {},
                  [vary("chunking.size", 32, 128), vary("rerank.depth", 4)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    warned = [x for x in out.splitlines() if "k chunks" in x]
    assert warned == ["warning: candidates/recall_at_5, reranked/ndcg_at_5 compare k chunks of "
                      "different sizes across chunking.size=32..128: not the same number of "
                      "tokens; final/* compares them under one token budget (context.budget 96)"]


def test_a_variant_that_changes_the_budget_too_is_not_called_one_budget(run_cli, capsys, tmp_path):
    from tests.specs import pipeline
    spec = write_experiment(tmp_path, "keyed", dataset=data_set(TINY_SQUAD), tier="full",
                            split="all", metrics={"key": ["candidates/recall_at_5"]},
                            baseline=pipeline(),
                            variants=[{"name": "big", "set": {"chunking.size": 128,
                                                              "context.budget": 192}}])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    warned = next(x for x in out.splitlines() if "k chunks" in x)
    assert "one token budget" not in warned
    assert warned.endswith("final/* does not compare them on equal text either: these variants "
                           "change the token budget too (context.budget 96, 192)"), warned


def test_rankings_at_k_across_chunkings_are_a_warning_without_such_key_metrics(
        run_cli, capsys, tmp_path):
    spec = _keyed(tmp_path, ["answer/f1"], {}, [vary("chunking.size", 32)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert ("warning: candidates/*@k, reranked/*@k metrics compare k chunks of different sizes "
            "across chunking.size=32..48: not the same number of tokens; final/* compares them "
            "under one token budget (context.budget 96)\n") in out
    # one chunking: no such line
    spec = _keyed(tmp_path, ["candidates/recall_at_5"], {}, [vary("rerank.depth", 4)])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0 and "k chunks" not in out


def test_a_folder_instead_of_an_experiment_file_is_one_line(run_cli, capsys, tmp_path):
    for command in ("check", "power"):
        assert run_cli(command, str(tmp_path)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "a folder, not an experiment file" in err, err


def test_generation_without_an_earlier_run_is_priced_at_the_generators_declared_prior(
        run_cli, capsys, tmp_path, monkeypatch):
    """Issue 54: `check` priced embedding but not generation (525 s of a 1,080 s run). A
    local generator declares a calibrated prior (seconds per question plus per prompt
    token); with no earlier run's rate its stages are priced at it, the line naming it a
    calibrated prior; the extractive generator declares none and stays unknown."""
    from ablate.components.generation.base import GENERATORS
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, sweeps=[vary("generator.name", "smollm2", "closed_book")])
    code, out, err = _check(run_cli, capsys, str(spec), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    prior = GENERATORS.declaration("smollm2").info["prior"]
    assert GENERATORS.declaration("closed_book").info["prior"] == prior
    per_q = prior["per_question"] + prior["per_prompt_token"] * (prior["prompt_overhead"] + 96)
    closed = prior["per_question"] + prior["per_prompt_token"] * prior["prompt_overhead"]
    from ablate.flows.plan.estimate import duration
    line = next(ln for ln in out.splitlines() if ln.startswith("generation:"))
    assert line.startswith(f"generation: about {duration(55 * (per_q + closed))} for 2 stages "
                           "(generate:closed_book, generate:smollm2) at a calibrated prior")
    assert "no earlier run's rate" in line
    # the stages nothing is known of are still named, generation no longer among them
    est = next(ln for ln in out.splitlines() if ln.startswith("estimate:"))
    assert "generate:smollm2" not in est and "generate:closed_book" not in est


def test_a_planned_gate_margin_the_run_cannot_prove_is_a_warning(run_cli, capsys, tmp_path,
                                                                monkeypatch):
    """Issue 54: `check` did not warn that the gate's margin is below what the data can
    prove. With --gate-max-drop and an earlier sweep of the experiment (the pilot), each
    gated metric whose smallest provable drop at this plan's questions is above the
    margin is a warning line, with the questions it needs and the data set's."""
    from tests.components.report.synthetic import make_sweep
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path)
    code, out, err = _check(run_cli, capsys, str(spec), "--gate-max-drop", "0.02")
    assert code == 0, err
    assert "note: gate: no earlier sweep of this experiment" in out  # no pilot yet
    pilot = make_sweep(tmp_path / "runs" / "check-me-0123", name="check-me")  # 30 questions
    man = json.loads((pilot / "manifest.json").read_text())
    man["statistics"]["cluster"] = "none"  # its 5 documents are too few to bound anything
    (pilot / "manifest.json").write_text(json.dumps(man))
    code, out, err = _check(run_cli, capsys, str(spec), "--gate-max-drop", "0.005",
                            "--gate-metric", "final/recall_at_5")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("warning: gate:"))
    # the pilot's largest margin (0.0106 at its 30 questions) at this plan's 55: 0.008
    assert ("a drop of 0.005 in final/recall_at_5 is below what 55 questions can prove (about "
            "0.008, from the variants of the earlier sweep check-me-0123, 24 questions in 24 "
            "clusters): the gate cannot pass, at best inconclusive; it needs ~135 questions, "
            "more than the 55 of the data set") in line
    code, out, err = _check(run_cli, capsys, str(spec), "--gate-max-drop", "0.05",
                            "--gate-metric", "final/recall_at_5")
    assert code == 0 and "gate:" not in out  # a margin this plan can prove: nothing to say
