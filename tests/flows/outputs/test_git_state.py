"""The manifest's git commit and dirty flag come from the repository that holds the
experiment file, whatever folder the command runs in."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ablate.flows.outputs.manifest import git_state


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_commit_and_dirty_flag_of_the_experiment_files_repository(tmp_path, monkeypatch):
    repo = tmp_path / "their-repo"
    (repo / "exps").mkdir(parents=True)
    _git(repo, "init", "-q")
    spec = repo / "exps" / "exp.yaml"
    spec.write_text("name: x\n")
    (repo / "notes.txt").write_text("a\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not a repository at all
    _git(repo, "add", "notes.txt")
    _git(repo, "commit", "-qm", "notes")
    sha = _git(repo, "rev-parse", "HEAD")
    assert git_state(spec) == (sha, True)  # the experiment file is not committed
    _git(repo, "add", "exps/exp.yaml")
    _git(repo, "commit", "-qm", "exp")
    sha = _git(repo, "rev-parse", "HEAD")
    assert git_state(spec) == (sha, False)
    (repo / "untracked.txt").write_text("b\n")  # untracked files (run outputs) do not count
    assert git_state(spec) == (sha, False)
    (repo / "notes.txt").write_text("changed\n")
    assert git_state(spec) == (sha, True)


def test_outside_a_repository(tmp_path):
    spec = tmp_path / "exp.yaml"
    spec.write_text("name: x\n")
    assert git_state(spec) == ("unknown", None)
