"""On-disk generation cache keyed by (generator identity, rendered prompt).

Retries, resumed sweeps and sweeps over other variables that leave the prompt unchanged
never generate the same prompt twice. One small JSON file per entry, fanned out by the
first two hex digits, written atomically (temp file, fsync, os.replace) so a killed run
never leaves a torn entry; BaseGenerator.generate_many puts each answer the moment it is
finished (after each batch on the torch backend), so an interrupted stage keeps every
answer it had finished. Answers that carry an error are never stored, and an entry that
carries one anyway (written by hand or by an older version) is a miss, so whenever the
generate stage runs, a failed generation is tried again.

`Answer.citations` is stored as a JSON list (null: the generator does not cite). An entry
written before the field existed reads as None, "no citations recorded": right for a model
generator without `prompt.cite` (with it the prompt, hence the key, differs), and the
extractive generator, which always cites, moved to a new cache identity (version 3) when it
began to. An entry whose citations are not a list of integers is a miss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path

from ablate.components.contract.records import Answer
from ablate.components.runtime.atomic import atomic_write

_FIELDS = tuple(f.name for f in dataclasses.fields(Answer))


def cache_key(identity: str, system: str, user: str) -> str:
    """sha256 over the generator's cache identity and both prompt messages."""
    h = hashlib.sha256()
    for part in (identity, system, user):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))  # length-prefixed: no ambiguity
        h.update(data)
    return h.hexdigest()


class GenerationCache:
    """Content-addressed answers under `root`; `.counters` counts answers stored
    (generated) and served (reused); failed generations are neither."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._generated = 0
        self._reused = 0

    @property
    def counters(self) -> dict[str, int]:
        with self._lock:
            return {"generated": self._generated, "reused": self._reused}

    def key(self, identity: str, system: str, user: str) -> str:
        return cache_key(identity, system, user)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        """The stored answer (marked cached=True, original latency kept), or None (also for
        an entry that is not a JSON object or that carries an error)."""
        try:
            raw = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(raw, dict) or raw.get("error") is not None:
            return None
        data = {k: raw[k] for k in _FIELDS if k in raw}
        cited = data.get("citations")
        if cited is not None:
            if not isinstance(cited, list) or not all(
                    isinstance(n, int) and not isinstance(n, bool) for n in cited):
                return None
            data["citations"] = tuple(cited)
        data["cached"] = True
        with self._lock:
            self._reused += 1
        return Answer(**data)

    def put(self, key: str, answer: Answer) -> None:
        """Store a freshly generated answer (counted as generated); errors are not stored."""
        with self._lock:
            self._generated += 1
        if answer.error is not None:
            return
        data = dataclasses.asdict(answer)
        data["cached"] = False
        atomic_write(self._path(key), json.dumps(data, ensure_ascii=False, sort_keys=True))
