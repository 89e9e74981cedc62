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
