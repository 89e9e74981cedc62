"""Citation markers in a model's reply (`prompt.cite`), parsed deterministically.

The prompt numbers the context passages "[1] ...", "[2] ..." (prompt.format_context) and,
with `prompt.cite`, asks for the numbers of the passages used in square brackets after
the answer. A marker is a bracketed list of passage numbers:

- brackets `[...]`, full-width `［...］`, lenticular `【...】` or `〔...〕` (Chinese models
  write these);
- passage numbers of 1 to 3 ASCII or full-width digits (a longer number, an ISBN or
  `[12345]`, is not a marker); several numbers separated by `,` `;` `，` `、` `；`, `and`,
  `&`, `和`, `及`, `与`; a range `1-3` (also `–`, `－`, `~`, `～`, `至`, `到`) stands for
  1, 2, 3 (a range of more than 20 numbers for its two ends);
- an optional word before a number: `passage(s)`, `source(s)`, `ref(s)`, `段落`, `段`,
  `文段`, `资料`, `第` (`[Passage 2]`, `【段落2】`, `【第2段】`).

Anything else in brackets (`[1995 census]`, `[a]`) is not a marker, nor are unbracketed
numbers or `(1)`. Stripping also removes a wrapper that holds only markers (`(see [1])`,
`（来源：[1]）`) and a trailing `Sources: [1]` / `来源：[1]`. Numbers are kept as written, in the order of first appearance, each
once, even outside the context's passages (0, or beyond the last one): the citation
metrics count those as wrong citations (ablate.components.metrics.citation).

The answer is scored without its markers (`strip_citations`), so "Paris [1]" is the
answer "Paris" for EM/F1 and refusal detection; the passage numbers go to
`Answer.citations`.
"""

from __future__ import annotations

import re

from ablate.components.generation.prompt import first_answer_line

MAX_RANGE = 20  # a range longer than this is read as its two ends

_OPEN, _CLOSE = r"[\[［【〔]", r"[\]］】〕]"
_NUM = r"(?<![0-9０-９])[0-9０-９]{1,3}(?![0-9０-９])"
_WORD = r"(?:(?:passages?|sources?|refs?|段落|文段|段|资料|資料|第)\s*)?"
_RANGE = r"\s*(?:[-–—－~～]|至|到)\s*"
_ITEM = rf"{_WORD}{_NUM}(?:{_RANGE}{_NUM})?(?:\s*段)?"
_SEP = r"\s*(?:[,;，、；]|and|&|和|及|与|與)\s*"
MARKER = re.compile(rf"{_OPEN}\s*{_ITEM}(?:{_SEP}{_ITEM})*\s*{_CLOSE}", re.IGNORECASE)
_ITEM_RE = re.compile(rf"({_NUM})(?:{_RANGE}({_NUM}))?")
_MARKERS = rf"{MARKER.pattern}(?:\s*[,，;；]?\s*{MARKER.pattern})*"
_LEAD = r"(?:see|cf\.?|sources?|references?|refs?|来源|來源|参见|參見|出处|出處|参考|參考)"
# a bracketed wrapper of markers only, "(see [1])"; a trailing "Sources: [1]"; a marker
_BEFORE = re.compile(rf"[ \t]*[(（]\s*(?:{_LEAD}\s*[:：]?\s*)?{_MARKERS}\s*[)）]"
                     rf"|[ \t]*{_LEAD}\s*[:：]\s*{_MARKERS}[ \t]*$"
                     rf"|[ \t]*{MARKER.pattern}", re.IGNORECASE | re.MULTILINE)


def _numbers(marker: str) -> list[int]:
    out: list[int] = []
    for m in _ITEM_RE.finditer(marker):
        a = int(m.group(1))  # int() reads full-width digits too
        b = int(m.group(2)) if m.group(2) else a
        out.extend(range(a, b + 1) if 0 <= b - a <= MAX_RANGE else (a, b))
    return out


def parse_citations(text: str) -> tuple[int, ...]:
    """The passage numbers cited in `text`, in order of first appearance, each once."""
    seen: dict[int, None] = {}
    for m in MARKER.finditer(text):
        for n in _numbers(m.group(0)):
            seen.setdefault(n, None)
    return tuple(seen)


def strip_citations(text: str) -> str:
    """`text` without its citation markers (and the blanks before them), each line trimmed."""
    removed = _BEFORE.sub("", text)
    return "\n".join(line.strip() for line in removed.split("\n")).strip()


def cited_reply(reply: str) -> tuple[str, tuple[int, ...]]:
    """(answer, passages cited) of a model's reply under `prompt.cite`: the markers of the
    whole reply (a model may put them on a line of their own after the answer), and its
    first answer line (prompt.first_answer_line) without them."""
    return first_answer_line(strip_citations(reply)), parse_citations(reply)
