"""One error type for bad input: it knows the file, line and field it is about.

The CLI turns an InputError into one line on stderr and exit code 2.
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
