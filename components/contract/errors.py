"""The two errors the CLI reports in one line, never a traceback: InputError (bad input:
it knows the file, line and field it is about; exit code 2) and RunFailed (a run that
stopped after it started: the cause and the command that continues it; exit code 1).
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input (data set, experiment file, CLI argument)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"field '{self.field}': " if self.field else ""
        return f"{where}{field}{self.message}".replace("\n", " ")


class RunFailed(Exception):
    """A run that could not finish (a stage crashed, the analysis, the report or MLflow
    failed): `message` names the cause and what is on disk, `hint` the command that
    rebuilds or continues the rest."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.one_line())

    def __reduce__(self):  # pickled by Prefect (and Dask): rebuilt from both fields
        return type(self), (self.message, self.hint)

    def one_line(self) -> str:
        hint = f"; to continue: {self.hint}" if self.hint else ""
        return f"{self.message}{hint}".replace("\n", " ")


def cause(exc: BaseException) -> str:
    """An exception as `Type: message` on one line (a RunFailed's message names the cause)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


NO_SPACE = "No space left on device"  # strerror(ENOSPC), also inside polars' and pyarrow's wording


def no_space(exc: BaseException) -> bool:
    """True when a full device caused `exc`: an OSError with errno 28 (ENOSPC) anywhere in
    its chain, or a library's error (polars, pyarrow) that says so in its message."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if (isinstance(at, OSError) and at.errno == 28) or NO_SPACE.lower() in str(at).lower():
            return True
        at = at.__cause__ or at.__context__
    return False
