"""A sweep folder's files, read and checked in one place (issue 58.1-2).

The manifest records the sha256 of every other file the folder holds (`files`: written by
flows/outputs/write.py, updated by whatever rewrites a file in the folder: `ablate report`,
`ablate stats --out`). A reader goes through SweepFolder: a recorded file is compared with
its record before it is parsed, and one that differs, is missing or cannot be parsed
(a damaged manifest.json or variants.json, a parquet file out of specification) is one
InputError naming the file and the command that rewrites it: `FILE: damaged: rerun CMD`,
exit 2, never a traceback. CMD is `ablate report FOLDER` for the report's own files, else
`ablate run` of the experiment file with the options the manifest records (every stage is
reused from the cache; the unchanged-rerun shortcut sees the damage and writes the folder
again). A folder written before the record existed is only parsed.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.runtime.atomic import atomic_write
from ablate.components.runtime.digest import read_sha256

MANIFEST = "manifest.json"
RECORD = "files"  # the manifest's {path in the folder: sha256}
REPORT_MADE = ("report", "summary.txt", "plots/")  # what `ablate report` writes again
UNRECORDED = ("mlflow.json",)  # written after the outputs, changed by later logging


def file_record(folder: Path) -> dict[str, str]:
    """{path relative to the folder: sha256} of every file under `folder` but the manifest,
    the MLflow marker and hidden (temporary) files."""
    folder = Path(folder)
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (path.is_file() and rel.as_posix() not in (MANIFEST, *UNRECORDED)
                and not any(part.startswith(".") for part in rel.parts)):
            out[rel.as_posix()] = read_sha256(path)
    return out


def repair_command(folder: Path, name: str, manifest: dict[str, Any] | None) -> str:
    """The command that writes `name` of the sweep folder again."""
    folder = Path(folder)
    if name.startswith(REPORT_MADE):
        return shlex.join(["ablate", "report", str(folder)])
    if not isinstance(manifest, dict) or not isinstance(manifest.get("experiment_file"), str):
        return f"ablate run on its experiment file with --out {shlex.quote(str(folder.parent))}"
    args = ["ablate", "run", manifest["experiment_file"], "--out", str(folder.parent)]
    given = manifest.get("settings")
    settings: dict[str, Any] = given if isinstance(given, dict) else {}
    for option in ("tier", "split"):  # only when the command line chose them
        if manifest.get(option) and manifest.get(option) != settings.get(option):
            args += [f"--{option}", str(manifest[option])]
    if isinstance(manifest.get("cache_dir"), str):
        args += ["--cache-dir", manifest["cache_dir"]]
    return shlex.join(args)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def recording_folder(path: Path) -> SweepFolder | None:
    """The sweep folder a file sits in (`ablate stats` on per_query.parquet, or writing
    stats.parquet there) when its manifest keeps a record; else None (a damaged manifest:
    None too, the table is only parsed)."""
    folder = SweepFolder(Path(path).parent)
    try:
        return folder if folder.manifest.get(RECORD) else None
    except InputError:
        return None


class SweepFolder:
    """One sweep folder's files, each read checked against the manifest's record."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._manifest: dict[str, Any] | None = None

    def damaged(self, name: str, why: str) -> InputError:
        man = self._manifest if name != MANIFEST else None
        if man is None and name != MANIFEST:
            try:
                man = self.manifest
            except InputError:
                man = None
        return InputError(f"damaged: rerun {repair_command(self.path, name, man)} to write "
                          f"it again ({why})", path=str(self.path / name))

    @property
    def manifest(self) -> dict[str, Any]:
        """manifest.json, parsed once (an object, else damaged)."""
        if self._manifest is None:
            man = self._parse_json(MANIFEST)
            if not isinstance(man, dict):
                raise self.damaged(MANIFEST, "not a JSON object")
            self._manifest = man
        return self._manifest

    def recorded(self) -> dict[str, str]:
        """The manifest's record of the other files ({} without a manifest or a record)."""
        if self._manifest is None and not (self.path / MANIFEST).is_file():
            return {}
        record = self.manifest.get(RECORD)
        return record if isinstance(record, dict) else {}

    def _differs(self, name: str, sha: str) -> str | None:
        path = self.path / name
        if not path.is_file():
            return "missing, though the manifest records it"
        if read_sha256(path) != sha:
            return "its sha256 differs from the manifest's record"
        return None

    def check(self, name: str) -> None:
        """InputError when `name` is recorded and missing or not as recorded."""
        sha = self.recorded().get(name)
        why = None if sha is None else self._differs(name, sha)
        if why is not None:
            raise self.damaged(name, why)

    def damaged_files(self) -> list[str]:
        """The recorded files that are missing or not as recorded (a damaged manifest:
        itself)."""
        try:
            record = self.recorded()
        except InputError:
            return [MANIFEST]
        return [name for name, sha in sorted(record.items()) if self._differs(name, sha)]

    def check_all(self) -> None:
        """InputError for the first recorded file that is missing or not as recorded (what
        copies the whole folder elsewhere, `ablate sync`, checks first)."""
        self.manifest  # noqa: B018 - a damaged manifest raises here
        for name in self.damaged_files():
            self.check(name)

    def _parse_json(self, name: str) -> Any:
        try:
            return json.loads((self.path / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"not a sweep folder: {name} is missing", path=str(self.path)) from None
        except (UnicodeDecodeError, ValueError, OSError) as exc:
            raise self.damaged(name, _first_line(exc)) from None

    def json(self, name: str) -> Any:
        """A JSON file of the folder, checked and parsed."""
        if name == MANIFEST:
            return self.manifest
        self.check(name)
        return self._parse_json(name)

    def parquet(self, name: str, columns: list[str] | None = None) -> pl.DataFrame:
        """A parquet file of the folder, checked and read (`columns`: only those)."""
        self.check(name)
        try:
            return pl.read_parquet(self.path / name, columns=columns)
        except FileNotFoundError:
            raise InputError(f"not a sweep folder: {name} is missing", path=str(self.path)) from None
        except pl.exceptions.ColumnNotFoundError:
            raise
        except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
            raise self.damaged(name, _first_line(exc)) from None

    def optional_parquet(self, name: str) -> pl.DataFrame | None:
        """A parquet file the folder may lack: None when it is not there, even when the
        manifest records it (a signed-off reference is the four files `ablate gate
        --reference` reads, experiments/references/README.md; whether a sweep's own
        outputs are all in place is the unchanged-rerun check's question, which a
        missing file fails); checked and read when it is there."""
        if not (self.path / name).is_file():
            return None
        return self.parquet(name)

    def rerecord(self, names: list[str]) -> None:
        """Record the files `names` as they are now (after a command rewrote them), when the
        manifest keeps a record."""
        man = self.manifest
        record = man.get(RECORD)
        if not isinstance(record, dict):
            return
        for name in names:
            path = self.path / name
            if path.is_file():
                record[name] = read_sha256(path)
            else:
                record.pop(name, None)
        atomic_write(self.path / MANIFEST, json.dumps(man, indent=2, default=str) + "\n")
