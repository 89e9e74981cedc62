"""The judge: a language model that gives verdicts behind the judged metrics (RAGAS's
faithfulness, answer relevancy, context precision and context recall, and the
addresses-question rating; docs/metrics.md#judged-metrics), with versioned prompts,
strict structured output, a verdict cache, calibration and bias probes.

config: the `judge:` section; backends: the registered models (llama_cpp, openai);
prompts: versioned prompt files; tasks: schemas, strict parsing, retry, cache;
case: what a judged metric's asks work with; ragas: the built-in judged metrics (one
registration each, with ablate.components.metrics.judged.judged_metric); run: one
question's judgments, generic over the registered judged metrics; keys: what the judge's
stage keys record, from declarations; calibration and probes: how far to trust the judge.
"""
