"""Deterministic query perturbations for robustness pairs: the same question, the same gold
spans, the query text changed the way users change it. A perturbation is a swept variable
like any other (`query.perturbation: [none, typo, casing]`); each is a pure function of
the query text and a seed (the question id), so a re-run perturbs identically.

- `typo`: two adjacent characters swapped inside one word (a Latin word of 4+ letters, or
  a run of 2+ CJK characters), the position drawn from a hash of the seed;
- `casing`: Latin letters lower-cased (upper-cased when there is nothing to lower);
- `stopword`: one stop word dropped (English function words; Chinese particles such as
  的, 了, 吗, 呢), the occurrence drawn from the seed;
- `punctuation`: every punctuation mark removed (ASCII and CJK/full-width); a question
  without any gets `?` (`？` when it is Chinese);
- `script`: traditional Chinese to simplified, or simplified to traditional when nothing
  changes that way (OpenCC tables, opencc-python-reimplemented);
- `fullwidth`: ASCII letters, digits and punctuation to their full-width forms, spaces to
  the ideographic space (as typed with a CJK input method).
A perturbation that finds nothing to change returns the text unchanged (the question is
then its own pair; counted, never dropped).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache
from typing import Callable

from ablate.components.contract.vocab import PERTURBATION_NAMES
from ablate.components.text.cjk import CJK, has_cjk

NONE = "none"
STOP_EN = frozenset("a an the of in on at to for by with from and or is are was were be been "
                    "do does did what which who whom whose when where why how that this these "
                    "those it its as into than".split())
STOP_ZH = ("的", "了", "吗", "呢", "吧", "啊", "是", "在", "和", "与")
_WORD = re.compile(r"[A-Za-z]{4,}")
_CJK_RUN = re.compile(f"[{CJK}]{{2,}}")
_TOKEN = re.compile(r"[A-Za-z]+|\S")


def _pick(seed: str, salt: str, n: int) -> int:
    """A position in range(n) drawn from a hash of (seed, salt): deterministic."""
    digest = hashlib.sha256(f"{seed}\x1f{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n


def typo(text: str, seed: str) -> str:
    spans = [m.span() for m in _WORD.finditer(text)] + [m.span() for m in _CJK_RUN.finditer(text)]
    if not spans:
        return text
    start, end = sorted(spans)[_pick(seed, "typo-word", len(spans))]
    i = start + _pick(seed, "typo-pos", end - start - 1)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def casing(text: str, seed: str) -> str:
    lowered = text.lower()
    return lowered if lowered != text else text.upper()


def stopword(text: str, seed: str) -> str:
    hits = [m.span() for m in re.finditer(r"[A-Za-z]+", text) if m.group().lower() in STOP_EN]
    hits += [(m.start(), m.end()) for w in STOP_ZH for m in re.finditer(re.escape(w), text)]
    if not hits:
        return text
    start, end = sorted(hits)[_pick(seed, "stopword", len(hits))]
    out = text[:start] + text[end:]
    return re.sub(r"\s{2,}", " ", out).strip()


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") or ch in "`^+=|~<>$"


def punctuation(text: str, seed: str) -> str:
    stripped = "".join(ch for ch in text if not _is_punct(ch))
    if stripped != text:
        return re.sub(r"\s{2,}", " ", stripped).strip()
    return text + ("？" if has_cjk(text) else "?")


@lru_cache(maxsize=2)
def _opencc(config: str):
    from opencc import OpenCC
    return OpenCC(config)


def script(text: str, seed: str) -> str:
    simplified = _opencc("t2s").convert(text)
    return simplified if simplified != text else _opencc("s2t").convert(text)


def fullwidth(text: str, seed: str) -> str:
    return "".join("\u3000" if ch == " " else chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch
                   for ch in text)


PERTURBATIONS: dict[str, Callable[[str, str], str]] = {
    "typo": typo, "casing": casing, "stopword": stopword, "punctuation": punctuation,
    "script": script, "fullwidth": fullwidth,
}
NAMES = (NONE, *PERTURBATIONS)
if NAMES != PERTURBATION_NAMES:  # the vocabulary the config validates against
    raise ImportError(f"perturbations {NAMES} are not the vocabulary {PERTURBATION_NAMES}")


def perturb(name: str, text: str, seed: str) -> str:
    """`text` under the perturbation `name` (`none`: unchanged), seeded by `seed`."""
    if name == NONE:
        return text
    return PERTURBATIONS[name](text, seed)
