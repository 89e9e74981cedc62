"""Reading an experiment file's YAML: safe loading only (no tags, no code), a repeated key
an error, and the node tree kept so every later error can name its line (`line_of`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ablate.components.errors import InputError


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


def read_yaml(path: Path) -> tuple[Any, Any]:
    """(data, node tree) of a YAML file, safe loading only (no tags, no code)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("a folder, not an experiment file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        _reject_duplicate_keys(node, path)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise InputError(f"invalid YAML: {exc.problem or exc}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", path=str(path)) from None
    finally:
        loader.dispose()
    return data, node


def _reject_duplicate_keys(node: Any, path: Path) -> None:
    """YAML lets a repeated key silently override the first; in an experiment file that
    hides a mistake, so it is an error naming the second occurrence."""
    stack = [node]
    while stack:
        n = stack.pop()
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
