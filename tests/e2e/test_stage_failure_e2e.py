"""A stage that raises (issue 39.2): a full disk while a stage writes its cache entry gave
a 175-line traceback. Through the real CLI and Prefect flow: one `ablate: error:` line
saying the cache device is full and naming the first stage that failed (issue 58.8), and
the command that continues, exit 1; that command then finishes the run."""

from __future__ import annotations

import shlex

from tests.e2e.test_console import SPEC
from tests.e2e.test_run_failures_e2e import _ablate, _one_error_line
from tests.flows.direct import write_spec

# `ablate` through its real entry point, with every stage entry write failing as on a
# full disk (no test hook in the product: the child patches the store before the CLI)
DISK_FULL = ("import errno\n"
             "import ablate.flows.run.store as store\n"
             "def full(*args, **kwargs):\n"
             "    raise OSError(errno.ENOSPC, 'No space left on device')\n"
             "store.Store.write = full\n"
             "from ablate.flows.cli.main import main\n"
             "main()\n")


def test_a_stage_error_is_one_line_naming_the_stage_and_the_command_that_continues(
        prefect_server, tmp_path):
    spec = write_spec(tmp_path, SPEC)
    cache = tmp_path / "cache"  # its own: every stage computes, so every stage writes
    run = ["run", str(spec), "--out", str(tmp_path / "runs"), "--cache-dir", str(cache),
           "--no-mlflow"]
    failed = _ablate(run, tmp_path, DISK_FULL)
    line = _one_error_line(failed)
    # a full device is said as such, with the cache folder and the first stage it stopped
    # (issue 58.8; the line named the stage and polars' or the OS's wording before)
    assert line.startswith(f"ablate: error: no space left on the cache device ({cache}): stage "), line
    assert " failed first " in line
    hint = line.rsplit("; to continue: ", 1)[1]
    assert shlex.split(hint) == ["ablate", "run", str(spec), "--cache-dir", str(cache)]
    assert failed.stderr.strip() == line
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("report.md"))
    again = _ablate([*shlex.split(hint)[1:], "--out", str(tmp_path / "runs"), "--no-mlflow"],
                    tmp_path)
    assert again.returncode == 0, again.stderr
