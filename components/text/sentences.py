"""Sentence boundaries for English, Chinese and mixed text, as character spans of the text.

A sentence ends
- at Chinese 。 ｡ and full-width ！ ？ ；, and at … ! ? right after a CJK character,
  repeated marks and closing quotes or brackets 」』”’） included, whether or not white
  space follows (Chinese puts none);
- at Latin sentence ends, by one of two rules (`latin`):
  "space": . ! ? … (repeated, then closing quotes or brackets) followed by white space,
  and blank lines (the chunkers' rule);
  "capital": white space after . ! ? that comes before a capital letter, digit, quote or
  bracket, and every line break (the extractive generator's rule, stricter about
  abbreviations such as "e.g. the").
Spans are in order, trimmed of white space; empty ones are dropped.
"""

from __future__ import annotations

import re
from typing import Literal

from ablate.components.text.cjk import CJK

_CJK_END = f"(?:[。｡！？；]|(?<=[{CJK}])[…!?])[。｡！？；…!?]*[」』”’）]*"
_ENDS = {
    "space": re.compile(f"{_CJK_END}|[.!?…]+[\"'”’)\\]]*(?=\\s)|\\n\\s*\\n"),
    "capital": re.compile(f"{_CJK_END}|(?<=[.!?])\\s+(?=[A-Z0-9\"“(\\[])|\\n+"),
}


def sentence_spans(text: str, latin: Literal["space", "capital"] = "space") -> list[tuple[int, int]]:
    """Character ranges [start, end) of the sentences of `text` (module doc), in order."""
    out = []
    pos = 0
    for m in _ENDS[latin].finditer(text):
        out.append((pos, m.end()))
        pos = m.end()
    out.append((pos, len(text)))
    trimmed = []
    for s, e in out:
        seg = text[s:e]
        s2 = s + (len(seg) - len(seg.lstrip()))
        e2 = e - (len(seg) - len(seg.rstrip()))
        if e2 > s2:
            trimmed.append((s2, e2))
    return trimmed
