"""A self-contained HTML page for the Markdown report (inline CSS, no external assets)."""

from __future__ import annotations

import html

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
"""


def render_html(md_text: str, title: str) -> str:
    body = markdown.markdown(md_text, extensions=["tables", "md_in_html"])
    return (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")
