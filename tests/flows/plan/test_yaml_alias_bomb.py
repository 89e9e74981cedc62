"""A YAML alias bomb (issue 39.5): nine levels of nine aliases are a 10-line file that
expands to 9^9 values; `ablate check` never finished. Refused in well under a second
with one line naming the file and line, exit 2; ordinary aliases still work."""

from __future__ import annotations

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.contract.yaml_source import read_yaml


def _bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_one_line_naming_the_line(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\n" + _bomb(9))
    with pytest.raises(InputError) as info:
        read_yaml(path)
    assert info.value.path == str(path)
    assert info.value.line == 7  # a5: 9^6 values, the first over the limit
    assert "expands to more than 100,000 values" in info.value.message


def test_check_refuses_a_bomb_with_exit_2(run_cli, capsys, tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text("name: bomb\n" + _bomb(9))
    assert run_cli("check", str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ablate: error: {path}:7: ") and len(err.splitlines()) == 1


def test_shared_aliases_are_visited_once_for_duplicate_keys(tmp_path):
    """Within the limit, a file with many aliases reads quickly, and a duplicate key
    inside an aliased mapping is still found."""
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {k: 1, j: 2}\n" + "".join(f"v{i}: *b\n" for i in range(2000)))
    data, _ = read_yaml(path)
    assert data["v1999"] == {"k": 1, "j": 2}
    path.write_text("base: &b {k: 1, k: 2}\nv: *b\n")
    with pytest.raises(InputError, match="duplicate key"):
        read_yaml(path)


def test_a_recursive_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n")
    with pytest.raises(InputError) as info:
        read_yaml(path)
    assert info.value.line == 1
