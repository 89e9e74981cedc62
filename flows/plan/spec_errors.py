"""Spec errors as one short message: a pydantic error turned into words, with a
suggestion for near-misses (an unknown field, option or component name)."""

from __future__ import annotations

import difflib
import re
from typing import Any, get_args

from pydantic import BaseModel
from pydantic_core import ErrorDetails


def did_you_mean(word: object, known: Any) -> str:
    """'; did you mean X?' for the closest of `known` to `word`, or ''."""
    if not isinstance(word, str):
        return ""
    near = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else ""


def error_loc(err: ErrorDetails) -> tuple[Any, ...]:
    """Where a pydantic error is (validator names left out), down to the field a
    validator of a whole section names (config.SettingError: a generator's setting)."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    field = getattr((err.get("ctx") or {}).get("error"), "field", None)
    return loc + (field,) if isinstance(field, str) else loc


def error_message(err: ErrorDetails, loc: tuple[Any, ...], root: type[BaseModel]) -> str:
    """A pydantic error (at `loc` of the `root` model) as a short message, with a
    suggestion for near-misses."""
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        parent = model_at(root, loc[:-1])
        known = list(parent.model_fields) if parent is not None else []
        hint = did_you_mean(loc[-1], known)
        return "unknown field" + (hint or (f" (known: {', '.join(known)})" if known else ""))
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
        return msg + did_you_mean(err.get("input"), expected)
    return msg.removeprefix("Value error, ")


def model_at(model: Any, loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class that holds the fields at `loc` (list indexes skipped)."""
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        model = inner_model(model.model_fields[part].annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def inner_model(annotation: Any) -> Any:
    """The model inside an annotation (`X`, `X | None`, `list[X]`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = inner_model(arg)
        if found is not None:
            return found
    return None
