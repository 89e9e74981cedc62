"""User components from plugins: modules listed under `plugins:` in an experiment file
(a dotted module name, or a `.py` file relative to the experiment file) and installed
packages that register through the entry-point group `ablate.components`.

A plugin registers components exactly as the built-ins do (`PATHS.register(...)`,
`@metric(...)`), with the same declarations, so it gets the same caching, sharing,
MLflow logging and statistics. A plugin that fails to import, registers a name that is
taken, or registers nothing is an InputError naming it. Loading is idempotent per
process (a Dask worker that rebuilds the run context loads the same plugins again).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import RegistrationError, all_declarations

ENTRY_POINT_GROUP = "ablate.components"
_LOADED: dict[str, ModuleType] = {}


def _import_file(path: Path) -> ModuleType:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
    name = f"ablate_plugin_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _load_one(ref: str, what: str, load) -> ModuleType:  # type: ignore[no-untyped-def]
    before = len(all_declarations())
    try:
        module = load()
    except RegistrationError as exc:
        raise InputError(f"{what} '{ref}': {exc}") from None
    except InputError:
        raise
    except SystemExit as exc:  # would end ablate without a word (issue 39.9)
        raise InputError(f"{what} '{ref}' called sys.exit({exc.code!r}) while importing; a "
                         "plugin must register its components, not end the program") from None
    except BaseException as exc:  # noqa: BLE001 - any failure of user code, said in one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise InputError(f"{what} '{ref}' failed to import ({type(exc).__name__}: {exc})") from None
    if len(all_declarations()) == before:
        raise InputError(f"{what} '{ref}' registers no component (call a registry's "
                         f"register(...) or @metric(...) at import)")
    return module


def load_plugins(refs: Sequence[str], base_dir: Path) -> list[str]:
    """Import each plugin once per process; return what each resolved to."""
    out = []
    for ref in refs:
        is_file = ref.endswith(".py") or "/" in ref or "\\" in ref
        target = str((base_dir / ref).resolve()) if is_file else ref
        if target not in _LOADED:
            if is_file:
                path = Path(target)
                if not path.is_file():
                    raise InputError(f"plugin file not found: {path}", field="plugins")
                _LOADED[target] = _load_one(ref, "plugin", lambda: _import_file(path))
            else:
                _LOADED[target] = _load_one(ref, "plugin", lambda: importlib.import_module(ref))
        out.append(target)
    return out


def load_entry_points() -> list[str]:
    """Load every installed plugin of the `ablate.components` entry-point group."""
    out = []
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        key = f"entry-point:{ep.name}={ep.value}"
        if key not in _LOADED:
            def load(ep=ep) -> ModuleType:  # type: ignore[no-untyped-def]
                obj = ep.load()
                if callable(obj) and not isinstance(obj, ModuleType):
                    obj()
                return sys.modules[ep.module]
            _LOADED[key] = _load_one(ep.name, "entry-point plugin", load)
        out.append(key)
    return out


def plugin_of(exc: BaseException) -> str | None:
    """The loaded plugin (its file or module, as listed) whose code raised `exc`: the
    deepest frame of its traceback in a plugin's file; None when no plugin's code ran."""
    files = {getattr(m, "__file__", None): ref for ref, m in _LOADED.items()}
    found = None
    tb = exc.__traceback__
    while tb is not None:
        ref = files.get(tb.tb_frame.f_code.co_filename)
        if ref is not None:
            found = ref
        tb = tb.tb_next
    return found
