"""Small name -> component registries, so YAML names map to code without imports from YAML."""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from components.errors import InputError

T = TypeVar("T")


class Registry(Generic[T]):
    """A named table of components of one kind (chunkers, fusers, generators, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} '{name}' registered twice")
            self._items[name] = obj
            return obj
        return deco

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise InputError(f"unknown {self.kind} '{name}' (known: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))
