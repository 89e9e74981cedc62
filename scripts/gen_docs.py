"""Generate docs/experiment-file.md from the pydantic models and the registries.

Every field of the experiment file (ExperimentSpec and the PipelineConfig under
`baseline`) is listed with its default, its allowed values and the docstring under it in
the code; fields that name components list the built-in names their registry holds;
the metric columns come from the metric registry. The prose around the tables is the
template below. `tests/test_docs.py` fails when the file in docs/ differs from what this
script writes, so the reference cannot drift from the code.

    python scripts/gen_docs.py          # rewrite docs/experiment-file.md
    python scripts/gen_docs.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402

from ablate.flows.plan.spec_errors import inner_model  # noqa: E402

TARGET = ROOT / "docs" / "experiment-file.md"

# fields whose values are keys of another registry (not names in a `config_field`)
KEY_FIELDS = {"fusion.weights": "retrieval path"}


class MissingDescription(ValueError):
    """A field without a docstring: the reference would have a hole."""


def builtin_names(reg: Any) -> list[str]:
    """The names of a registry's built-in components (plugins loaded in this process,
    e.g. by a test, are left out, so the reference does not depend on them)."""
    return [d.name for d in reg.declarations() if d.origin.startswith("ablate.components.")]


def _registries() -> dict[str, Any]:
    """config field -> registry, for the built-in components only (no plugins)."""
    from ablate.components import catalogue
    from ablate.components.registry import CATALOGUE, registry
    catalogue.load()
    registry("chunker")  # loads the built-ins
    out = {r.config_field: r for r in CATALOGUE.values() if r.config_field}
    for fld, kind in KEY_FIELDS.items():
        out[fld] = CATALOGUE[kind]
    return out


def _text(info: FieldInfo, path: str) -> str:
    if not info.description:
        raise MissingDescription(f"field '{path}' has no docstring; add one under it")
    text = " ".join(info.description.split()).replace("|", "\\|")
    return re.sub(r"docs/([\w-]+\.md)", r"[\1](\1)", text)


def _type(annotation: Any) -> str:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return "choice"
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return " or ".join(_type(a) for a in inner) + (" or null" if len(inner) < len(args) else "")
    if origin in (list, tuple):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return f"map {_type(args[0])} → {_type(args[1])}" if args else "map"
    if annotation is typing.Any:
        return "any"
    if isinstance(annotation, type):
        return {"str": "text", "int": "integer", "float": "number", "bool": "true / false"}.get(
            annotation.__name__, annotation.__name__)
    return str(annotation)


def _value(v: Any) -> str:
    if isinstance(v, BaseModel):
        return "(section)"
    if isinstance(v, tuple):
        v = list(v)
    text = json.dumps(v, ensure_ascii=False)
    return f"`{text}`".replace("|", "\\|")


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "**required**"
    default = info.get_default(call_default_factory=True)
    return _value(default)


def _bounds(info: FieldInfo) -> list[str]:
    out = []
    for m in info.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            bound = getattr(m, attr, None)
            if bound is not None and not (isinstance(bound, float) and math.isinf(bound)):
                out.append(f"{sign} {bound}")
        if getattr(m, "min_length", None):
            out.append("not empty" if info.annotation is str else
                       f"at least {m.min_length} item{'s' if m.min_length > 1 else ''}")
    return out


def _allowed(info: FieldInfo, path: str, pipeline_path: str | None, regs: dict[str, Any]) -> str:
    parts: list[str] = []
    literal = [a for a in _flat_args(info.annotation) if isinstance(a, str)]
    reg = None if path == "metrics.key" else regs.get(pipeline_path or path)
    if reg is not None:
        parts.append(f"{reg.kind}: " + ", ".join(f"`{n}`" for n in builtin_names(reg)))
    elif literal:
        parts.append(" / ".join(f"`{a}`" for a in literal))
    if path == "metrics.key":
        parts.append("metric columns at the chosen `ks` ([list](#metric-columns))")
    parts.extend(_bounds(info))
    return "; ".join(parts) or "–"


def _flat_args(annotation: Any) -> list[Any]:
    if get_origin(annotation) is Literal:
        return list(get_args(annotation))
    out = []
    for a in get_args(annotation):
        out.extend(_flat_args(a))
    return out


def _section(name: str, model: type[BaseModel], pipeline_prefix: str | None,
             regs: dict[str, Any]) -> list[str]:
    """One section's table, then its sub-sections (depth first)."""
    out = [f"### {name or 'top level'}", ""]
    doc = " ".join((model.__doc__ or "").split())
    if doc:
        out += [doc + (" Sweep variables use these names without `baseline.`."
                       if name.startswith("baseline") else ""), ""]
    out += ["| field | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    children: list[tuple[str, type[BaseModel], str | None]] = []
    prefix = f"{name.removesuffix('[]')}{'[]' if name.endswith('[]') else ''}." if name else ""
    for fname, info in model.model_fields.items():
        path = f"{prefix}{fname}"
        pipe = f"{pipeline_prefix}{fname}" if pipeline_prefix is not None else None
        inner = inner_model(info.annotation)
        text = _text(info, path)
        if inner is None:
            out.append(f"| `{path}` | {_type(info.annotation)} | {_default(info)} | "
                       f"{_allowed(info, path, pipe, regs)} | {text} |")
            continue
        list_of = get_origin(info.annotation) in (list, tuple)
        sub = f"{path}[]" if list_of else path
        child_prefix = f"{pipe}." if pipe is not None else ("" if inner.__name__ == "PipelineConfig" else None)
        children.append((sub, inner, child_prefix))
        out.append(f"| `{path}` | {'list of sections' if list_of else 'section'} | "
                   f"{'**required**' if info.is_required() else '–'} | "
                   f"[fields](#{_anchor(sub)}) | {text} |")
    out.append("")
    for child in children:
        out += _section(*child, regs)
    return out


def _anchor(section: str) -> str:
    return "".join(c for c in section.lower().replace(".", "").replace("[]", "")
                   if c.isalnum() or c in "-_")


def reference() -> str:
    """The field tables, section by section, depth first from the top level."""
    from ablate.flows.plan.spec import ExperimentSpec
    return "\n".join(_section("", ExperimentSpec, None, _registries()))


def metric_table() -> str:
    from ablate.components.metrics.registry import METRICS, example_columns
    example_columns()  # loads the built-ins
    rows = ["| metric | columns | better | range | meaning |", "|---|---|---|---|---|"]
    for name in builtin_names(METRICS):
        m = METRICS.get(name)
        if m.name == "*":
            shown = f"`{name}` (one per stage timed)"
        elif m.at_k:
            shown = ", ".join(f"`{stage}/{m.name}_at_k`" for stage in m.stages) + " for each k"
        else:
            shown = ", ".join(f"`{c}`" for c in m.columns(()))
        rng = f"{m.low:g} to {'∞' if math.isinf(m.high) else f'{m.high:g}'}"
        rows.append(f"| `{name}` | {shown} | {m.direction} | {rng} | "
                    f"{(m.description or '').replace('|', '/')} |")
    return "\n".join(rows)


TEMPLATE = """\
# The experiment file

<!-- Generated by scripts/gen_docs.py from the pydantic models and registries. Do not
edit by hand: change the docstring under the field in flows/plan/spec.py or
components/config.py and run `python scripts/gen_docs.py`. -->

An experiment file is YAML (safe loading only; a repeated key is an error). It names a
data set, which of its questions to use, a **baseline** pipeline, and **sweeps** that
change one field of the baseline at a time; every variant runs on the same questions and
is compared with the baseline question by question. Paths in it (`dataset.path`,
`questions.ids_file`, `plugins`) are relative to the experiment file; `out` and
`cache_dir` are relative to the folder you run `ablate` from.

Check a file before running it: `ablate check EXPERIMENT.yaml` validates the file and the
data and prints the plan (variants, unique stages, how many are cached, questions per
comparison, a time estimate from earlier runs), with a warning for a key metric some or
all variants cannot produce (`answer/f1` with `generator: none`) and for `candidates/*@k`
or `reranked/*@k` compared across chunkings. Every error is one line naming the file,
the line and the field, with a suggestion for near-misses:

```
ablate: error: exp.yaml:14: field 'baseline.generator.name': unknown generator 'smolm2'; did you mean smollm2? (known: closed_book, extractive, openai, smollm2) (variant baseline)
```

## A complete example

```yaml
name: budget-study                     # MLflow experiment name, start of the sweep id
description: What the context budget and the reranker are worth.
dataset:
  path: data/my-corpus                 # a folder with corpus.jsonl + questions.jsonl
  format: jsonl                        # auto | jsonl | squad | beir
questions:
  answerable_only: true
  max: 400                             # a seeded sample of at most 400
split: dev                             # leave the held-back test share alone
tier: full                             # every selected question, not a smoke sample
seed: 7
metrics:
  ks: [1, 5, 10]
  key: [final/recall_at_5, reranked/ndcg_at_10, answer/f1]
stats: {test: permutation, correction: holm, alpha: 0.05}
baseline:                              # fields not given keep their defaults
  chunking: {method: sentence, size: 200, overlap: 40}
  retrieval: {paths: [bm25, dense], depth: 50}
  fusion: {method: rrf, rrf_k: 60}
  rerank: {method: composite, depth: 20, weights: {fusion: 1.0}}
  context: {budget: 512, policy: skip}
  generator: {name: extractive}
sweeps:                                # one variant per value, everything else fixed
  - variable: context.budget
    values: [256, 1024]
  - variable: rerank.weights
    values: [{semantic: 0.6, fusion: 0.4}]
variants:                              # several fields changed at once, under a name
  - name: no-rerank-small-budget
    set: {rerank.method: none, context.budget: 256}
```

`experiments/demo.yaml` and `experiments/same-work.yaml` in the repository are complete
experiments on the bundled SQuAD data; the second selects its questions with an id file.

## Which questions run

The questions come from the data set in five steps, each within the previous one; the
manifest (`questions.selection`) and `ablate check` show the count after each step.

1. **split** (`split`, `split_share`): a `split_share` of the whole data set (default 20 %,
   seeded, stratified by answerable and type) is held back as the frozen test split; a
   question's own `split` field in the data wins. `dev` uses the rest, `test` only the
   held-back share, `all` both. Because the share is drawn over the whole data set, the
   other steps never move a question between dev and test. To run exactly the questions
   of an id file, use `split: all`.
2. **ids** (`questions.ids_file`): only the listed questions. An id the data set does not
   hold is an error naming the id file and line.
3. **answerable only** (`questions.answerable_only`).
4. **at most N** (`questions.max`): a seeded sample, stratified like the split.
5. **tier** (`tier`): `smoke` takes `smoke_size` questions, `regression` takes
   `regression_size` (the smoke questions among them), `full` takes all. The default is
   `smoke` with 50 questions: set `tier: full` to run every selected question.

Every step is part of the sweep's identity: change one and the run gets a new sweep id
and folder. Stage results are cached by the selected questions themselves, so a change
that selects the same questions reuses them.

## Sweeps and variants

A sweep's `variable` is any pipeline field, written as under `baseline` without the
`baseline.` prefix (`fusion.rrf_k`, `chunking.size`, `retrieval.paths`,
`rerank.weights`, `options.<plugin>.<field>`). Each value becomes one variant named
`variable=value` (`fusion.rrf_k=10`); a value equal to the baseline's is dropped with a
notice. A `variants` entry sets several fields at once under a name of its own. Two
variants with the same configuration are an error. Variants share every stage whose
inputs are the same, so an RRF-k sweep retrieves once (see [the pipeline](pipeline.md)).

## Factorial designs

One-factor sweeps cannot tell whether one choice's effect depends on another. A
`design` runs every combination of the levels of 2 to 4 variables (2 or 3 levels each,
the first being the baseline's value) and estimates main effects and two-way
interactions per question (see [statistics](statistics.md#factorial-designs)):

```yaml
design:
  kind: factorial
  fraction: full                       # or half: 4 two-level variables, 8 cells (D = ABC)
  variables:
    chunking.size: [200, 100]          # the baseline's value first
    rerank.weights: [{fusion: 1.0}, {semantic: 1.0}]
```

Every combination (a **cell**) is one variant; the all-baseline cell is the baseline.
A cell changing one variable is named like a sweep's variant (`chunking.size=100`), one
changing several joins the changes with ` × `
(`chunking.size=100 × rerank.weights=semantic:1`). Cells share stages like any variants,
are compared with the baseline like any variants, and a sweep value that is also a cell
is one variant. Cells run on the experiment's questions (`tier`), so a cell cannot also
be the variant of a sweep with its own `tier` or `n`. `experiments/factorial-demo.yaml`
is a 2 × 2 design on the demo data.

## Retrieval-only studies (`generator: none`)

`generator: {name: none}` studies retrieval without generating anything (install with
`bash scripts/install.sh --retrieval-only`: no model generator is needed). The pipeline
chunks, labels, retrieves, fuses, reranks and **assembles the context under
`context.budget`** exactly as with a generator; only the generate stage, and every metric
that reads answers, is left out:

| produced | not produced |
|---|---|
| `candidates/*`, `reranked/*` and `final/*` retrieval metrics at every k, `final/span_coverage`, `final/context_tokens`, latencies; failure buckets `retrieval_miss`, `ranking_loss`, `budget_cut`, `retrieved`, `no_evidence` (answerable) and `unanswerable` | `answer/*`, `refusal/*`, `tokens/*`, `cost/*`, `judge/*`, `robustness/answer_consistency` |

The default `metrics.key` lists `answer/f1` and `answer/em`, which such a run cannot
produce (`ablate check` warns; a `metrics.key` you set that names them makes `ablate run`
refuse in one line): name retrieval metrics instead. Which ones depends on the sweep:

- **Chunk sizes (or anything that changes the chunks): read `final/*`.** The final
  ranking is the ranked chunks packed into the same `context.budget`, so every chunking
  is compared on the same number of tokens. `candidates/*@k` and `reranked/*@k` compare
  k chunks, and k chunks of 512 tokens are four times the text of k chunks of 128. Take
  a k no smaller than the number of chunks the budget holds at the smallest size (512 /
  128 = 4 full chunks, more when chunks are shorter than `size`), so that `final/…_at_k`
  covers the whole context; a smaller k compares unequal amounts of text again.
  `final/precision_at_k` divides by k, so under one budget it favours small chunks.
  `ablate check` warns when a sweep changes the chunks, since its `candidates/*@k` and
  `reranked/*@k` then compare different amounts of text.
- **Paths, fusion, reranking at one chunking: `candidates/*` and `reranked/*` are
  comparable** (the same chunks), and they do not depend on the budget.

```yaml
name: chunk-sizes
dataset: {path: data/mydata}
tier: full
metrics:
  ks: [1, 5, 10]
  key: [final/recall_at_10, final/full_support_at_10, final/span_coverage]
baseline:
  chunking: {method: sentence, size: 256, overlap: 32}
  context: {budget: 512}
  generator: {name: none}
sweeps:
  - variable: chunking.size
    values: [128, 512]
```

Evidence given as whole documents makes a chunk-size sweep misleading whatever the stage:
see [bring your own data](bring-your-own-data.md#spans-versus-whole-document-labels).

## Reference

{reference}
## Metric columns

Each registered metric gives one or more columns of `per_query.parquet` (see
[metrics](metrics.md) for their definitions); `metrics.key` takes any of these columns.
Retrieval metrics have one column per stage (`candidates`, `reranked`, `final`) and
cut-off k of `metrics.ks`.

{metrics}
"""


def render() -> str:
    return TEMPLATE.replace("{reference}", reference()).replace("{metrics}", metric_table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/gen_docs.py",
                  file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
