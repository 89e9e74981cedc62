"""A scripted fake judge for unit tests (never registered, never used outside tests).

`ScriptedJudge(script)` answers each Request with `script(request)`: a reply text or a
Completion. `rule_script` is a transparent rule-based judge over the rendered English
prompts: claims split the answer at " and "; a statement is supported when its text
occurs in the context; an answer is relevant when it shares a content word with the
question ("partly" when it also has more than 12 words); a passage is useful when it
contains the reference answer; the questions of an answer A (as many as the schema asks)
are "What is A?", "Which is A?", "Who or what is A?", ..., noncommittal when A says it
does not know ("don't know", "not sure", "不知道").
"""

from __future__ import annotations

import json
import re

from ablate.components.judge.backends import BaseJudge, Completion, Request
from ablate.components.judge.config import JudgeConfig

STOP = {"what", "is", "the", "of", "a", "an", "in", "who", "when", "where", "which", "did", "was"}


class ScriptedJudge(BaseJudge):
    def __init__(self, script, cfg: JudgeConfig | None = None, identity: str = "scripted/1",
                 model: str = "fake:scripted") -> None:
        super().__init__(cfg or JudgeConfig())
        self.script = script
        self.identity = identity
        self.model = model
        self.calls: list[Request] = []

    @property
    def cache_identity(self) -> str:
        return self.identity

    def model_key(self) -> str:
        return self.model

    def _complete(self, request: Request) -> Completion:
        self.calls.append(request)
        out = self.script(request)
        return out if isinstance(out, Completion) else Completion(out, 10, 3)


def field(user: str, label: str) -> str:
    """The value after `label` on its line in a rendered prompt."""
    m = re.search(re.escape(label) + r"[ \n]*(.*)", user)
    return m.group(1).strip() if m else ""


def block(user: str, label: str, end: str) -> str:
    """The text between `label` and `end` in a rendered prompt."""
    start = user.index(label) + len(label)
    return user[start:user.index(end, start)]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOP}


def rule_script(request: Request) -> str:
    user = request.messages[1][1]
    if request.name == "claims":
        answer = field(user, "Answer:")
        return json.dumps({"claims": [c.strip() for c in answer.split(" and ")]})
    if request.name == "support":
        statement = field(user, "Statement (an answer to the question):")
        context = block(user, "Context:\n", "\n\nQuestion:")
        return json.dumps({"verdict": "yes" if statement.lower() in context.lower() else "no"})
    if request.name == "relevance":
        q, a = field(user, "Question:"), field(user, "Answer:")
        ok = bool(_words(q) & _words(a))
        verdict = ("partly" if len(a.split()) > 12 else "yes") if ok else "no"
        return json.dumps({"verdict": verdict})
    if request.name == "usefulness":
        passage = block(user, "Passage:\n", "\n\nQuestion:")
        ref = field(user, "Reference answer:")
        return json.dumps({"verdict": "yes" if ref.lower() in passage.lower() else "no"})
    if request.name == "questions":
        answer = field(user, "Answer:") or field(user, "答案：")
        n = request.schema["properties"]["questions"]["minItems"]
        stems = ["What is", "Which is", "Who or what is", "Where is", "When is"]
        questions = [f"{stems[i % len(stems)]} {answer}?" for i in range(n)]
        vague = any(w in answer.lower() for w in ("don't know", "not sure", "不知道"))
        return json.dumps({"questions": questions, "noncommittal": vague})
    raise AssertionError(request.name)


class TableEncoder:
    """A fake dense encoder for the judge's embedder: `table` text -> vector, any other
    text a fixed pseudo-random vector of its hash (`dim` wide); `calls` records what was
    encoded. Pass it as `Resources.fixed(TableEncoder(...))`."""

    def __init__(self, table: dict | None = None, dim: int = 8) -> None:
        self.table = dict(table or {})
        self.dim = dim
        self.calls: list[list[str]] = []

    def vector(self, text: str):
        import hashlib

        import numpy as np
        if text in self.table:
            return np.asarray(self.table[text], dtype=np.float32)
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def encode(self, texts):
        import numpy as np
        self.calls.append(list(texts))
        return np.stack([self.vector(t) for t in texts])
