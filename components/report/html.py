"""A self-contained HTML page for the Markdown report: inline CSS, plots (SVG or PNG)
embedded as base64 data URIs, no scripts and no external assets (it opens offline, from e-mail, from
an MLflow artifact view)."""

from __future__ import annotations

import base64
import html
import re
from typing import Mapping

import markdown

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1b1f24;line-height:1.45}
table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.9em}
th,td{border:1px solid #d0d7de;padding:.25em .6em}th{background:#f6f8fa}
td:nth-child(n+3){text-align:right;font-variant-numeric:tabular-nums}
code{background:#f6f8fa;padding:0 .25em;border-radius:3px}
details{margin:1em 0}summary{cursor:pointer;font-weight:600}
h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em}
img{max-width:100%;height:auto;display:block;margin:.5em 0}
.scroll,table{max-width:100%}table{display:block;overflow-x:auto}
th a{color:inherit;text-decoration:underline dotted}
"""
_SRC = re.compile(r'src="(plots/[^"]+\.(svg|png))"')
MEDIA = {"svg": "image/svg+xml", "png": "image/png"}


def embed_images(body: str, images: Mapping[str, bytes]) -> str:
    """Replace src="plots/x.svg" (or .png) by a data URI when `images` has that file."""
    def sub(m: re.Match) -> str:
        data = images.get(m.group(1))
        if data is None:
            return m.group(0)
        return f'src="data:{MEDIA[m.group(2)]};base64,{base64.b64encode(data).decode("ascii")}"'
    return _SRC.sub(sub, body)


def render_html(md_text: str, title: str, images: Mapping[str, bytes] | None = None) -> str:
    body = markdown.markdown(md_text, extensions=["tables", "md_in_html"])
    body = embed_images(body, images or {})
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")
