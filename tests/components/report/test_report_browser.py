"""The HTML report in a real headless chromium (scripts/check_report_html.py): no console
errors and a screenshot. Skipped where Debian's chromium is not installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ablate.components.report.build import build_report, write_files
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.html_check import check_html
from tests.components.report.synthetic import make_sweep

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")
# CI installs chromium and sets ABLATE_REQUIRE_CHROMIUM=1, so there a missing browser fails.
pytestmark = pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("ABLATE_REQUIRE_CHROMIUM"),
                                reason="needs Debian's chromium: apt-get install -y chromium")


def _script():
    return check_html()


def test_report_renders_without_console_errors(tmp_path):
    folder = make_sweep(tmp_path / "sweep")
    write_files(folder, build_report(load_sweep(folder)))
    shot = tmp_path / "report.png"
    assert _script().main([str(folder / "report.html"), "--screenshot", str(shot),
                           "--min-images", "4"]) == 0
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000


def test_console_error_and_external_resource_fail(tmp_path, capsys):
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><html><body><img src="https://example.invalid/x.png">'
                   '<script>throw new Error("boom")</script></body></html>')
    assert _script().main([str(bad), "--screenshot", str(tmp_path / "bad.png")]) == 1
    err = capsys.readouterr().err
    assert "Uncaught Error: boom" in err and "external resource" in err


def test_browser_finds_the_overview_plot_and_table_first(tmp_path):
    import re
    import shutil
    import subprocess
    import tempfile
    folder = make_sweep(tmp_path / "sweep")
    write_files(folder, build_report(load_sweep(folder)))
    profile = tempfile.mkdtemp(prefix="ablate-chromium-")
    try:
        dom = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                              "--no-first-run", f"--user-data-dir={profile}", "--dump-dom",
                              (folder / "report.html").resolve().as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    body = dom[dom.index("<body"):]
    first_img = re.search(r"<img[^>]*alt=\"([^\"]*)\"", body).group(1)
    assert first_img.startswith("overview:")
    first_table = body[body.index("<table"):body.index("</table>")]
    assert "variable" in first_table and "chunking.size" in first_table and "fusion.rrf_k" in first_table
    assert body.index("<table") < body.index(">Findings<") and body.index("<img") < body.index(">Findings<")


def test_embedded_svg_and_png_pass_and_a_mislabelled_image_fails():
    import base64

    def img(media: str, data: bytes) -> str:
        return f'<img alt="x" src="data:{media};base64,{base64.b64encode(data).decode()}">'
    svg = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 8
    static = _script().static_problems
    assert static(img("image/svg+xml", svg) + img("image/png", png)) == []
    assert static(img("image/png", svg)) == ["image data URI is not image/png"]
    assert static(img("image/svg+xml", png)) == ["image data URI is not image/svg+xml"]
    assert static('<img src="plots/overview.svg">') == ["image not embedded: plots/overview.svg"]
