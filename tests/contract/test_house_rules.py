"""House rules kept as checks: modules stay small (split by idea, never by joining lines).

The cap: a module under components/ or flows/ has at most MAX_LINES physical lines. Joining
lines to meet it is caught two ways, both read from the source's syntax tree, not by
pattern:

- no line holds two statements (`a = 1; b = 2`), and no compound statement carries its body
  on its header line (`if x: return y`, `for ...: ...`); a one-line stub whose body is `...`
  (a Protocol's or an overload's signature) is allowed;
- no line of code is longer than the project's ruff `line-length` (pyproject.toml). Prose is
  exempt: a docstring's lines and whole-line comments may run longer (re-wrapping prose hides
  no code), while a long string inside code, a long call or a trailing comment after code
  counts.

ALLOWED_LONG names a module that truly cannot be split today (none does).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.conftest import ROOT

MAX_LINES = 400
ALLOWED_LONG: dict[str, str] = {}  # "components/x.py": "why it cannot be split today"
FOLDERS = ("components", "flows")


def _modules() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _line_length() -> int:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return int(tomllib.load(f)["tool"]["ruff"]["line-length"])


def _stub(body: list[ast.stmt]) -> bool:
    """A body that is only `...` (a signature, not code)."""
    return (len(body) == 1 and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant) and body[0].value.value is Ellipsis)


def joined_lines(source: str) -> list[int]:
    """Lines where statements were joined: a statement with anything but indentation before
    it on its line (`a = 1; b = 2`, `if x: return y`, `else: y = 1`), a `...` stub excepted."""
    lines = source.encode("utf-8").splitlines()
    found = set()
    for node in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or _stub(block):
                continue
            found.update(s.lineno for s in block if isinstance(s, ast.stmt)
                         and lines[s.lineno - 1][:s.col_offset].strip())
    return sorted(found)


def long_code_lines(source: str, limit: int) -> list[int]:
    """Lines longer than `limit` that are not prose (a docstring's line, a whole-line comment)."""
    prose = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            prose.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return [i for i, line in enumerate(source.splitlines(), 1)
            if len(line) > limit and i not in prose and not line.lstrip().startswith("#")]


def test_the_checks_catch_joined_and_long_lines():
    assert joined_lines("a = 1; b = 2\n") == [1]
    assert joined_lines("if a:\n    b = 1\nelse: b = 2\n") == [3]
    assert joined_lines("for x in y: print(x)\n") == [1]
    assert joined_lines("def f(x): return x\n") == [1]
    assert joined_lines("try:\n    a = 1\nfinally:\n    b = 2; c = 3\n") == [4]
    assert joined_lines("class P:\n    def f(self) -> int: ...\n") == []
    assert joined_lines("x = (1,\n     2)\ny = 3\n") == []
    doc = '"""' + "word " * 40 + '"""\n'
    code = "x = '" + "a" * 120 + "'\n"
    assert long_code_lines(doc + "# " + "c" * 120 + "\n" + code, 110) == [3]


def test_modules_stay_under_the_line_cap():
    over = {_name(p): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    unexplained = {k: v for k, v in over.items() if k not in ALLOWED_LONG}
    assert not unexplained, f"modules over {MAX_LINES} lines (split them by idea): {unexplained}"


def test_no_statements_joined_on_one_line():
    joined = {_name(p): lines for p in _modules()
              if (lines := joined_lines(p.read_text(encoding="utf-8")))}
    assert not joined, f"statements joined on one line (one statement a line): {joined}"


def test_no_code_line_beyond_the_ruff_line_length():
    limit = _line_length()
    long = {_name(p): lines for p in _modules()
            if (lines := long_code_lines(p.read_text(encoding="utf-8"), limit))}
    assert not long, f"code lines longer than {limit} characters (pyproject's ruff line-length): {long}"


def test_flows_tests_mirror_the_flows_folders():
    """Every test of tests/flows/ sits in the folder named like the flows/ folder it tests
    (tests/flows/run/ for flows/run/); only shared helpers (conftest, direct) stay on top."""
    folders = {p.name for p in (ROOT / "flows").iterdir() if (p / "__init__.py").exists()}
    tests = ROOT / "tests" / "flows"
    misplaced = sorted(_name(p) for p in tests.rglob("test_*.py")
                       if p.parent == tests or p.parent.parent != tests or p.parent.name not in folders)
    assert folders and not misplaced, f"tests outside tests/flows/{{{','.join(sorted(folders))}}}/: {misplaced}"
    empty = sorted(f for f in folders if not any((tests / f).glob("test_*.py")))
    assert not empty, f"flows/ folders without tests in tests/flows/: {empty}"
