#!/usr/bin/env python3
"""Check a report.html in a real headless browser (Debian's chromium).

Passes (exit 0) when the page is self-contained (no external http(s) resources, every
<img> an embedded SVG or PNG data URI), its links resolve (an `#anchor` names an id or
name in the page, a relative link a file beside it), chromium renders it with no console errors, and the
screenshot is written. Exit 1 on any failure, with the reasons on stderr; exit 2 when
chromium or the file is missing.

    python scripts/check_report_html.py runs/<sweep>/report.html --screenshot shot.png
"""

from __future__ import annotations

import argparse
import base64
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
CONSOLE_ERRORS = re.compile(r"Uncaught|ERROR:CONSOLE|Failed to load resource|Refused to",
                            re.IGNORECASE)
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE)
IMG_SRC = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]*)\"", re.IGNORECASE)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# each embedded image's media type and how its bytes begin
MAGIC = {"image/svg+xml": b"<?xml", "image/png": PNG_MAGIC}


def static_problems(html: str) -> list[str]:
    """Problems visible without a browser: external resources, images not embedded."""
    out = []
    if EXTERNAL.search(html):
        out.append("page references an external resource (not self-contained)")
    for src in IMG_SRC.findall(html):
        media = next((m for m in MAGIC if src.startswith(f"data:{m};base64,")), None)
        if media is None:
            out.append(f"image not embedded: {src[:60]}")
            continue
        try:
            data = base64.b64decode(src.split(",", 1)[1], validate=True)
        except ValueError:
            out.append("image data URI is not valid base64")
            continue
        if not data.startswith(MAGIC[media]):
            out.append(f"image data URI is not {media}")
    return out


HREF = re.compile(r"""<a\b[^>]*\bhref\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
TARGET = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def link_problems(html: str, folder: Path | None) -> list[str]:
    """Links that lead nowhere: an `#anchor` no element of the page has, a relative link
    to a file that is not there (beside the page in `folder`; not checked without one).
    External links (http, mailto) are the self-contained check's business."""
    from urllib.parse import unquote, urlsplit
    targets = set(TARGET.findall(html))
    out = []
    for href in HREF.findall(html):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue
        if not parts.path:
            if parts.fragment and unquote(parts.fragment) not in targets:
                out.append(f"link to a missing anchor: {href}")
        elif folder is not None and not (folder / unquote(parts.path)).exists():
            out.append(f"link to a missing file: {href}")
    return out


def render(html_path: Path, screenshot: Path, chromium: str, timeout: float = 90.0
           ) -> tuple[list[str], str]:
    """Render in chromium; returns (console error lines, full log)."""
    with tempfile.TemporaryDirectory(prefix="ablate-chromium-") as profile:
        cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,2000",
               f"--screenshot={screenshot}", html_path.resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    log = proc.stdout + proc.stderr
    errors = [line.strip() for line in log.splitlines() if CONSOLE_ERRORS.search(line)]
    if proc.returncode != 0:
        errors.append(f"chromium exited with code {proc.returncode}")
    return errors, log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--screenshot", type=Path, default=None,
                    help="PNG to write (default: next to the HTML, report.png)")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--min-images", type=int, default=0, help="Fail with fewer <img> than this.")
    args = ap.parse_args(argv)
    if not args.html.is_file():
        print(f"check_report_html: no such file: {args.html}", file=sys.stderr)
        return 2
    if not Path(args.chromium).exists():
        print(f"check_report_html: chromium not found at {args.chromium} "
              "(apt-get install -y chromium)", file=sys.stderr)
        return 2
    shot = args.screenshot or args.html.with_suffix(".png")
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    html = args.html.read_text(encoding="utf-8")
    problems = static_problems(html) + link_problems(html, args.html.parent)
    n_img = len(IMG_SRC.findall(html))
    if n_img < args.min_images:
        problems.append(f"{n_img} images, expected at least {args.min_images}")
    errors, _ = render(args.html, shot, args.chromium)
    problems += [f"console: {e}" for e in errors]
    if not shot.is_file() or not shot.read_bytes().startswith(PNG_MAGIC):
        problems.append("no screenshot produced")
    if problems:
        for p in problems:
            print(f"FAIL {p}", file=sys.stderr)
        return 1
    print(f"ok: {args.html} renders in chromium with no console errors, {n_img} embedded "
          f"images; screenshot {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
