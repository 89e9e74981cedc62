"""The sweep-level ETA line (flows/run/sweep_eta.py; issue 42, item 6) counts what costs: a
stage without a rate is counted at what this run saw for stages doing the same work (its
timing key, e.g. `generate:smollm2`), never at another component's seconds, and a stage
nothing real is known of is named as not estimated rather than counted as ~0. Fakes only:
no model, no Prefect, nothing timed."""

from __future__ import annotations

from types import SimpleNamespace

from ablate.flows.run.sweep_eta import SweepEta


def _node(key: str, stage: str, component: str) -> SimpleNamespace:
    return SimpleNamespace(key=key, stage=stage, inputs={}, questions=None,
                           resolved=SimpleNamespace(names=(component,), reads=(), components=()))


def _ctx(tmp_path, nodes: list[SimpleNamespace]) -> SimpleNamespace:
    return SimpleNamespace(
        plan=SimpleNamespace(nodes={n.key: n for n in nodes}),
        store=SimpleNamespace(has=lambda stage, key, use=True: False, root=tmp_path / "cache"),
        spec=SimpleNamespace(out=tmp_path / "runs"),  # no earlier run: no rates at all
        dataset=SimpleNamespace(fingerprint="f", documents=("d",) * 20),
        questions=("q",) * 50, question_sets={})


def test_cheap_generator_seconds_never_stand_in_for_a_local_llm(tmp_path):
    """The cold demo: the extractive generator's stages finish first (a fraction of a
    second each) while SmolLM2's are still to run; nothing has a rate."""
    nodes = ([_node(f"x{i}", "generate", "extractive") for i in range(3)]
             + [_node(f"s{i}", "generate", "smollm2") for i in range(2)])
    said: list[str] = []
    eta = SweepEta(_ctx(tmp_path, nodes), say=said.append)
    eta.finished("x0", True, 0.2)
    # before: "about 1 s of stage compute left for 4 stages" (0.2 s x 4)
    assert said[-1] == ("sweep ETA: about 0 s of stage compute left for 2 stages; "
                        "2 more without a rate yet (generate:smollm2)")
    eta.finished("x1", True, 0.2)
    eta.finished("s0", True, 120.0)  # one SmolLM2 stage seen: the other counts as much
    assert said[-1] == "sweep ETA: about 2.0 min of stage compute left for 2 stages"
    eta.finished("x2", True, 0.2)  # the same 2.0 min left: no line saying it again
    assert said[-1] == "sweep ETA: about 2.0 min of stage compute left for 2 stages"
    assert len(said) == 2


def test_an_unchanged_line_is_not_repeated_until_a_minute_has_passed(tmp_path):
    """Issue 54: 57 cheap stages finished one after another while SmolLM2's 2 waited, and
    each printed "2 more without a rate yet". The line is said again only when what it says
    changes (time left, stages without a rate), or after REPEAT_AFTER seconds."""
    from ablate.flows.run.sweep_eta import REPEAT_AFTER
    nodes = ([_node(f"x{i}", "generate", "extractive") for i in range(57)]
             + [_node(f"s{i}", "generate", "smollm2") for i in range(2)])
    said: list[str] = []
    now = [0.0]
    eta = SweepEta(_ctx(tmp_path, nodes), say=said.append, clock=lambda: now[0])
    for i in range(56):
        now[0] += 0.1
        eta.finished(f"x{i}", True, 0.001)
    assert said == ["sweep ETA: about 0 s of stage compute left for 56 stages; "
                    "2 more without a rate yet (generate:smollm2)"]
    now[0] += REPEAT_AFTER
    eta.finished("x56", True, 0.001)  # a minute on: once more, as a sign of life
    assert len(said) == 2 and said[-1].endswith("2 more without a rate yet (generate:smollm2)")
    eta.finished("s0", True, 120.0)  # what it says changed: at once
    assert len(said) == 3 and said[-1] == ("sweep ETA: about 2.0 min of stage compute left "
                                           "for 1 stages")


def test_a_declared_prior_prices_a_stage_no_earlier_run_has_a_rate_for(tmp_path):
    """Issue 54: a local generator's declared prior (flows/plan/generation_prior.py) counts
    its stages from the first line on, at its context's budget (the assemble input's)."""
    prior = {"per_question": 0.2, "per_prompt_token": 0.001, "prompt_overhead": 100}
    decl = SimpleNamespace(info={"prior": prior}, reads_context=True)
    gen = [_node(f"s{i}", "generate", "smollm2") for i in range(2)]
    ctx_node = SimpleNamespace(key="a", stage="assemble", inputs={}, questions=None,
                               config=SimpleNamespace(context=SimpleNamespace(budget=400)),
                               resolved=SimpleNamespace(names=("budget",), reads=(), components=()))
    for n in gen:
        n.resolved.components, n.inputs = (decl,), {"assemble": "a"}
    said: list[str] = []
    eta = SweepEta(_ctx(tmp_path, [ctx_node, *gen]), say=said.append)
    assert eta.guess["s0"] == eta.guess["s1"] == 50 * (0.2 + 0.001 * 500)  # 35 s each
    eta.finished("a", True, 0.1)
    assert said[-1] == "sweep ETA: about 70 s of stage compute left for 2 stages"


def _tiers(tmp_path, nodes):
    """The demo's shape: the baseline on 500 questions, the generator sweep on its 50."""
    ctx = _ctx(tmp_path, nodes)
    ctx.questions, ctx.question_sets = ("q",) * 500, {"smoke": ("q",) * 50}
    return ctx


def test_seconds_seen_are_per_question_of_each_stage(tmp_path):
    """SmolLM2 seen on the 50-question tier counts ten times as much on 500."""
    small, large = _node("s50", "generate", "smollm2"), _node("s500", "generate", "smollm2")
    small.questions = "smoke"
    said: list[str] = []
    eta = SweepEta(_tiers(tmp_path, [small, large, _node("x", "generate", "extractive")]),
                   say=said.append)
    eta.finished("s50", True, 60.0)
    assert said[-1].startswith("sweep ETA: about 10.0 min of stage compute left for 1 stages; "
                               "1 more without a rate yet (generate:extractive)")


def test_rates_of_earlier_runs_are_per_question_each_stage_ran_on(tmp_path):
    """An earlier demo run recorded SmolLM2's 100 s on the 50 questions it ran on (not the
    run's 500): 2 s per question, for the 50 and the 500 question stages alike; a manifest
    without units counts the run's questions, as before."""
    import json
    run = tmp_path / "runs" / "earlier"
    run.mkdir(parents=True)
    man = {"dataset": {"fingerprint": "f", "documents": 20}, "questions": {"total": 500},
           "stages": {"by_component": {
               "generate:smollm2": {"computed": 1, "seconds": 100.0, "units": 50},
               "generate:extractive": {"computed": 1, "seconds": 5.0}}}}
    (run / "manifest.json").write_text(json.dumps(man))
    small, large = _node("s50", "generate", "smollm2"), _node("s500", "generate", "smollm2")
    small.questions = "smoke"
    eta = SweepEta(_tiers(tmp_path, [small, large, _node("x", "generate", "extractive")]),
                   say=lambda _: None)
    assert eta.guess == {"s50": 100.0, "s500": 1000.0, "x": 5.0}
