"""Named registries of components, each entry with its declaration (docs/extending.md).

A component (chunker, analyzer, retrieval path, fuser, rerank signal, generator, metric,
statistical test, correction, ...) is registered by name together with what the
orchestration needs to know about it:

- `reads`: the dotted config fields whose values can change its output (a section name
  such as `retrieval.bm25` covers every field below it): pipeline fields, except a judge
  backend's, which are fields of the experiment's `judge:` section. Stage keys are
  hashed from these values alone, and the component is handed a config in which every
  other field holds its default, so a field it reads without declaring it can never
  give a stale cache hit: it simply has no effect, which the config-field test catches;
- `settings`: fields it uses that cannot change an output (timeouts, concurrency);
  handed over, never hashed;
- `uses`: fields whose values name components of another registry (`retrieval.analyzer`
  names an analyzer); their declarations are folded into the stage that uses this one;
- `files`: fields (or dotted keys inside a read dict) holding paths of files or folders
  it reads (a user dictionary, a GGUF file, a dense model folder): their contents, not
  only their names, are hashed into stage keys (ablate.components.runtime.digest), and a relative path
  that exists in the experiment file's folder is taken from there;
- `reads_context`: whether it reads the assembled context (generators);
- `model_bound`: whether it runs a model that already uses every core (one at a time);
- `version`: bump it when a code change changes its output for the same inputs (a
  plugin's components are also keyed by their module's source, `source`);
- `produces`: False for a component that produces nothing (the `none` generator of a
  retrieval-only study): the stage that would run it is left out of the plan, with the
  stages that need its output as a required input and the metrics that need it;
- `libraries`: the distributions whose versions shape its output (torch for an embedder,
  jieba for the Chinese analyzer): their installed versions are part of its identity, so
  an upgrade is a new stage key;
- `neutral`: for a component named by a `uses` field, the behaviour its stage had
  before that field existed (the exact `flat` dense index): chosen, it adds neither its
  identity nor the field that chose it to a stage key, so configs that leave the field
  at it keep the keys they had. It may declare no `reads` or `files` (a registration
  error otherwise);
- `settings_model`: a generator's typed settings, a pydantic model whose fields (each with
  a default and a docstring) are the `generator.*` fields it accepts
  (components/generation/settings.py); a field of `generator:` that the chosen
  generator's model lacks is refused at check time;
- `requires`: (Python module, pip extra) pairs it needs installed, checked before
  anything runs; with `requires_when` (a config field and value) only when that field
  holds that value (the local GGUF generators need `llama_cpp` from `ablate[local-llm]`
  only with `generator.backend: llama_cpp`).

`CATALOGUE` holds every registry by kind, for the conformance test and for plugins.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, TypeVar

from ablate.components.contract.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class Declaration:
    kind: str
    name: str
    reads: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    uses: tuple[tuple[str, str], ...] = ()  # (config field, registry kind)
    files: tuple[str, ...] = ()
    reads_context: bool = False
    model_bound: bool = False
    version: str = "1"
    origin: str = ""  # the module that registered it
    produces: bool = True
    requires: tuple[tuple[str, str], ...] = ()  # (module, pip extra)
    requires_when: tuple[str, Any] | None = None  # (config field, value): when requires holds
    source: str = ""  # a plugin's: sha256 of its module's source (so editing it is a new key)
    libraries: tuple[str, ...] = ()  # distributions whose versions shape its output (keyed)
    info: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    neutral: bool = False  # chosen through `uses`, adds nothing to a stage key
    # a generator's typed settings (a pydantic model): the `generator.*` fields it accepts
    settings_model: Any = field(default=None, compare=False, hash=False)

    def required_modules(self, config: dict[str, Any] | None = None) -> tuple[str, ...]:
        """The modules it requires; with `requires_when`, none unless `config` (a dumped
        pipeline config) holds that value."""
        if self.requires_when is not None and config is not None:
            from ablate.components.contract.dotted import get_dotted
            field_name, value = self.requires_when
            if get_dotted(config, field_name) != value:
                return ()
        return tuple(module for module, _ in self.requires)

    def missing_requirement(self, config: dict[str, Any] | None = None) -> tuple[str, str] | None:
        """The first (module, extra) it requires (for `config`, see `required_modules`)
        that is not importable, else None."""
        import importlib.util
        import sys
        needed = self.required_modules(config)
        for module, extra in self.requires:
            if module not in needed:
                continue
            if module in sys.modules:
                if sys.modules[module] is None:  # import blocked
                    return module, extra
                continue
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                return module, extra
        return None

    @property
    def identity(self) -> str:
        """What a stage key records of this component: kind, name and code version, for a
        plugin's the digest of its module's source, and its libraries' installed versions."""
        src = f"+src:{self.source}" if self.source else ""
        libs = "".join(f"+{lib}={installed_version(lib)}" for lib in self.libraries)
        return f"{self.kind}:{self.name}@{self.version}{src}{libs}"


@functools.lru_cache(maxsize=None)
def installed_version(distribution: str) -> str:
    """The installed version of a distribution, "none" when it is not installed (looked
    up once per process: keys, caches and identities read it often)."""
    from importlib import metadata
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "none"


def _plugin_source(module: str) -> str:
    """sha256 (16 hex) of the source of a module outside ablate (a plugin), else ""."""
    import hashlib
    import sys
    if not module or module.split(".")[0] == "ablate":
        return ""
    path = getattr(sys.modules.get(module), "__file__", None)
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16] if path else ""
    except OSError:
        return ""


class Registry(Generic[T]):
    """A named table of components of one kind, each with its Declaration."""

    def __init__(self, kind: str, config_field: str | None = None) -> None:
        self.kind = kind
        self.config_field = config_field  # where a spec names these (for error messages)
        self._items: dict[str, T] = {}
        self._decls: dict[str, Declaration] = {}
        if kind in CATALOGUE:
            raise ValueError(f"a registry of kind '{kind}' exists already")
        CATALOGUE[kind] = self

    def register(self, name: str, *, reads: tuple[str, ...] = (), settings: tuple[str, ...] = (),
                 uses: dict[str, str] | None = None, files: tuple[str, ...] = (),
                 reads_context: bool = False,
                 model_bound: bool = False, version: str | None = None, origin: str | None = None,
                 produces: bool = True, requires: dict[str, str] | None = None,
                 requires_when: tuple[str, Any] | None = None,
                 libraries: tuple[str, ...] = (), neutral: bool = False,
                 settings_model: Any = None, **info: Any) -> Callable[[T], T]:
        """Decorator: register `obj` under `name` with its declaration. The version
        defaults to the object's `version` attribute (generator classes), else "1"."""
        def deco(obj: T) -> T:
            if name in self._items:
                raise RegistrationError(
                    f"{self.kind} '{name}' is registered already (by {self._decls[name].origin})")
            if neutral and (reads or files or uses):
                raise RegistrationError(f"{self.kind} '{name}' is neutral: it may read nothing")
            ver = version if version is not None else getattr(obj, "version", "1")
            module = origin or getattr(obj, "__module__", "") or ""
            decl = Declaration(
                self.kind, name, tuple(reads), tuple(settings), tuple(sorted((uses or {}).items())),
                tuple(files), reads_context, model_bound, str(ver),
                module, produces, tuple(sorted((requires or {}).items())), requires_when,
                _plugin_source(module), tuple(libraries), dict(info), neutral, settings_model)
            self._check(decl)
            self._items[name] = obj
            self._decls[name] = decl
            if isinstance(obj, type):  # a class can read its own declaration
                obj.declaration = decl  # type: ignore[attr-defined]
            return obj
        return deco

    def _check(self, decl: Declaration) -> None:
        """A kind's own rule for a declaration (the generators': their settings model
        holds every `generator.*` field they read); RegistrationError when it is broken."""

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise self._unknown(name) from None

    def declaration(self, name: str) -> Declaration:
        try:
            return self._decls[name]
        except KeyError:
            raise self._unknown(name) from None

    def _unknown(self, name: str) -> InputError:
        require_builtins()
        known = ", ".join(sorted(self._items)) or "none"
        near = difflib.get_close_matches(str(name), sorted(self._items), n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else ""
        return InputError(f"unknown {self.kind} '{name}'{hint} (known: {known})",
                          field=self.config_field)

    def names(self) -> list[str]:
        return sorted(self._items)

    def declarations(self) -> list[Declaration]:
        return [self._decls[n] for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)


class RegistrationError(ValueError):
    """A component registered under a name that is taken."""


CATALOGUE: dict[str, Registry[Any]] = {}


_BUILTINS = {"loaded": False}


def builtins_loaded() -> bool:
    return _BUILTINS["loaded"]


def mark_builtins_loaded() -> None:
    """Called once by ablate.components.catalogue.load(), the registration loader."""
    _BUILTINS["loaded"] = True


def registry(kind: str) -> Registry[Any]:
    """The registry of a kind ('chunker', 'analyzer', ...)."""
    require_builtins()
    try:
        return CATALOGUE[kind]
    except KeyError:
        raise InputError(f"unknown component kind '{kind}' (known: "
                         f"{', '.join(sorted(CATALOGUE))})") from None


def all_declarations() -> list[Declaration]:
    """Every registered component of every kind."""
    require_builtins()
    return [d for kind in sorted(CATALOGUE) for d in CATALOGUE[kind].declarations()]


def require_builtins() -> None:
    if not _BUILTINS["loaded"]:
        raise RuntimeError("the built-in components are not registered yet: call "
                           "ablate.components.catalogue.load() first")
