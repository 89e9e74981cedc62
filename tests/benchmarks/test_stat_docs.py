"""docs/statistics.md's validity tables are benchmarks/stat_validity.py's output (issue 38,
item 6): the page holds the block `--docs` writes, with the command that made it, and
every scenario the benchmark runs today, the corners included (a scenario added to the
benchmark without regenerating the page fails here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("stat_validity_docs", ROOT / "benchmarks" / "stat_validity.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["stat_validity_docs"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_statistics_page_holds_the_generated_tables_of_every_scenario():
    sv = _load()
    page = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert sv.DOCS_BEGIN in page and sv.DOCS_END in page
    block = page.split(sv.DOCS_BEGIN, 1)[1].split(sv.DOCS_END, 1)[0]
    assert "python benchmarks/stat_validity.py" in block and "--docs" in block
    for sc in sv.SCENARIOS:
        assert f"| {sc.name} |" in block, sc.name
    for corner in ("dominant 40 %", "changes in 2 of 50 docs", "skewed cluster effects",
                   "Non-inferiority gate on 0/1 metrics", "few documents change"):
        assert corner in block, corner


def test_write_docs_replaces_only_the_block(tmp_path):
    sv = _load()
    page = tmp_path / "p.md"
    page.write_text(f"before\n{sv.DOCS_BEGIN}\nold\n{sv.DOCS_END}\nafter\n", encoding="utf-8")
    sv.write_docs(str(page), "new table")
    assert page.read_text(encoding="utf-8") == f"before\n{sv.DOCS_BEGIN}\nnew table\n{sv.DOCS_END}\nafter\n"
