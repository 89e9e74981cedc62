"""Generate docs/experiment-file.md from the pydantic models and the registries.

Every field of the experiment file (ExperimentSpec and the PipelineConfig under
`baseline`) is listed with its default, its allowed values and the docstring under it in
the code; fields that name components list the built-in names their registry holds;
the metric columns come from the metric registry. The prose around the tables is
scripts/experiment-file.template.md. `tests/test_docs.py` fails when the file in docs/
differs from what this script writes, so the reference cannot drift from the code.

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
    from ablate.components.contract.registry import CATALOGUE, registry
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
    generators = model.__name__ == "GeneratorConfig"
    for fname, info in _fields(model):
        path = f"{prefix}{fname}"
        pipe = f"{pipeline_prefix}{fname}" if pipeline_prefix is not None else None
        inner = inner_model(info.annotation)
        text = _text(info, path)
        if inner is None:
            named = pipe in regs and info.annotation is str  # a registry's names: a closed choice
            out.append(f"| `{path}` | {'choice' if named else _type(info.annotation)} | "
                       f"{_default(info)} | "
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
    if generators:
        out += _generator_sections(name, pipeline_prefix, regs)
    for child in children:
        out += _section(*child, regs)
    return out


def _fields(model: type[BaseModel]) -> list[tuple[str, FieldInfo]]:
    """The fields a section's table lists: `generator:` lists the fields every generator
    shares; each generator's own are listed under it (_generator_sections)."""
    if model.__name__ != "GeneratorConfig":
        return list(model.model_fields.items())
    from ablate.components.generation.settings import COMMON
    return [(f, model.model_fields[f]) for f in COMMON]


def _generator_sections(name: str, pipeline_prefix: str | None,
                        regs: dict[str, Any]) -> list[str]:
    """One table per built-in generator: the fields of its registered settings model."""
    from ablate.components.contract.registry import registry
    from ablate.components.generation.settings import settings_fields, settings_model
    reg = registry("generator")
    out: list[str] = []
    for gen in builtin_names(reg):
        decl = reg.declaration(gen)
        model = settings_model(decl)
        out += [f"### {name}: `{gen}`", ""]
        doc = " ".join((model.__doc__ or "").split())
        out += [f"{doc} With `name: {gen}`, `{name}` accepts these fields besides "
                f"[the shared ones](#{_anchor(name)}); any other is refused.", ""]
        fields = settings_fields(decl)
        if not fields:
            out += ["It has no settings of its own.", ""]
            continue
        out += ["| field | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        for fname in fields:
            info = model.model_fields[fname]
            path = f"{name}.{fname}"
            pipe = f"{pipeline_prefix}{fname}" if pipeline_prefix is not None else None
            named = pipe in regs and info.annotation is str
            out.append(f"| `{path}` | {'choice' if named else _type(info.annotation)} | "
                       f"{_default(info)} | {_allowed(info, path, pipe, regs)} | "
                       f"{_text(info, path)} |")
        out.append("")
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


# the page's prose, with {reference} and {metrics} where the generated tables go
TEMPLATE_FILE = ROOT / "scripts" / "experiment-file.template.md"


def render() -> str:
    template = TEMPLATE_FILE.read_text(encoding="utf-8")
    return template.replace("{reference}", reference()).replace("{metrics}", metric_table())


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
