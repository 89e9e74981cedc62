"""The `ablate` command line.

Each sub-command lives in its own module `flows/cmd_<name>.py` exposing
`register(app)`; this module only assembles them and turns bad input into one line on
stderr with exit code 2 (never a traceback).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from components.errors import InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="ablate: ablation studies of RAG pipelines.")


@app.callback()
def _root() -> None:
    """ablate: ablation studies of RAG pipelines."""


def _register_commands() -> None:
    import flows
    for info in sorted(pkgutil.iter_modules(flows.__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            importlib.import_module(f"flows.{info.name}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    from flows import env
    env.prepare()
    _register_commands()
    try:
        app(args=argv, standalone_mode=True)
    except InputError as exc:
        print(f"ablate: error: {exc.one_line()}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
