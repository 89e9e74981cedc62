"""Each generator's typed settings: the `generator.*` fields it accepts (issue 43.2).

A generator registers its settings model with it (`settings_model=` on
`GENERATORS.register`): a pydantic model whose fields, each with a default and a
docstring, are the fields of the experiment file's `generator:` section it reads, next
to `name` and the fields every generator shares (`COMMON`). A plugin generator's model
brings new fields, stored in the config beside the built-ins' and validated by its model
(contract/config.py); the built-in generators' models pick their fields from the stored
record (`record_settings`), whose dump identifies a config as it always has. Validation
(flows/plan/generator_fields.py), the generator itself (`BaseGenerator.settings`) and
the reference (scripts/gen_docs.py) all read these models.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from ablate.components.contract.config import GeneratorConfig
from ablate.components.contract.registry import Declaration, RegistrationError

# fields of `generator:` that are not any one generator's: what it is, how many answers
# per question (the score stage), and the prices of the cost metric
COMMON = ("name", "repeats", "cost_per_1k_in", "cost_per_1k_out")


def record_settings(model_name: str, doc: str, *fields: str) -> type[BaseModel]:
    """A settings model of some of the stored record's fields (their types, bounds,
    defaults and docstrings, defined once in GeneratorConfig)."""
    record = GeneratorConfig.model_fields
    defs: dict[str, Any] = {f: (record[f].annotation, record[f]) for f in fields}
    return create_model(model_name, __config__=ConfigDict(extra="forbid", frozen=True),
                        __doc__=doc, **defs)


def _declared_fields(decl: Declaration) -> list[str]:
    """The `generator.*` fields (below the section) a declaration reads, keys or holds."""
    out = []
    for dotted in (*decl.reads, *decl.settings, *decl.files):
        section, _, rest = dotted.partition(".")
        if section == "generator" and rest and rest.split(".")[0] not in COMMON:
            out.append(rest.split(".")[0])
        elif dotted == "generator":
            out.extend(f for f in GeneratorConfig.model_fields if f not in COMMON)
    return list(dict.fromkeys(out))


def settings_model(decl: Declaration) -> type[BaseModel]:
    """Its registered settings model; for a generator registered without one (a plugin
    from before settings models), the record's fields its declaration names."""
    if decl.settings_model is not None:
        return decl.settings_model
    fields = [f for f in _declared_fields(decl) if f in GeneratorConfig.model_fields]
    return record_settings(f"{decl.name}_settings", f"Settings of `{decl.name}`.", *fields)


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


def check_declaration(decl: Declaration) -> None:
    """A generator's settings model is a pydantic model whose fields all have defaults and
    that holds every `generator.*` field its declaration reads, keys or holds."""
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
    missing = [f for f in _declared_fields(decl) if f not in model.model_fields]
    if missing:
        raise RegistrationError(f"generator '{decl.name}' reads generator.{missing[0]}, which "
                                f"its settings model {model.__name__} lacks")
