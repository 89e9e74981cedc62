"""What counts as CJK text: one character class shared by analyzers, metrics and generators.

"CJK" here is Han (the unified ideographs, extensions A to F and the compatibility
ideographs), Japanese kana letters (incl. half-width katakana; not the kana middle dot)
and Hangul (syllables and jamo):
the scripts written without spaces between words, where a character, not a
whitespace-separated run, is the sensible unit of matching.
"""

from __future__ import annotations

import re
from typing import Sequence

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
KANA = "\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
CJK = HAN + KANA + HANGUL  # for use inside a regex character class

CJK_CHAR = re.compile(f"[{CJK}]")
_HAN_CHAR = re.compile(f"[{HAN}]")


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK character."""
    return CJK_CHAR.search(text) is not None


def script_counts(texts: Sequence[str], max_texts: int = 200,
                  max_chars: int = 2000) -> tuple[int, int, int, int]:
    """(texts sampled, letters, CJK characters, Han characters) over a deterministic sample.

    The sample is up to `max_texts` texts at evenly spaced positions, the first
    `max_chars` characters of each; letters are characters with str.isalpha() (CJK
    characters included, digits and punctuation not).
    """
    n = len(texts)
    picks = [texts[i * n // max_texts] for i in range(max_texts)] if n > max_texts else list(texts)
    letters = cjk = han = 0
    for text in picks:
        head = text[:max_chars]
        letters += sum(ch.isalpha() for ch in head)
        cjk += len(CJK_CHAR.findall(head))
        han += len(_HAN_CHAR.findall(head))
    return len(picks), letters, cjk, han
