"""Costly objects kept for reuse (a keyed memo), and the hooks that release them.

A component that keeps models or indexes in memory registers how to let them go
(`on_release`), where it keeps them: the dense encoders (retrieval/dense/resources.py),
the torch generator models (generation/torch_gguf.py), the BM25 indexes
(retrieval/lexical/resources.py). The flow releases by moment, never by class:
`release_models(memo)` when no model-bound stage is left (the models' weights go; what is
cheap to keep stays), `release_all(memo)` after the last stage (every index too). A hook
is registered when its module is imported, so a kind of object no module of this process
loaded has no hook, and nothing of it to release.

`Memo` is a run's keyed memo: `memo.get_or_build(key, build)` builds once per key, one
builder per key at a time (two threads asking for one key wait for one build), and stays a
plain dict to whatever only reads it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Literal, Mapping, TypeVar

T = TypeVar("T")
Moment = Literal["models", "all"]  # `models`: between stages; `all`: after the last one
Hook = Callable[[Mapping[str, Any]], None]  # given the run's memo (may be empty)

_HOOKS: dict[str, tuple[Moment, Hook]] = {}
_HOOKS_LOCK = threading.Lock()


class Memo(dict[str, Any]):
    """A run's keyed memo of costly objects."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    def get_or_build(self, key: str, build: Callable[[], T]) -> T:
        """The object under `key`, built by `build()` the first time it is asked for."""
        with self._lock:
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self:
                self[key] = build()
            return self[key]


def on_release(name: str, hook: Hook, when: Moment = "models") -> None:
    """Register `hook` under `name` (registering a name again replaces its hook): called
    with the run's memo by `release_models` (when="models") and `release_all`, or by
    `release_all` only (when="all": what later stages of the same run still read)."""
    with _HOOKS_LOCK:
        _HOOKS[name] = (when, hook)


def release_hooks() -> dict[str, Moment]:
    """The registered hooks' names and moments (for tests and diagnostics)."""
    with _HOOKS_LOCK:
        return {name: when for name, (when, _) in _HOOKS.items()}


def _release(memo: Mapping[str, Any] | None, moments: tuple[Moment, ...]) -> None:
    with _HOOKS_LOCK:
        hooks = [hook for when, hook in _HOOKS.values() if when in moments]
    for hook in hooks:
        hook(memo if memo is not None else {})


def release_models(memo: Mapping[str, Any] | None = None) -> None:
    """Let every registered kind of model go (their weights; they load again when used)."""
    _release(memo, ("models",))


def release_all(memo: Mapping[str, Any] | None = None) -> None:
    """Let models and indexes go (after a run's last stage), then hand the freed memory
    back to the system."""
    from ablate.components.runtime.memory import release_freed_memory
    _release(memo, ("models", "all"))
    release_freed_memory()
