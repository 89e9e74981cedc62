"""What becomes a node of the graph path's graph: a registry of node extractors.

A node extractor is a function `(text, analyzer) -> list of node names` registered in
NODE_EXTRACTORS by name (`retrieval.graph.extractor` names one); a node name is the
analyzer's terms of a span joined by one space, so a question's words, analysed the same
way, find it (search.link). A plugin registers its own (an LLM's entities, say) with the
config fields it reads, and the path is unchanged.

The built-in `terms` extractor, without an LLM:

- English (any Latin-script text): capitalised spans, one to MAX_SPAN_WORDS capitalised
  words in a row, which may be joined by a short lower-case connector ("University of
  Texas", "Lord of the Rings"): names, titles and other entities. A span cut short by a
  line break or a full stop is two spans, so a title on its own line is a node. Leading
  function words ("The", "In", "However", "What") are not part of a span.
- Chinese (and other CJK text): every analyzer term of two or more CJK characters
  (jieba's words under `zh`; bigrams under `cjk_bigram`), and the capitalised Latin
  spans in it as above.

`words` makes every analyzer term but function words a node: a plain term co-occurrence
graph, the ablation of `terms`' entity spans.

The graph build drops nodes found in too many chunks (`retrieval.graph.max_df`), so
frequent words never become hubs.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ablate.components.contract.registry import Registry
from ablate.components.retrieval.lexical.analyzer import ENGLISH_STOP_WORDS
from ablate.components.text.cjk import CJK

Extractor = Callable[[str, Callable[[str], Sequence[str]]], list[str]]
NODE_EXTRACTORS: Registry[Extractor] = Registry("graph node extractor",
                                                config_field="retrieval.graph.extractor")

MAX_SPAN_WORDS = 6
# a capitalised word: an ASCII capital, then word characters, apostrophes, hyphens, and
# full stops inside it ("U.S", not the sentence's last full stop)
_CAP = r"[A-Z](?:[\w'’-]|\.(?=\w))*"
_CONNECT = r"(?:of|the|de|du|la|le|von|van|der|for|in|on|at|y)"
SPAN = re.compile(rf"\b{_CAP}(?:[ \t]+(?:{_CONNECT}[ \t]+){{0,2}}{_CAP})*")
_CJK_TERM = re.compile(f"^[{CJK}]{{2,}}$")

# single capitalised words that are no entity: sentence openers, pronouns, question words
FUNCTION_WORDS = ENGLISH_STOP_WORDS | frozenset(
    "he she his her hers him we our you your i my me its it's what which who whom whose "
    "when where why how after before during however although though while also since "
    "in on at from until unless because both each many most some all one two three "
    "there here yes so than those these this that later early".split())


def capitalised_spans(text: str) -> list[str]:
    """The capitalised spans of `text` in reading order (a span's trailing connectors are
    not part of it; spans longer than MAX_SPAN_WORDS words are cut into pieces)."""
    out: list[str] = []
    for m in SPAN.finditer(text):
        words = m.group(0).split()
        for i in range(0, len(words), MAX_SPAN_WORDS):
            piece = words[i:i + MAX_SPAN_WORDS]
            while piece and not piece[-1][:1].isupper():
                piece.pop()
            while piece and piece[0].lower() in FUNCTION_WORDS:  # "The", "In", "However"
                piece.pop(0)
            if piece:
                out.append(" ".join(piece).rstrip("'’"))
    return out


def span_nodes(text: str, analyzer: Callable[[str], Sequence[str]]) -> list[str]:
    """The node names of the capitalised spans of `text` (analysed)."""
    return [" ".join(terms) for terms in map(analyzer, capitalised_spans(text)) if terms]


@NODE_EXTRACTORS.register("terms")
def terms(text: str, analyzer: Callable[[str], Sequence[str]]) -> list[str]:
    """Capitalised spans (English names and titles) and CJK words of two or more
    characters (module docstring); each name once, in order of first occurrence."""
    found = span_nodes(text, analyzer)
    found += [t for t in analyzer(text) if _CJK_TERM.match(t)]
    return list(dict.fromkeys(found))


@NODE_EXTRACTORS.register("words")
def words(text: str, analyzer: Callable[[str], Sequence[str]]) -> list[str]:
    """Every analyzer term but function words and numbers (a plain term co-occurrence
    graph, to ablate against `terms`' entities); each once, in order of first occurrence."""
    return list(dict.fromkeys(t for t in analyzer(text)
                              if t not in FUNCTION_WORDS and not t.isdigit()))
