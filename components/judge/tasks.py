"""The judge's five tasks, their JSON schemas, strict parsing, one retry, and the cache.

Tasks: `claims` (split an answer into statements: {"claims": [str, ...]}), `support` (is a
statement supported by a context: {"verdict": "yes" | "no"}), `relevance` (does an answer
address the question: yes | partly | no), `usefulness` (was a passage useful for the
reference answer: yes | no) and `questions` (RAGAS answer relevancy: the questions an
answer answers, written from the answer alone, and whether it is noncommittal:
{"questions": [str x n], "noncommittal": true | false}, n its ask's `n_questions`).

A reply is parsed strictly: one JSON object and nothing else, exactly the schema's keys,
values of the right type (a verdict from its list; 1..max_claims non-blank statements;
exactly n non-blank questions and a JSON boolean), no repeated keys. Claims must also restate the answer: repeated claims are merged, and a
claim sharing no content word (no CJK character) with the answer makes the reply
unusable (a small model copies the prompt's example instead); likewise a generated
question of 4 or more words found verbatim in the prompt outside the answer (copied
from its example). An unusable reply (unparseable, truncated by the token cap, empty) is
asked again once, with the reply and a note saying what was wrong and twice the token cap;
when the second reply is unusable too the verdict is a *judge failure*: counted and
excluded by the metrics, never a score. Greedy decoding makes a failure repeat, so
failures are cached like verdicts: a re-run judges nothing twice. A transport failure
(timeout, HTTP error after retries) is neither: not cached, tried again next run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ablate.components.judge.backends import BaseJudge, Completion, Request
from ablate.components.judge.prompts import PromptSet
from ablate.components.metrics.answer import STOPWORDS
from ablate.components.runtime.atomic import atomic_write
from ablate.components.text.cjk import CJK

VERSION = "2"  # of the parsing and checking rules: part of every verdict's cache key
VERDICTS = {"support": ("yes", "no"), "relevance": ("yes", "partly", "no"),
            "usefulness": ("yes", "no")}  # scored by ablate.components.metrics.judged.SCORES


QUESTIONS = "questions"  # the task whose reply is an object of two keys (module doc)


def schema(task: str, max_claims: int, n_questions: int = 3) -> dict[str, Any]:
    """The JSON schema of a task's reply (sent to the backend, checked by `parse`)."""
    if task == QUESTIONS:
        items = {"type": "array", "items": {"type": "string", "minLength": 1},
                 "minItems": n_questions, "maxItems": n_questions}
        return {"type": "object",
                "properties": {"questions": items, "noncommittal": {"type": "boolean"}},
                "required": ["questions", "noncommittal"], "additionalProperties": False}
    if task == "claims":
        items = {"type": "array", "items": {"type": "string", "minLength": 1},
                 "minItems": 1, "maxItems": max_claims}
        return {"type": "object", "properties": {"claims": items}, "required": ["claims"],
                "additionalProperties": False}
    return {"type": "object",
            "properties": {"verdict": {"type": "string", "enum": list(VERDICTS[task])}},
            "required": ["verdict"], "additionalProperties": False}


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key repeats")
    return dict(pairs)


def _questions(data: dict[str, Any], n: int) -> tuple[Any, str | None]:
    """The questions task's value {"questions": [...], "noncommittal": bool}, or why not."""
    if set(data) != {"questions", "noncommittal"}:
        return None, f"expected exactly the keys 'questions', 'noncommittal', got {sorted(data)}"
    value = data["questions"]
    if not isinstance(value, list) or not all(isinstance(q, str) for q in value):
        return None, "questions must be a list of strings"
    questions = [q.strip() for q in value]
    if len(questions) != n or not all(questions):
        return None, f"questions must be exactly {n} non-blank questions"
    if not isinstance(data["noncommittal"], bool):
        return None, f"noncommittal must be true or false, got {data['noncommittal']!r}"
    return {"questions": questions, "noncommittal": data["noncommittal"]}, None


def parse(task: str, content: str, max_claims: int, n_questions: int = 3) -> tuple[Any, str | None]:
    """(value, None) for a usable reply, else (None, what is wrong with it)."""
    text = content.strip()
    if not text:
        return None, "empty reply"
    try:
        data = json.loads(text, object_pairs_hook=_no_repeats)
    except ValueError as exc:
        return None, f"not one JSON object ({exc})"
    if task == QUESTIONS:
        if not isinstance(data, dict):
            return None, f"expected a JSON object, got {type(data).__name__}"
        return _questions(data, n_questions)
    key = "claims" if task == "claims" else "verdict"
    if not isinstance(data, dict) or set(data) != {key}:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        return None, f"expected exactly the key '{key}', got {got}"
    value = data[key]
    if task == "claims":
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            return None, "claims must be a list of strings"
        claims = [c.strip() for c in value]
        if not claims or len(claims) > max_claims or not all(claims):
            return None, f"claims must be 1 to {max_claims} non-blank statements"
        return claims, None
    if value not in VERDICTS[task]:
        return None, f"verdict must be one of {', '.join(VERDICTS[task])}, got {value!r}"
    return value, None


_WORD = re.compile(f"[{CJK}]|(?:(?![{CJK}])[^\\W_])+")


def content_words(text: str) -> set[str]:
    """Lower-cased words (each CJK character one word) without English stop words."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def grounded_claims(claims: list[str], answer: str) -> tuple[list[str] | None, str | None]:
    """(claims without repeats, None), or (None, why) when a claim shares no content word
    with the answer (an answer without content words accepts any claim)."""
    merged = list(dict.fromkeys(claims))
    have = content_words(answer)
    stray = [c for c in merged if have and not content_words(c) & have]
    if stray:
        return None, f"a claim does not restate the answer: {stray[0][:60]!r}"
    return merged, None


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def uncopied_questions(value: dict[str, Any], prompt: str, answer: str) -> tuple[Any, str | None]:
    """(value, None), or (None, why) when a generated question of 4 or more words (a CJK
    character a word) stands verbatim in the prompt outside the answer: copied from the
    prompt's example, not written from the answer."""
    rest = _norm(prompt.replace(answer, "\n") if answer else prompt)
    for q in value["questions"]:
        if len(_WORD.findall(q)) >= 4 and _norm(q) in rest:
            return None, f"a question copies the prompt's example: {q[:60]!r}"
    return value, None


@dataclass(frozen=True)
class Ask:
    """One question to the judge: a task in a language with the prompt's values."""

    task: str
    lang: str
    values: Mapping[str, Any]

    @property
    def n_questions(self) -> int:
        """The questions task's count (its `n_questions` value; 3, RAGAS's, when not given)."""
        return int(self.values.get("n_questions", 3))

    def check(self, value: Any, prompt: str = "") -> tuple[Any, str | None]:
        """Checks beyond the schema (claims restate the answer, questions are not copied
        from `prompt`, the rendered user message): (value, None) or (None, why)."""
        if self.task == "claims":
            return grounded_claims(value, str(self.values.get("answer", "")))
        if self.task == QUESTIONS:
            return uncopied_questions(value, prompt, str(self.values.get("answer", "")))
        return value, None

    def stand_in(self) -> Any:
        """A usable value of this task's verdicts (what counting before the run,
        ablate.components.judge.cost, assumes of a verdict it cannot know): the first
        verdict word, or for questions the question itself n times, committal."""
        if self.task == QUESTIONS:
            q = str(self.values.get("question", ""))
            return {"questions": [q] * self.n_questions, "noncommittal": False}
        return VERDICTS[self.task][0]


@dataclass(frozen=True)
class Verdict:
    task: str
    value: Any = None  # list[str] (claims) or a verdict word; None when failed
    failure: str | None = None  # unusable after the retry: counted, excluded, cached
    error: str | None = None  # transport failure: not a verdict, not cached
    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None and self.error is None


class JudgeCache:
    """Verdicts (and judge failures) on disk, one JSON file per (judge identity, task,
    schema, rendered prompt, token cap: `request_key`); written atomically, the folder
    made by the first write (so looking up, as `ablate check` does, writes nothing).
    `.counters` counts verdicts asked and served."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self.asked = 0
        self.reused = 0

    @property
    def counters(self) -> dict[str, int]:
        with self._lock:
            return {"asked": self.asked, "reused": self.reused}

    @staticmethod
    def key(*parts: str) -> str:
        h = hashlib.sha256()
        for part in parts:
            data = part.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Verdict | None:
        try:
            raw = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(raw, dict) or raw.get("error") is not None or "task" not in raw:
            return None
        with self._lock:
            self.reused += 1
        fields = {f.name for f in dataclasses.fields(Verdict)}
        return Verdict(**{k: v for k, v in raw.items() if k in fields} | {"cached": True})

    def put(self, key: str, verdict: Verdict) -> None:
        with self._lock:
            self.asked += 1
        if verdict.error is not None:
            return
        data = dataclasses.asdict(verdict) | {"cached": False}
        atomic_write(self._path(key), json.dumps(data, ensure_ascii=False, sort_keys=True))


def request_of(prompts: PromptSet, ask: Ask, max_claims: int, max_tokens: int) -> Request:
    """The Request an Ask is sent as (its rendered prompt, schema and token cap)."""
    system, user = prompts.render(ask.lang, ask.task, {**ask.values, "max_claims": max_claims})
    return Request(ask.task, (("system", system), ("user", user)),
                   schema(ask.task, max_claims, ask.n_questions), max_tokens)


def request_key(identity: str, request: Request) -> str:
    """A request's verdict cache key, for the judge of `identity` (its cache_identity)."""
    return JudgeCache.key(identity, VERSION, request.name, json.dumps(request.schema, sort_keys=True),
                          json.dumps(request.messages, ensure_ascii=False), str(request.max_tokens))


def _retry(prompts: PromptSet, ask: Ask, first: Request, reply: str, problem: str) -> Request:
    note = prompts.retry_note(ask.lang, problem)
    return dataclasses.replace(first, messages=first.messages + (("assistant", reply), ("user", note)),
                               max_tokens=first.max_tokens * 2)


def _judged(ask: Ask, c: Completion, max_claims: int, request: Request) -> tuple[Any, str | None]:
    if c.truncated:
        return None, "the reply was cut off by the token limit"
    if not c.content.strip() and c.note:
        return None, c.note
    value, problem = parse(ask.task, c.content, max_claims, ask.n_questions)
    return (value, problem) if problem is not None else ask.check(value, request.messages[1][1])


def ask_many(judge: BaseJudge, prompts: PromptSet, asks: Sequence[Ask], max_claims: int,
             max_tokens: int, cache: JudgeCache | None = None) -> list[Verdict]:
    """Verdicts in `asks` order: cache hits served, each distinct prompt asked once, an
    unusable reply asked again once (module doc)."""
    requests = [request_of(prompts, a, max_claims, max_tokens) for a in asks]
    keys = [request_key(judge.cache_identity, r) for r in requests]
    first_of: dict[str, int] = {}
    for i, k in enumerate(keys):
        first_of.setdefault(k, i)
    out: dict[str, Verdict] = {}
    for k in first_of:
        hit = cache.get(k) if cache is not None else None
        if hit is not None:
            out[k] = hit
    todo = [i for k, i in first_of.items() if k not in out]
    first = judge.complete_many([requests[i] for i in todo])
    again: list[tuple[int, Completion, str]] = []
    for i, c in zip(todo, first, strict=True):
        if c.error is not None:
            out[keys[i]] = Verdict(asks[i].task, error=c.error, attempts=1)
            continue
        value, problem = _judged(asks[i], c, max_claims, requests[i])
        if problem is None:
            out[keys[i]] = Verdict(asks[i].task, value, attempts=1, tokens_in=c.tokens_in,
                                   tokens_out=c.tokens_out)
        else:
            again.append((i, c, problem))
    second = judge.complete_many([_retry(prompts, asks[i], requests[i], c.content, p)
                                  for i, c, p in again])
    for (i, c1, p1), c in zip(again, second, strict=True):
        tin, tout = c1.tokens_in + c.tokens_in, c1.tokens_out + c.tokens_out
        if c.error is not None:
            out[keys[i]] = Verdict(asks[i].task, error=c.error, attempts=2)
            continue
        value, problem = _judged(asks[i], c, max_claims, requests[i])
        out[keys[i]] = (Verdict(asks[i].task, value, attempts=2, tokens_in=tin, tokens_out=tout)
                        if problem is None else
                        Verdict(asks[i].task, failure=f"{p1}; after one retry: {problem}",
                                attempts=2, tokens_in=tin, tokens_out=tout))
    if cache is not None:
        for i in todo:
            cache.put(keys[i], out[keys[i]])
    return [out[k] if n == first_of[k] else dataclasses.replace(out[k], cached=True)
            for n, k in enumerate(keys)]
