"""Checks run before any compute: every component every variant names is registered.

Pydantic validates types and ranges when the spec loads; this resolves each variant's
stages through the registries (chunkers, paths, analyzers, fusers, rerankers and their
signals, generators, and whatever plugins add), so a typo in a sweep value fails in a
second with the YAML line, not an hour into the sweep. A component whose declaration
`requires` a module that is not installed (the local GGUF generators' `llama_cpp` backend
needs the extra `ablate[local-llm]`; so do the local judge backends) fails here too, naming
the extra, whether the pipeline or the experiment (`judge.backend`) names it, and so does a
declared `files` field naming a path that is missing or unreadable.
"""

from __future__ import annotations

import os
from pathlib import Path

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import CATALOGUE
from ablate.components.pipeline import STAGES, field_names, file_fields, resolve, stage_parts
from ablate.flows.plan.spec_load import LoadedSpec
from ablate.flows.plan.variant import Variant


def _check_installed(decl, config: dict) -> None:  # type: ignore[no-untyped-def]
    missing = decl.missing_requirement(config)
    if missing is not None:
        module, extra = missing
        raise InputError(f"{decl.kind} '{decl.name}' needs the Python module '{module}', which "
                         f"is not installed; install the extra: pip install 'ablate[{extra}]'",
                         field=registry_field(decl.kind))


def check_experiment_components(loaded: LoadedSpec) -> None:
    """The components the experiment names outside the pipeline (a registry whose
    `config_field` is in an experiment section, such as `judge.backend`) have what they
    `require` installed: one line naming the extra at that field, before any stage (issue
    54: a judge backend's missing llama_cpp stopped the judge demo after its generation)."""
    for reg in CATALOGUE.values():
        where = reg.config_field
        section = where.split(".")[0] if where else ""
        if not where or section in PipelineConfig.model_fields:
            continue
        value = getattr(loaded.spec, section, None)
        if value is None:
            continue
        data = {section: value.model_dump(mode="json") if hasattr(value, "model_dump") else value}
        for name in field_names(get_dotted(data, where, None)):
            if name not in reg:  # not a component's name (metrics.key's columns): checked apart
                continue
            missing = reg.declaration(name).missing_requirement(data)
            if missing is not None:
                module, extra = missing
                raise loaded.error(f"{reg.kind} backend '{name}' needs the Python module "
                                   f"'{module}', which is not installed; install the extra: "
                                   f"pip install 'ablate[{extra}]'{_installed_peer(reg, name, where, data)}",
                                   tuple(where.split(".")))


def _installed_peer(reg, name: str, where: str, data: dict) -> str:  # type: ignore[no-untyped-def]
    """', or set FIELD: OTHER' for a registered component that reads the same model files
    and has everything it requires (the torch judge for llama_cpp's), else ''."""
    decl = reg.declaration(name)
    for other in reg.declarations():
        if other.name != name and decl.files and other.files == decl.files \
                and other.missing_requirement(data) is None:
            return f", or set {where}: {other.name} (the same model, nothing more to install)"
    return ""


def registry_field(kind: str) -> str | None:
    from ablate.components.contract.registry import registry
    return registry(kind).config_field


def _names_registered(cfg: PipelineConfig) -> None:
    """Every config field that names components (a registry's `config_field`) names
    registered ones, used by this variant or not (`fusion.method` with a single path)."""
    data = cfg.model_dump(mode="json")
    for reg in CATALOGUE.values():
        if reg.config_field and reg.config_field.split(".")[0] in data:
            for name in field_names(get_dotted(data, reg.config_field)):
                reg.declaration(name)


# Suffixes that make a declared `files` value a path, not a name (a bundled model's name,
# an installed model package's): model and dictionary files.
PATH_SUFFIXES = (".gguf", ".txt", ".dict", ".json", ".onnx", ".bin", ".safetensors", ".pt")


def looks_like_path(value: str) -> bool:
    return ("/" in value or "\\" in value or value.startswith((".", "~"))
            or Path(value).suffix.lower() in PATH_SUFFIXES)


def _files_readable(cfg: PipelineConfig) -> None:
    """Every declared `files` field of the components this config runs that holds a path
    names a file or folder that exists and can be read (relative paths were taken from the
    experiment file's folder when they exist there, else they are read from the working
    folder)."""
    data = cfg.model_dump(mode="python")
    for f in sorted(file_fields(cfg)):
        value = get_dotted(data, f)
        if not isinstance(value, str) or not value or not looks_like_path(value):
            continue
        path = Path(value).expanduser()
        if not path.exists():
            raise InputError(f"no such file or folder: {path.absolute()}", field=f)
        if not os.access(path, os.R_OK):
            raise InputError(f"cannot read {path.absolute()}", field=f)


def check_variants(loaded: LoadedSpec, variants: list[Variant]) -> None:
    for v in variants:
        cfg = v.config
        try:
            for sd in STAGES:
                for part in stage_parts(sd, cfg):
                    for decl in resolve(cfg, sd.select(cfg, part)).components:
                        _check_installed(decl, cfg.model_dump(mode="json"))
            _names_registered(cfg)
            _files_readable(cfg)
            unknown = sorted(set(cfg.fusion.weights or {}) - set(cfg.retrieval.paths))
            if unknown and len(cfg.retrieval.paths) > 1:
                raise InputError(f"retrieval path '{unknown[0]}' is not among "
                                 f"{', '.join(cfg.retrieval.paths)}", field="fusion.weights")
        except InputError as exc:
            field = exc.field or ""
            loc = ("baseline", *field.split(".")) if v.is_baseline and field else v.loc
            raise loaded.error(f"{exc.message} (variant {v.name})", loc) from None
    check_sharding(loaded, variants)


def check_sharding(loaded: LoadedSpec, variants: list[Variant]) -> None:
    """With `runner.shards` > 1, every retrieval path of every variant shards exactly (it
    declares a Sharding that accepts the variant's config: components/retrieval/shards.py);
    else one line, before anything runs (never a quiet unsharded run)."""
    from ablate.components.retrieval.shards import shard_refusal
    shards = loaded.spec.runner.shards
    if shards <= 1:
        return
    for v in variants:
        for path in v.config.retrieval.paths:
            why = shard_refusal(path, v.config)
            if why is not None:
                raise loaded.error(f"runner.shards is {shards}, but {why} (variant {v.name})",
                                   ("runner", "shards"))


def check_shards(loaded: LoadedSpec, n_documents: int) -> None:
    """`runner.shards` is at most the number of documents of the corpus (known once the
    data set is loaded)."""
    shards = loaded.spec.runner.shards
    if shards > n_documents:
        raise loaded.error(f"{shards} shards for a corpus of {n_documents} documents: at "
                           "most one shard per document", ("runner", "shards"))
