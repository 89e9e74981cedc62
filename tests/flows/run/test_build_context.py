"""The run context expands the variants once, on their final configs (analyzer `auto`
resolved for the corpus, paths taken from the experiment file's folder)."""

from __future__ import annotations

from ablate.flows.plan import sweep_plan as context_module
from ablate.flows.run.context import RunOptions, build_context
from tests.flows.direct import write_spec
from tests.specs import experiment, vary

SPEC = experiment("once", tier="smoke", smoke_size=4,
                  sweeps=[vary("retrieval.analyzer", "default", "english")])


def test_variants_expanded_once_on_resolved_configs(tmp_path, monkeypatch):
    calls = []
    real = context_module.expand

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(context_module, "expand", spy)
    ctx = build_context(str(write_spec(tmp_path, SPEC)), RunOptions(cache_dir=str(tmp_path / "c")))
    assert len(calls) == 1
    # `auto` is `default` on this English corpus: the sweep value equal to the resolved
    # baseline is dropped, and said so (it used to vanish without a notice)
    assert ctx.analyzer_choice["analyzer"] == "default"
    assert [v.name for v in ctx.variants] == ["baseline", "retrieval.analyzer=english"]
    assert any("retrieval.analyzer=default equals the baseline; dropped" in n for n in ctx.notices)
    assert all(v.config.retrieval.analyzer != "auto" for v in ctx.variants)
