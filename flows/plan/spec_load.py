"""Reading an experiment file: the YAML (safe loading only, components/contract/yaml_source.py), its
plugins registered first, then the spec models of flows/plan/spec.py; every error names
the file, the line and the dotted field. LoadedSpec keeps the YAML node tree so later
checks point at lines too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ablate.components.contract.errors import InputError
from ablate.components.contract.yaml_source import line_of, read_yaml
from ablate.flows.plan.spec import ExperimentSpec
from ablate.flows.plan.spec_errors import error_loc, error_message


class LoadedSpec(BaseModel):
    """A validated spec plus what is needed to point errors at YAML lines."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    spec: ExperimentSpec
    path: Path
    node: Any  # the yaml node tree

    def line_of(self, loc: tuple[Any, ...]) -> int | None:
        return line_of(self.node, loc)

    def error(self, message: str, loc: tuple[Any, ...]) -> InputError:
        return InputError(message, path=str(self.path), line=self.line_of(loc),
                          field=".".join(str(p) for p in loc))

    def resolve(self, relative: str) -> Path:
        """A path from the spec, relative to the spec file's folder."""
        p = Path(relative)
        return p if p.is_absolute() else (self.path.parent / p)


def _load_plugins(refs: Any, path: Path, node: Any) -> None:
    """Installed (entry-point) plugins, then the spec's own, before anything is validated
    against the registries (the built-ins first)."""
    from ablate.components import catalogue
    from ablate.components.contract.plugins import load_entry_points, load_plugins
    catalogue.load()
    load_entry_points()
    if refs is None:
        return
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise InputError("plugins must be a list of module names or .py paths", path=str(path),
                         line=line_of(node, ("plugins",)), field="plugins")
    for i, ref in enumerate(refs):
        try:
            load_plugins([ref], path.parent)
        except InputError as exc:
            raise InputError(exc.message, path=str(path), line=line_of(node, ("plugins", i)),
                             field=f"plugins.{i}") from None


def load_spec(path: str | Path) -> LoadedSpec:
    """Read and validate an experiment file; raise InputError naming file, line and field."""
    path = Path(path)
    data, node = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError("an experiment file must be a YAML mapping", path=str(path), line=1)
    _load_plugins(data.get("plugins"), path, node)
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = error_loc(err)
        raise InputError(error_message(err, loc, ExperimentSpec), path=str(path),
                         line=line_of(node, loc), field=".".join(str(p) for p in loc)) from None
    return LoadedSpec(spec=spec, path=path, node=node)
