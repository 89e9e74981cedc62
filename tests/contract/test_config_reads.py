"""A config is read by typed attribute (`cfg.context.budget`), not dumped to a dict and read
by dotted string (`get_dotted(cfg.model_dump(), "context.budget")`): a typo in an attribute
is a mypy error and a renamed field a failing import, where a dotted string reads None.

What may still read a dump by dotted name is generic machinery whose field names are data,
not code: a stage key's values from a component's declared `reads` (pipeline.read_values,
resolve, project), a registry's `config_field` (preflight), a stage's `per` field, the
judge's declared reads (judge/keys.py). Those sites are counted and held at MAX_SITES; a new
site with a literal field name fails at once.

A site: a `get_dotted(...)` call in components/ or flows/ whose first argument is a
`.model_dump(...)` call, or a name assigned (in the same function) from an expression that
calls `.model_dump(...)`; and a dump handed straight to a function that reads its first
argument by literal dotted strings (`chunk_token_limit(cfg.model_dump())`, a literal read one
call away).
"""

from __future__ import annotations

import ast

from tests.conftest import ROOT

MAX_SITES = 14  # 16 before the typed reads of context.budget and chunking (judge cost)


def _dumps(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "model_dump" for n in ast.walk(node))


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _own_nodes(scope: ast.AST):  # type: ignore[no-untyped-def]
    """The nodes of a scope, not those of the functions nested in it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def dotted_readers(source: str) -> set[str]:
    """Functions that read their first argument by a literal dotted string."""
    out = set()
    for f in _scopes(ast.parse(source))[1:]:
        args = f.args.posonlyargs + f.args.args  # type: ignore[attr-defined]
        if args and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                        and n.func.id == "get_dotted" and len(n.args) >= 2
                        and isinstance(n.args[0], ast.Name) and n.args[0].id == args[0].arg
                        and isinstance(n.args[1], ast.Constant) for n in _own_nodes(f)):
            out.add(f.name)  # type: ignore[attr-defined]
    return out


def dump_reads(source: str, readers: set[str] = frozenset()) -> list[tuple[int, str]]:  # type: ignore[assignment]
    """(line, field read: the literal, else '<name>') of every dotted read of a dump; a dump
    handed to one of `readers` reads '<reader>()'."""
    out = []
    for scope in _scopes(ast.parse(source)):
        nodes = list(_own_nodes(scope))
        dumped = {t.id for n in nodes if isinstance(n, ast.Assign) and _dumps(n.value)
                  for t in n.targets if isinstance(t, ast.Name)}
        for n in nodes:
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in readers
                    and n.args and _dumps(n.args[0])):
                out.append((n.lineno, f"{n.func.id}()"))
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "get_dotted" and len(n.args) >= 2):
                continue
            data, field = n.args[0], n.args[1]
            if _dumps(data) or (isinstance(data, ast.Name) and data.id in dumped) or (
                    isinstance(data, ast.Subscript) and isinstance(data.value, ast.Name)
                    and data.value.id in dumped):
                literal = isinstance(field, ast.Constant) and isinstance(field.value, str)
                out.append((n.lineno, field.value if literal else "<name>"))  # type: ignore[union-attr]
    return sorted(out)


def _sites() -> dict[str, list[tuple[int, str]]]:
    files = sorted(p for folder in ("components", "flows") for p in (ROOT / folder).rglob("*.py"))
    readers = set().union(*(dotted_readers(p.read_text(encoding="utf-8")) for p in files))
    found = {}
    for p in files:
        if reads := dump_reads(p.read_text(encoding="utf-8"), readers):
            found[p.relative_to(ROOT).as_posix()] = reads
    return found


def test_the_count_sees_a_dump_read_by_dotted_string():
    src = ("def f(cfg, fld):\n"
           "    data = cfg.model_dump(mode='json')\n"
           "    a = get_dotted(data, 'context.budget')\n"
           "    b = get_dotted(cfg.model_dump(), fld)\n"
           "    per = {v: x.model_dump() for v, x in cfg}\n"
           "    c = get_dotted(per['a'], fld)\n"
           "    d = get_dotted(other, 'x.y')\n"
           "    def g(data):\n"
           "        return get_dotted(data, 'x.y')\n")
    assert dump_reads(src) == [(3, "context.budget"), (4, "<name>"), (6, "<name>")]
    reader = "def limit(config, x):\n    return get_dotted(config, 'chunking.size') or get_dotted(x, 'a')\n"
    assert dotted_readers(reader + "def h(config):\n    return get_dotted(config, f)\n") == {"limit"}
    assert dump_reads("limit(cfg.model_dump(mode='json'))\nlimit(stored)\n", {"limit"}) == [(1, "limit()")]


def test_no_literal_field_is_read_from_a_dumped_config():
    literal = {f: [r for r in reads if r[1] != "<name>"] for f, reads in _sites().items()}
    literal = {f: r for f, r in literal.items() if r}
    assert not literal, f"read these by typed attribute (cfg.section.field): {literal}"


def test_dotted_reads_of_dumps_are_held():
    sites = _sites()
    n = sum(len(r) for r in sites.values())
    assert n <= MAX_SITES, (f"{n} dotted reads of a dumped config (at most {MAX_SITES}; read a "
                            f"typed attribute instead): {sites}")
