"""Environment variables in paths (issue 39.9): ablate does not expand `$VAR` or `${VAR}`
in an experiment file's paths (an expanded path would make one file mean different data
on different machines and Dask workers); such a path is refused when the file loads,
with the line of the field, rather than read as a folder literally named `${DATA}`.
Write the path out; a relative path is relative to the experiment file (`out` and
`cache_dir`: to the working folder). On the command line the shell expands them."""

from __future__ import annotations

import re

ENV_REF = re.compile(r"\$(?:\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*)")


def refuse_env_refs(value: str | None) -> str | None:
    """`value` when it names no environment variable, else ValueError naming it."""
    if value is None:
        return value
    m = ENV_REF.search(value)
    if m:
        raise ValueError(f"'{value}' holds {m.group()}: environment variables are not expanded "
                         "in paths; write the path out (relative paths are relative to the "
                         "experiment file)")
    return value
