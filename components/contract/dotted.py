"""Dotted paths of nested configs (`fusion.rrf_k`): read one, test one, flatten a config
into them, and a value as the short label variant names and report columns use."""

from __future__ import annotations

from pydantic import BaseModel

_MISSING = object()


def get_dotted(data: dict, dotted: str, default: object = None) -> object:
    """The value at a dotted path (`fusion.rrf_k`) of a nested dict, else `default`."""
    node: object = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def has_dotted(data: dict, dotted: str) -> bool:
    return get_dotted(data, dotted, _MISSING) is not _MISSING


def format_value(value: object) -> str:
    """A config value as a short label (variant names, report columns): lists joined by
    '+', dicts as k:v pairs, whole floats as ints."""
    if isinstance(value, (list, tuple)):
        return "+".join(format_value(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{format_value(v)}" for k, v in sorted(value.items()))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def flatten(obj: object, prefix: str = "") -> dict[str, object]:
    """Flat dotted dict of a (nested) config: {'fusion.rrf_k': 60, ...}."""
    data = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    out: dict[str, object] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(flatten(v, key))
            else:
                out[key] = v
    else:
        out[prefix] = data
    return out


SEVERAL = " × "
"""Between the fields of a variant that sets several at once (a factorial cell, a named
variant): its variable `a × b` and its label `a=1 × b=2`, the cell's own name, so a cell has
one name in the findings, the overview and its section heading."""


def variable_parts(variable: str) -> list[str]:
    """The fields of a variable: several joined by SEVERAL (or '+', as folders written
    before issue 54 have them), else the one."""
    for sep in (SEVERAL, "+"):
        if sep in variable:
            return variable.split(sep)
    return [variable]


def several_label(values: dict[str, object]) -> str:
    """`a=1 × b=2`: the label of a variant setting several fields, in the given order."""
    return SEVERAL.join(f"{k}={format_value(v)}" for k, v in values.items())


def value_label(variable: str | None, value: object) -> str:
    """A variant's value as the outputs label it: '' for the baseline (no variable), of
    several fields several_label (its name, for a factorial cell), else format_value."""
    if variable is None:
        return ""
    parts = variable_parts(variable)
    if len(parts) > 1 and isinstance(value, dict) and set(parts) <= set(value):
        return several_label({p: value[p] for p in parts})
    return format_value(value)
