"""The `ablate` command line.

Each sub-command lives in its own module `flows/cli/<name>.py` exposing
`register(app)`; this module only assembles them and turns bad input (InputError) into
one line on stderr with exit code 2, a run that failed after it started (RunFailed: its
cause and the command that continues) into one line with exit code 1: never a traceback.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import sys

import typer

from ablate.components.contract.errors import InputError, RunFailed

HELP = "ablate: ablation studies of RAG pipelines."


def build_app() -> typer.Typer:
    """A fresh Typer app with every sub-command module of `flows/cli/` registered (one per call, so calling
    `main` more than once in a process never registers a command twice)."""
    from ablate.flows import cli
    app = typer.Typer(add_completion=False, no_args_is_help=True,
                      pretty_exceptions_enable=False, help=HELP)
    app.callback(help=HELP)(lambda: None)  # a group, even with a single command module
    for info in sorted(pkgutil.iter_modules(cli.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{cli.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(app)
    return app


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    from ablate.components import catalogue
    from ablate.flows import env
    env.prepare()
    catalogue.load()
    try:
        build_app()(args=argv, standalone_mode=True)
    except (InputError, RunFailed) as exc:
        print(f"ablate: error: {exc.one_line()}", file=sys.stderr)
        sys.exit(2 if isinstance(exc, InputError) else 1)
    finally:
        # The interpreter's last garbage collection walks every object that torch,
        # Prefect and MLflow left behind (about 1 s after a sweep); objects frozen here
        # are skipped by it. Memory is returned to the system at exit either way.
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()
