"""Analyzers for Chinese and mixed Chinese-English text, registered into ANALYZERS.

- zh: jieba word segmentation in search-engine mode (`cut_for_search`: long words are
  also indexed by their dictionary sub-words), optionally with a user dictionary.
- cjk_bigram: dictionary-free overlapping character bigrams of each CJK run (a run of
  one character gives that character).
- auto: not an analyzer but a request to pick one per corpus with `choose_analyzer`.

Both analyzers fold the text first (NFKC, so full-width letters and digits become ASCII,
then lower case), keep Latin words and numbers as runs of word characters (the same
tokens as the `default` analyzer) and drop whitespace and punctuation, ASCII, Chinese
and full-width alike.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from pathlib import Path
from typing import Sequence

from ablate.components.contract.errors import InputError
from ablate.components.retrieval.lexical.analyzer import ANALYZERS, Analyzer
from ablate.components.text.cjk import CJK, script_counts

USER_DICT_FIELD = "retrieval.analyzer_options.user_dict"
CJK_SHARE_THRESHOLD = 0.5

_WORD = re.compile(r"\w+")
_RUN = re.compile(f"(?P<cjk>[{CJK}]+)|(?:(?![{CJK}])\\w)+")
_TAG = re.compile(r"[a-z]+")


def fold(text: str) -> str:
    """NFKC (full-width ASCII to half-width, compatibility forms to plain) then lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def read_user_dict(path: str) -> list[tuple[str, int | None, str | None]]:
    """(word, freq or None, tag or None) per line of a jieba user dictionary.

    Lines are `word [freq] [tag]` (UTF-8, fields separated by white space, blank lines
    skipped); freq is a non-negative integer, tag lower-case letters. Words are folded
    like the analyzed text. Anything else raises InputError naming file, line and field.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the user dictionary: {exc.strerror}", path=path,
                         field=USER_DICT_FIELD) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte {exc.start})", path=path,
                         line=raw.count(b"\n", 0, exc.start) + 1, field=USER_DICT_FIELD) from None
    entries: list[tuple[str, int | None, str | None]] = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        word, rest = fold(parts[0]), parts[1:]
        freq = int(rest.pop(0)) if rest and rest[0].isdecimal() else None
        tag = rest.pop(0) if rest and _TAG.fullmatch(rest[0]) else None
        if rest or not _WORD.search(word):
            raise InputError(f"expected 'word [freq] [tag]' (freq a non-negative integer, tag "
                             f"lower-case letters), got {line.strip()!r}", path=path, line=n,
                             field=USER_DICT_FIELD)
        entries.append((word, freq, tag))
    return entries


def _jieba_tokenizer(user_dict: str | None):
    """A private, initialised jieba.Tokenizer (the global one is left alone)."""
    entries = read_user_dict(user_dict) if user_dict else []
    import jieba  # lazily: only analyzers named zh need it

    logging.getLogger("jieba").setLevel(logging.WARNING)  # its start-up notes go to stderr
    tk = jieba.Tokenizer()
    tk.initialize()
    for word, freq, tag in entries:
        tk.add_word(word, freq, tag)
    return tk


@ANALYZERS.register("zh", reads=("retrieval.analyzer_options",), libraries=("jieba",),
                    files=("retrieval.analyzer_options.user_dict",))
def _zh(user_dict: str | None = None) -> Analyzer:
    """jieba search-engine segmentation of the folded text; Latin words and numbers kept."""
    tk = _jieba_tokenizer(user_dict)

    def split(text: str) -> list[str]:
        return [t for w in tk.cut_for_search(fold(text)) for t in _WORD.findall(w)]

    return Analyzer("zh", split=split)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping bigrams of each CJK run of the folded text, other word runs whole."""
    out: list[str] = []
    for m in _RUN.finditer(fold(text)):
        run = m.group(0)
        if m.group("cjk") and len(run) > 1:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


@ANALYZERS.register("cjk_bigram")
def _cjk_bigram() -> Analyzer:
    """Overlapping CJK character bigrams; Latin words and numbers kept whole."""
    return Analyzer("cjk_bigram", split=cjk_bigrams)


@ANALYZERS.register("auto")
def _auto() -> Analyzer:
    """Not an analyzer: resolve 'auto' per corpus with choose_analyzer first."""
    raise InputError("analyzer 'auto' is chosen per corpus: resolve it with "
                     "ablate.components.retrieval.lexical.analyzers_zh.choose_analyzer(texts) and use the "
                     "name it returns", field="retrieval.analyzer")


def choose_analyzer(texts: Sequence[str]) -> tuple[str, str]:
    """(analyzer name, reason) for a corpus: 'zh' when CJK characters are more than half
    of the letters of a deterministic sample of `texts` (see cjk.script_counts), else
    'default'. A CJK corpus that is mostly kana or Hangul (Japanese, Korean), where a
    Chinese dictionary does not fit, gets the dictionary-free 'cjk_bigram'."""
    n, letters, cjk, han = script_counts(texts)
    if not letters:
        return "default", f"no letters in a sample of {n} texts"
    share = cjk / letters
    where = f"{share:.0%} of the letters in a sample of {n} texts are CJK"
    if share <= CJK_SHARE_THRESHOLD:
        return "default", f"{where} (at most {CJK_SHARE_THRESHOLD:.0%})"
    if han * 2 < cjk:
        return "cjk_bigram", f"{where}, but only {han / cjk:.0%} of them are Han (not Chinese)"
    return "zh", f"{where} (more than {CJK_SHARE_THRESHOLD:.0%})"
