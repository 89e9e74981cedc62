"""Reading an experiment file's or a regression file's YAML: safe loading only (no tags, no
code), an alias bomb and a repeated key an error, and the node tree kept so every later
error can name its line (`line_of`). In the contract layer so that both the flows
(experiment files) and components/export (regression files) read YAML through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ablate.components.contract.errors import InputError


def line_of(node: Any, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the deepest YAML node on the path `loc` (key lines for mappings)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(part):
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def read_yaml(path: Path, what: str = "an experiment file") -> tuple[Any, Any]:
    """(data, node tree) of a YAML file, safe loading only (no tags, no code); `what` the
    file is, for the error when the path is a folder."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"a folder, not {what}", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        _check_expansion(node, path)
        _reject_duplicate_keys(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise InputError(f"invalid YAML: {exc.problem or exc}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", path=str(path)) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", path=str(path)) from None
    finally:
        loader.dispose()
    return data, node


MAX_VALUES = 100_000  # values of the file with every alias expanded (experiment files: < 1,000)


def _children(n: Any) -> list[Any]:
    if isinstance(n, yaml.MappingNode):
        return [x for pair in n.value for x in pair]
    if isinstance(n, yaml.SequenceNode):
        return list(n.value)
    return []


def _check_expansion(node: Any, path: Path) -> None:
    """An alias is a reference to a node: nine levels of nine aliases are a file of a few
    lines that expands to 9^9 values (an "alias bomb"), which validation would then walk.
    Counts the values with every alias expanded, visiting each node once (post-order,
    without recursion), and refuses a file over MAX_VALUES, or one whose alias refers to a
    node that contains it, naming the line where the limit was crossed."""
    if node is None:
        return
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in size:
            continue
        kids = _children(n)
        if done:
            on_path.discard(id(n))
            total = 1 + sum(size[id(k)] for k in kids)
            if total > MAX_VALUES:
                raise InputError(f"the file expands to more than {MAX_VALUES:,} values through "
                                 "its aliases (*name); write the values out instead",
                                 path=str(path), line=n.start_mark.line + 1)
            size[id(n)] = total
            continue
        if id(n) in on_path:
            raise InputError("an alias refers to a node that contains it", path=str(path),
                             line=n.start_mark.line + 1)
        on_path.add(id(n))
        stack.append((n, True))
        for k in kids:
            if id(k) in on_path:
                raise InputError("an alias refers to a node that contains it", path=str(path),
                                 line=k.start_mark.line + 1)
            if id(k) not in size:
                stack.append((k, False))


def _reject_duplicate_keys(node: Any, path: Path) -> None:
    """YAML lets a repeated key silently override the first; in an experiment file (or a
    regression file) that hides a mistake, so it is an error naming the second occurrence.
    Each node is visited once, however many aliases refer to it."""
    stack = [node]
    visited: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in visited:
            continue
        visited.add(id(n))
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in n.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        raise InputError("duplicate key", path=str(path),
                                         line=key.start_mark.line + 1, field=key.value)
                    seen.add(key.value)
                stack.append(value)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
