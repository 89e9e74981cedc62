"""`extractive`: a fast, model-free baseline that copies a span from the context.

1. Split the packed passages into sentences (ablate.components.text.sentences: Latin and Chinese
   sentence ends; character offsets kept). A CJK character counts as one word.
2. Support of a sentence = IDF-weighted share of the question's content terms it
   contains (IDF over the context's sentences, so a rare question term that is missing
   costs more). Refuse when the best support is below `generator.threshold`.
3. In the best sentence, candidate spans are runs of words not in the question, cut at
   , ; : ( ) (and ，、；：（）「」『』《》; not a comma between digits) and trimmed of stop
   words; the span nearest to the question's terms wins, with a bonus when the question's
   type (when / how many / who / where) fits the span (digits, capitalised words). Ties go
   to the earlier sentence / span.
   The answer is that span grown to a whole answer (whole_span.py): from its first word
   to the end of its clause, in whole words (Chinese: jieba's word boundaries), never a
   fragment such as `s`, `n't`, `O` or one Chinese character (then the clause, else the
   sentence).
4. It cites the passage it copied from (`Answer.citations`: that passage's number in the
   prompt, with or without `prompt.cite`; () when it refuses), so the citation metrics
   score every extractive run; the answer text is the same either way.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from pydantic import Field

from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.generation.base import GENERATORS, BaseGenerator
from ablate.components.generation.settings import GeneratorSettings
from ablate.components.generation.whole_span import is_break, whole_answer
from ablate.components.metrics.answer import STOPWORDS
from ablate.components.text.cjk import CJK
from ablate.components.text.sentences import sentence_spans
from ablate.components.text.tokenizer import get_tokenizer

MAX_SPAN_WORDS = 8  # candidate spans scored (the answer then runs to the clause's end)
MAX_ANSWER_WORDS = 30
# A CJK character is a word of its own; other words are runs of word characters.
_WORD = re.compile(f"[{CJK}]|(?:(?![{CJK}])\\w)+(?:['’.-](?:(?![{CJK}])\\w)+)*")
_NUMERIC_Q = re.compile(r"^(when|what year|which year|how (many|much|long|old|far|tall|big))\b")
_NAME_Q = re.compile(r"^(who|whom|whose|where|which (person|city|country|team))\b")


def _stem(w: str) -> str:
    """Very light normalisation for term matching (case, possessive, plural s)."""
    w = w.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


@dataclass(frozen=True)
class _Sentence:
    text: str
    order: int
    words: tuple[tuple[int, int, str], ...]  # (start, end, stem) within text
    passage: int = 1  # the number of the passage it comes from (1-based, prompt order)


def _sentences(context: PackedContext) -> list[_Sentence]:
    out: list[_Sentence] = []
    for number, p in enumerate(context.passages, 1):
        for text in (p.text[a:b] for a, b in sentence_spans(p.text, latin="capital")):
            words = tuple((w.start(), w.end(), _stem(w.group(0))) for w in _WORD.finditer(text))
            if words:
                out.append(_Sentence(text, len(out), words, number))
    return out


def _question_terms(question: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(question) if w.lower() not in STOPWORDS}


def _support(sent: _Sentence, terms: set[str], idf: dict[str, float]) -> float:
    # math.fsum is exact, so the sums do not depend on the set's (hash-seeded) order;
    # a plain sum over a set made answers depend on PYTHONHASHSEED.
    have = {s for _, _, s in sent.words}
    total = math.fsum(idf[t] for t in terms)
    return math.fsum(idf[t] for t in terms if t in have) / total if total else 0.0


def _candidate_spans(sent: _Sentence, terms: set[str]) -> list[tuple[int, int]]:
    """Word-index ranges [i, j) of non-question words, cut at punctuation, stop words trimmed."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for k, (_, _, stem) in enumerate(sent.words):
        if start is not None and (stem in terms or is_break(sent.text, sent.words, k)):
            runs.append((start, k))
            start = None
        if stem not in terms and start is None:
            start = k
    if start is not None:
        runs.append((start, len(sent.words)))
    return [r for r in (_trim(sent, i, j) for i, j in runs) if r[0] < r[1]]


def _trim(sent: _Sentence, i: int, j: int) -> tuple[int, int]:
    """Drop stop words at both ends of the word range [i, j)."""
    while i < j and sent.words[i][2] in STOPWORDS:
        i += 1
    while j > i and sent.words[j - 1][2] in STOPWORDS:
        j -= 1
    return i, j


def _numeric_core(sent: _Sentence, i: int, j: int) -> tuple[int, int]:
    """First to last word with a digit, plus one following unit word; unchanged if none."""
    digits = [k for k in range(i, j) if any(ch.isdigit() for ch in sent.words[k][2])]
    if not digits:
        return i, j
    end = digits[-1] + 1
    if end < j and sent.words[end][2] not in STOPWORDS:
        end += 1
    return digits[0], end


def _best_span(sent: _Sentence, question: str, terms: set[str]) -> str:
    matched = [k for k, (_, _, s) in enumerate(sent.words) if s in terms]
    spans = _candidate_spans(sent, terms)
    if not spans or not matched:
        return sent.text.strip()
    qlow = question.strip().lower()
    numeric, name = bool(_NUMERIC_Q.match(qlow)), bool(_NAME_Q.match(qlow))
    best: tuple[float, int, int] | None = None
    for i, j in spans:
        if numeric:  # "in the 10th and 11th centuries gave" -> "10th and 11th centuries"
            i, j = _numeric_core(sent, i, j)
        if j - i > MAX_SPAN_WORDS:  # keep the end nearest to the question's words
            after = min(abs(k - i) for k in matched)
            before = min(abs(k - (j - 1)) for k in matched)
            i, j = (i, i + MAX_SPAN_WORDS) if after <= before else (j - MAX_SPAN_WORDS, j)
            i, j = _trim(sent, i, j)
        dist = min(min(abs(k - i), abs(k - (j - 1))) for k in matched)
        text = sent.text[sent.words[i][0]:sent.words[j - 1][1]]
        score = 1.0 / (1.0 + dist) - 0.01 * (j - i)
        if numeric and any(ch.isdigit() for ch in text):
            score += 0.5
        if name and any(sent.text[ws].isupper() for ws, _, _ in sent.words[i:j]):
            score += 0.5
        if best is None or score > best[0] + 1e-12:
            best = (score, i, j)
    assert best is not None
    _, i, j = best
    return whole_answer(sent.text, sent.words, i, j, MAX_ANSWER_WORDS)


def extract_answer(question: str, context: PackedContext | None,
                   threshold: float) -> tuple[str | None, float]:
    """(answer span or None when refusing, support of the best sentence)."""
    span, support, _ = extract_cited(question, context, threshold)
    return span, support


def extract_cited(question: str, context: PackedContext | None,
                  threshold: float) -> tuple[str | None, float, int | None]:
    """(answer span or None when refusing, support of the best sentence, the number of the
    passage the span comes from or None when refusing)."""
    if context is None:
        return None, 0.0, None
    sents = _sentences(context)
    terms = _question_terms(question)
    if not sents or not terms:
        return None, 0.0, None
    df = Counter(t for s in sents for t in {w[2] for w in s.words} & terms)
    n = len(sents)
    # Terms absent from the whole context (often paraphrases) weigh the minimum, 1.
    idf = {t: math.log((n + 1) / (df[t] + 0.5)) + 1.0 if df[t] else 1.0 for t in terms}
    scored = [(_support(s, terms, idf), -s.order, s) for s in sents]
    support, _, best = max(scored, key=lambda x: (x[0], x[1]))
    if support < threshold:
        return None, support, None
    return _best_span(best, question, terms), support, best.passage


class ExtractiveSettings(GeneratorSettings):
    """Copies the best-supported span of the context; no model."""

    threshold: float = Field(0.3, ge=0, le=1)
    """Refuse when the best sentence's support (its answer's `score`) is below this. Sweep
    it (`variable: generator.threshold`) to trade answered questions for accuracy; the
    report's risk-coverage table shows that trade on one run."""


@GENERATORS.register("extractive", reads=("generator.threshold", "prompt"), reads_context=True,
                     settings_model=ExtractiveSettings, libraries=("jieba",),
                     deterministic=True)  # the same answer on every run (stats.consistency)
class ExtractiveGenerator(BaseGenerator):
    """Copies the best-supported span of the context; refuses below the threshold."""

    # 2: support summed in a fixed order (1 depended on PYTHONHASHSEED); 3: cites the
    # passage it copied from (cached v2 answers carry no citations: not served); 4: whole
    # answers (the span to the end of its clause, in whole words; never a fragment)
    version = "4"

    @property
    def cache_identity(self) -> str:
        return (f"extractive/v{self.version}/threshold={self.cfg.threshold!r}"
                f"/max_span={MAX_SPAN_WORDS}/max_answer={MAX_ANSWER_WORDS}")

    def _generate_one(self, question: Question, context: PackedContext | None,
                      system: str, user: str) -> Answer:
        span, support, passage = extract_cited(question.question, context, self.cfg.threshold)
        tok = get_tokenizer()
        text = self.prompt.refusal if span is None else span
        return Answer(text=text, refused=span is None or self.refused(span),
                      tokens_in=tok.count(system) + tok.count(user), tokens_out=tok.count(text),
                      citations=() if passage is None else (passage,), score=support)
