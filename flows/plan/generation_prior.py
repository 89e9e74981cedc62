"""What a stage no earlier run has a rate for costs, by its component's declared prior
(`ablate check`, the sweep ETA line).

Generation is the slow part of a local-model sweep (issue 54: 525 s of a 1,080 s run), and
on a first run no manifest has its rate (flows/plan/estimate.py). A component may declare
`prior={"per_question": s, "per_prompt_token": s, "prompt_overhead": tokens, "source": text}`
(the local GGUF generators do: components/generation/llama_local.py): a stage running it
is priced at per_question + per_prompt_token x (prompt_overhead + the context budget when
the component reads the context) seconds per question it runs on, and the line says it is
a calibrated prior, not this machine's rate. Earlier runs' rates always come first.
"""

from __future__ import annotations

from typing import Any, Iterable


def prior_rate(node: Any, nodes: dict[str, Any]) -> float | None:
    """Seconds per unit of work (question) of a stage by a declared prior, else None. The
    budget is its context's (the `assemble` input's config: a stage's own config holds
    defaults in the fields it does not read)."""
    for decl in node.resolved.components:
        prior = decl.info.get("prior")
        if prior:
            ctx_key = node.inputs.get("assemble")
            budget = (nodes[ctx_key].config.context.budget
                      if decl.reads_context and ctx_key in nodes else 0)
            tokens = prior["prompt_overhead"] + budget
            return float(prior["per_question"] + prior["per_prompt_token"] * tokens)
    return None


def _source(node: Any) -> str:
    return next(d.info["prior"].get("source", "") for d in node.resolved.components
                if d.info.get("prior"))


def prior_line(todo: Iterable[tuple[str, float, Any]],
               nodes: dict[str, Any]) -> tuple[str | None, set[str]]:
    """For the stages (timing key, units, node) no earlier run has a rate for: the line
    pricing those with a declared prior, and the timing keys it priced."""
    from ablate.flows.plan.estimate import duration
    seconds, count, keys, sources = 0.0, 0, set(), set()
    for key, units, node in todo:
        rate = prior_rate(node, nodes)
        if rate is None:
            continue
        seconds += rate * units
        count += 1
        keys.add(key)
        sources.add(_source(node))
    if not count:
        return None, keys
    return (f"generation: about {duration(seconds)} for {count} stage{'s' if count != 1 else ''} "
            f"({', '.join(sorted(keys))}) at a calibrated prior, no earlier run's rate "
            f"({'; '.join(sorted(s for s in sources if s))}); a first run records this "
            "machine's", keys)
