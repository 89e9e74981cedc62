"""What the judge's stage keys (the judge and calibrate stages) record of the judge, from
declarations alone, the way ablate.components.pipeline keys the pipeline's stages:

- the backend `judge.backend` names: its identity (kind, name, code version, the
  installed versions of its `libraries`), the values of the `judge.*` fields it reads
  (its declared `reads`), and the content digest of each of its `files` fields (a GGUF
  file rewritten in place is a new key); its declared `settings` are never keyed;
- the fields every ask reads (ablate.components.judge.run.READS);
- each chosen judged metric: its identity in the metric registry (a plugin's: with its
  module's source) and the values of the `judge.*` fields it reads;
- when a chosen metric embeds (answer relevancy): the `judge.embedder` model's identity,
  its folder's name and content digest (the id its embedding cache is kept under), so
  another embedder, or its folder rewritten in place, is a new key;
- the prompts' content fingerprint.

A field nothing declares cannot change a key; tests/contract/test_judge_fields.py checks
that every field of the `judge:` section changes a key or is a declared setting.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from ablate.components.contract.dotted import get_dotted
from ablate.components.contract.errors import InputError
from ablate.components.judge.backends import JUDGES
from ablate.components.judge.config import JudgeConfig
from ablate.components.judge.run import EMBED_BACKEND, READS, embeds
from ablate.components.metrics.judged import judged_metrics
from ablate.components.metrics.registry import METRICS
from ablate.components.runtime.digest import content_digest, model_identity
from ablate.components.runtime.models import dense_model_path

# recorded by content elsewhere: the prompts by their fingerprint, the calibration set by
# its file's hash (the calibrate stage's own input), the labels by their file's hash (the
# sweep id's: the statistics read them, no stage does)
BY_CONTENT = ("judge.prompts", "judge.calibration", "judge.labels")


def declared_settings() -> tuple[str, ...]:
    """Every judge backend's settings."""
    return tuple(sorted({s for d in JUDGES.declarations() for s in d.settings}))


def read_fields(cfg: JudgeConfig) -> tuple[str, ...]:
    """The `judge.*` fields the judge of `cfg` reads: the backend's, every ask's and the
    chosen judged metrics'."""
    fields = {"judge.backend", *READS, *JUDGES.declaration(cfg.backend).reads}
    for j in judged_metrics():
        if j.name in cfg.metrics:
            fields.update(j.reads)
    return tuple(sorted(fields))


def file_digest(field: str, value: str) -> str:
    """The content digest of a declared file field's path ("missing" for a name, such as
    the bundled model's); an unreadable file is an InputError naming the field and path."""
    try:
        return content_digest(Path(value).expanduser())
    except OSError as exc:
        raise InputError(f"cannot read {value}: {exc.strerror}", field=field) from None


@lru_cache(maxsize=16)
def _identity(path: str, stamp: tuple) -> str:
    return model_identity(path)


def embedder_identity(name: str) -> str:
    """The `judge.embedder` model's identity (module doc), hashed once per state of its
    files (names, sizes, modification times); a name that is no model is an InputError
    naming `judge.embedder`."""
    try:
        path = dense_model_path(name)
    except InputError as exc:
        raise InputError(exc.message.replace("dense model", "embedder"), field="judge.embedder") from None
    try:
        stamp = tuple(sorted((str(f.relative_to(path)), st.st_size, st.st_mtime_ns)
                             for f in path.rglob("*") if f.is_file() for st in [f.stat()]))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", field="judge.embedder") from None
    return f"{_identity(str(path), stamp)}/{EMBED_BACKEND}"


def key_input(cfg: JudgeConfig, prompts_fingerprint: str) -> dict[str, Any]:
    """The experiment-level `judge` input of the judge and calibrate stages (module doc).
    `config` holds the values of the fields read, named as in the `judge:` section."""
    decl = JUDGES.declaration(cfg.backend)
    data = {"judge": cfg.model_dump(mode="json")}
    values = {f.removeprefix("judge."): get_dotted(data, f) for f in read_fields(cfg)}
    files = {f.removeprefix("judge."): file_digest(f, str(value)) for f in decl.files
             if (value := get_dotted(data, f))}
    metrics = [METRICS.declaration(f"judge/{j.name}").identity
               for j in judged_metrics() if j.name in cfg.metrics]
    out = {"config": values, "backend": decl.identity, "files": files, "metrics": metrics,
           "prompts": prompts_fingerprint}
    if embeds(cfg):
        out["embedder"] = embedder_identity(cfg.embedder)
    return out


def recorded_config(cfg: JudgeConfig) -> dict[str, Any]:
    """The judge config as the manifest records it: every field but the backends' settings
    and the fields recorded by content."""
    left_out = {f.removeprefix("judge.") for f in declared_settings() + BY_CONTENT}
    return cfg.model_dump(mode="json", exclude=left_out)
