"""The trend page in a real headless chromium (scripts/check_report_html.py): no console
errors, its two plots embedded, a screenshot. Skipped where Debian's chromium is not
installed (CI sets ABLATE_REQUIRE_CHROMIUM=1, so there a missing browser fails)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ablate.components.report.sweep_data import load_sweep
from ablate.components.report.trend import TrendRun, trend_table
from ablate.components.report.trend_svg import trend_page
from tests.components.report.html_check import check_html
from tests.components.report.trend_runs import series

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists()
                                and not os.environ.get("ABLATE_REQUIRE_CHROMIUM"),
                                reason="needs Debian's chromium: apt-get install -y chromium")


def test_trend_page_renders(tmp_path):
    runs = [TrendRun(str(f), load_sweep(f)) for f in series(tmp_path / "runs", chinese=True)]
    page = tmp_path / "trend.html"
    page.write_text(trend_page(trend_table(runs), "夜间评测"), encoding="utf-8")
    shot = tmp_path / "trend.png"
    assert check_html().main([str(page), "--screenshot", str(shot), "--min-images", "2"]) == 0
    assert shot.read_bytes().startswith(b"\x89PNG")
