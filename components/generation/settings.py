"""Each generator's typed settings: the `generator.*` fields it accepts (issues 43.2, 51.4).

A generator declares its settings model beside it and registers it (`settings_model=` on
`GENERATORS.register`): a `GeneratorSettings` whose fields, each with a default and a
docstring, are the fields of the experiment file's `generator:` section it reads, next
to `name` and the fields every generator shares (`COMMON`, the only fields
contract/config.py's GeneratorConfig declares itself). That model is the one home of a
field's type, bounds, default and meaning: the stored config validates a field by it (and
holds every built-in generator's fields with their defaults, so a config's dump is what
it always was), validation of a sweep (flows/plan/generator_fields.py), the generator
itself (`BaseGenerator.settings`) and the reference (scripts/gen_docs.py) all read it.
Fields several model generators read (`SamplingSettings`) are declared here once; two
generators may both declare a field only with the same type and default (the record
stores one value), which registration checks.
"""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, create_model

from ablate.components.contract.config import GeneratorConfig, registered_settings_models
from ablate.components.contract.registry import Declaration, RegistrationError

# fields of `generator:` that are not any one generator's: what it is, how many answers
# per question (the score stage), and the prices of the cost metric
COMMON = tuple(GeneratorConfig.model_fields)


class GeneratorSettings(BaseModel):
    """The base of a generator's settings model: frozen, refusing unknown fields, each
    field's docstring its documentation."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class SamplingSettings(GeneratorSettings):
    """What every model generator decodes with (local GGUF files and endpoints)."""

    max_new_tokens: int = Field(48, ge=1, le=4096)
    """Most tokens generated per answer."""
    temperature: float = Field(0.0, ge=0)
    """Sampling temperature (0 = greedy)."""
    seed: int = 0
    """Sampling seed."""


def _registered_fields(models: Iterable[type[BaseModel]]) -> dict[str, Any]:
    """{field: FieldInfo} of the given settings models (the first declaring one wins)."""
    out: dict[str, Any] = {}
    for model in models:
        for f, info in model.model_fields.items():
            out.setdefault(f, info)
    return out


def _declared_fields(decl: Declaration, known: Iterable[str]) -> list[str]:
    """The `generator.*` fields (below the section) a declaration reads, keys or holds
    (`generator` itself: every `known` field)."""
    out = []
    for dotted in (*decl.reads, *decl.settings, *decl.files):
        section, _, rest = dotted.partition(".")
        if section == "generator" and rest and rest.split(".")[0] not in COMMON:
            out.append(rest.split(".")[0])
        elif dotted == "generator":
            out.extend(f for f in known if f not in COMMON)
    return list(dict.fromkeys(out))


def settings_model(decl: Declaration,
                   others: Iterable[type[BaseModel]] = ()) -> type[BaseModel]:
    """Its registered settings model; for a generator registered without one (a plugin
    from before settings models), the built-in generators' fields its declaration names
    (`others`: settings models, by default the registered generators')."""
    if decl.settings_model is not None:
        return decl.settings_model
    if not others:
        others = [model for _, model, _ in registered_settings_models()]
    known = _registered_fields(others)
    defs: dict[str, Any] = {f: (known[f].annotation, known[f])
                            for f in _declared_fields(decl, known) if f in known}
    return create_model(f"{decl.name}_settings", __base__=GeneratorSettings,
                        __doc__=f"Settings of `{decl.name}`.", **defs)


def settings_fields(decl: Declaration) -> tuple[str, ...]:
    """The fields of `generator:` its settings model holds (COMMON ones not counted)."""
    return tuple(f for f in settings_model(decl).model_fields if f not in COMMON)


def accepted(decl: Declaration) -> set[str]:
    """Every field of `generator:` a variant running it may set."""
    return set(COMMON) | set(settings_fields(decl))


def settings_of(cfg: GeneratorConfig, decl: Declaration) -> BaseModel:
    """Its settings model holding `cfg`'s values (the chosen generator's typed view)."""
    model = settings_model(decl)
    data = cfg.model_dump(mode="python")
    return model.model_validate({f: data[f] for f in model.model_fields if f in data})


def _same(a: Any, b: Any) -> bool:
    return (a.annotation == b.annotation and a.get_default(call_default_factory=True)
            == b.get_default(call_default_factory=True) and a.metadata == b.metadata)


def check_declaration(decl: Declaration, others: Iterable[Declaration] = ()) -> None:
    """A generator's settings model is a pydantic model whose fields all have defaults,
    that holds every `generator.*` field its declaration reads, keys or holds, and that
    declares a field another registered generator (`others`) declares only as that one
    does (type, bounds, default: the stored config holds one value)."""
    model = decl.settings_model
    if model is None:
        return
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise RegistrationError(f"generator '{decl.name}': settings_model must be a pydantic "
                                f"model, got {model!r}")
    required = [f for f, info in model.model_fields.items() if info.is_required()]
    if required:
        raise RegistrationError(f"generator '{decl.name}': setting '{required[0]}' needs a "
                                "default")
    missing = [f for f in _declared_fields(decl, model.model_fields)
               if f not in model.model_fields]
    if missing:
        raise RegistrationError(f"generator '{decl.name}' reads generator.{missing[0]}, which "
                                f"its settings model {model.__name__} lacks")
    for f, info in model.model_fields.items():
        if f in COMMON:
            raise RegistrationError(f"generator '{decl.name}': setting '{f}' is a field every "
                                    "generator shares (generator." + f + ")")
        for other in others:
            theirs = (other.settings_model.model_fields.get(f)
                      if other.settings_model is not None else None)
            if theirs is not None and not _same(info, theirs):
                raise RegistrationError(
                    f"generator '{decl.name}': setting '{f}' differs from generator "
                    f"'{other.name}''s (type, bounds or default): the config stores one "
                    f"generator.{f}")
