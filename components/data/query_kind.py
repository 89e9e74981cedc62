"""`query_kind`: a rule-based tag of what a question asks for, where the data has none.

Only kinds that rules can decide honestly, checked in this order (the first that holds):

- `exact_match`: the question names something that must be matched exactly: a quoted
  string ("...", '...', “...”, 「...」, 《...》), a code or identifier (a token mixing
  letters and digits such as `RFC2616`, `SKU-4471`, `B0-42`; or joined by `_`, `::`, `#`,
  a dotted version `3.2.1`), or a number of three or more digits (`1998`, `404`).
- `negation`: a negation cue. English: not, no, never, none, nor, without, except,
  neither, n't; Chinese: 不, 没, 没有, 无, 非, 未, 除了, 并非 (not inside 不同, 不仅, 不但,
  不久, 不断, 不过, 无论, 无线, 非常, 非洲, 未来, where they negate nothing).
- `multi_entity`: two or more distinct named entities: capitalised spans, as the graph
  path's node extractor finds them (a question's first word alone excluded: it is
  capitalised anyway), or quoted names.
- `other`: everything else (paraphrased, colloquial, single-entity questions).

The rules are deliberately narrow: a question tagged `other` may still be any of these
kinds. A column `query_kind` in the questions file wins over the tagger.
"""

from __future__ import annotations

import re

KINDS = ("exact_match", "negation", "multi_entity", "other")

QUOTED = re.compile(r"\"[^\"]{1,80}\"|“[^”]{1,80}”|「[^」]{1,80}」|《[^》]{1,80}》|『[^』]{1,80}』"
                    r"|(?<!\w)'[^']{1,80}'(?!\w)")
IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9_.:#-]*[A-Za-z])(?=[A-Za-z0-9_.:#-]*\d)"
                        r"[A-Za-z0-9][A-Za-z0-9_.:#-]*[A-Za-z0-9]\b"
                        r"|\b\w+(?:_|::)\w+\b|\b\d+\.\d+\.\d+\b")
NUMBER = re.compile(r"(?<![\w.])\d{3,}(?![\w.])")
ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th|s)$", re.IGNORECASE)  # 21st, 1990s: no codes
NEGATION_EN = re.compile(r"\b(?:not|no|never|none|nor|without|except|neither)\b|n't\b",
                         re.IGNORECASE)
# single characters only outside the common words where they negate nothing: 不同
# (different), 不仅 (not only: adds), 非常 (very), 非洲 (Africa), 无论 (whatever), 未来 (future)
NEGATION_ZH = re.compile(r"除了|并非|没有|没|不(?!同|仅|但|久|断|过)|无(?!论|线)|非(?!常|洲)|未(?!来)")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:[ \t]+(?:(?:of|the|de|von|van)[ \t]+){0,2}"
                          r"[A-Z][\w'’-]*)*")


def _codes(text: str) -> list[str]:
    return [m.group(0) for m in IDENTIFIER.finditer(text) if not ORDINAL.match(m.group(0))]


def is_exact_match(text: str) -> bool:
    return bool(QUOTED.search(text) or _codes(text) or NUMBER.search(text))


def is_negation(text: str) -> bool:
    return bool(NEGATION_EN.search(text) or NEGATION_ZH.search(text))


def entities(text: str) -> set[str]:
    """The question's named entities: capitalised spans (not its first word alone) and
    quoted names."""
    found = {m.group(0) for m in _CAPITALISED.finditer(text) if m.start() > 0}
    first = _CAPITALISED.match(text)
    if first and " " in first.group(0):  # a multi-word name opening the question
        found.add(first.group(0))
    found |= {m.group(0).strip("\"'“”「」《》『』") for m in QUOTED.finditer(text)}
    return found


def query_kind(text: str) -> str:
    """The question's kind (module docstring)."""
    if is_exact_match(text):
        return "exact_match"
    if is_negation(text):
        return "negation"
    if len(entities(text)) >= 2:
        return "multi_entity"
    return "other"
