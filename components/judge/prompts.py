"""Versioned judge prompts: one YAML file per language (`en.yaml`, `zh.yaml`) in a version
folder (`prompts/v1/`, bundled) or in a folder of the user's.

Each file holds, per task (claims, support, relevance, usefulness, questions), a `system`
and a `user` template, plus the `retry` note sent after an unusable reply. Placeholders
are `{question}`, `{answer}`, `{statement}`, `{context}`, `{passage}`, `{reference}`,
`{max_claims}`, `{n_questions}` and `{problem}`; every other brace is literal, so JSON
examples need no escaping. The `questions` task (RAGAS answer relevancy) was added to
`v1` without touching the other tasks' templates: their rendered prompts, and so their
cached verdicts, are unchanged; the files' hash (below) changed, so the judge stages
are new keys. A prompt folder of one's own needs a `questions` template too. The language is the question's (`judge.language: auto`: Chinese prompts for a
question with a CJK character). `PromptSet.fingerprint` hashes both files' bytes: it is
part of the judge's stage keys, so an edited prompt is never served stale verdicts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import yaml

from ablate.components.contract.errors import InputError
from ablate.components.text.cjk import has_cjk

BUNDLED = Path(__file__).parent / "prompts"
LANGUAGES = ("en", "zh")
TASKS = ("claims", "support", "relevance", "usefulness", "questions")
PLACEHOLDERS = ("question", "answer", "statement", "context", "passage", "reference",
                "max_claims", "n_questions", "problem")
_FIELD = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class PromptSet:
    version: str
    templates: Mapping[str, Mapping[str, Mapping[str, str]]]  # lang -> task -> system/user
    retry: Mapping[str, str]  # lang -> retry note
    fingerprint: str

    def render(self, lang: str, task: str, values: Mapping[str, object]) -> tuple[str, str]:
        """(system, user) of a task in a language, placeholders filled verbatim."""
        t = self.templates[lang][task]
        return fill(t["system"], values), fill(t["user"], values)

    def retry_note(self, lang: str, problem: str) -> str:
        return fill(self.retry[lang], {"problem": problem})


def fill(template: str, values: Mapping[str, object]) -> str:
    """Replace the known {placeholders}; a placeholder without a value is an error."""
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise InputError(f"judge prompt placeholder '{{{m.group(1)}}}' has no value here",
                             field="judge.prompts")
        return str(values[m.group(1)])
    return _FIELD.sub(sub, template)


def language(setting: str, question: str) -> str:
    """The prompt language for a question: the setting, or by script when `auto`."""
    if setting == "auto":
        return "zh" if has_cjk(question) else "en"
    return setting


def folder(prompts: str, base: Path | None = None) -> Path:
    """The folder of a prompt version: bundled `prompts/<version>`, else a path (relative to
    `base`, the experiment file's folder)."""
    bundled = BUNDLED / prompts
    if re.fullmatch(r"[A-Za-z0-9._-]+", prompts) and bundled.is_dir():
        return bundled
    p = Path(prompts).expanduser()
    if not p.is_absolute() and base is not None:
        p = base / p
    if not p.is_dir():
        known = ", ".join(sorted(d.name for d in BUNDLED.iterdir() if d.is_dir()))
        raise InputError(f"judge prompts '{prompts}' are neither a bundled version ({known}) "
                         f"nor a folder", field="judge.prompts")
    return p


def load_prompts(prompts: str = "v1", base: Path | None = None) -> PromptSet:
    """Read and check a prompt version (every task and the retry note in both languages)."""
    root = folder(prompts, base)
    h = hashlib.sha256()
    templates: dict[str, dict[str, dict[str, str]]] = {}
    retry: dict[str, str] = {}
    for lang in LANGUAGES:
        path = root / f"{lang}.yaml"
        try:
            raw = path.read_bytes()
            data = yaml.safe_load(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise InputError(f"cannot read judge prompts: {exc}", path=str(path)) from None
        h.update(lang.encode() + b"\0" + raw + b"\0")
        if not isinstance(data, dict):
            raise InputError("a judge prompt file must be a YAML mapping", path=str(path))
        templates[lang] = {}
        for task in TASKS:
            entry = data.get(task)
            if not (isinstance(entry, dict) and isinstance(entry.get("system"), str)
                    and isinstance(entry.get("user"), str)):
                raise InputError(f"'{task}' needs a system and a user template", path=str(path),
                                 field=task)
            templates[lang][task] = {"system": entry["system"], "user": entry["user"]}
        if not isinstance(data.get("retry"), str):
            raise InputError("'retry' (the note after an unusable reply) is missing",
                             path=str(path), field="retry")
        retry[lang] = data["retry"]
    return PromptSet(root.name if root.parent == BUNDLED else str(root), templates, retry,
                     h.hexdigest()[:16])
