"""ablate installs under its own name: the folders components/ and flows/ are the packages
ablate.components and ablate.flows, so a user's project may have its own `flows/` (the
common Prefect layout) or `components/` beside ablate."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_installed():
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {"ablate." + ".".join(p.parent.relative_to(ROOT).parts)
               for top in ("components", "flows") for p in (ROOT / top).rglob("__init__.py")}
    # folders of package data (no code), listed so that setuptools installs them quietly
    data = {"ablate." + ".".join(p.relative_to(ROOT).parts)
            for top in ("components", "flows") for p in (ROOT / top).rglob("*")
            if p.is_dir() and any(p.glob("*.yaml")) and not (p / "__init__.py").exists()}
    assert data == set(setup["package-data"])
    assert set(setup["packages"]) == on_disk | data
    assert setup["package-dir"] == {"ablate.components": "components", "ablate.flows": "flows"}


def test_a_projects_own_flows_folder_does_not_collide(tmp_path):
    for name in ("flows", "components"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
        (tmp_path / name / "mine.py").write_text(f"WHO = 'the user\\'s {name}'\n")
    code = ("import flows.mine, components.mine\n"
            "from ablate.flows.cli.main import build_app\n"
            "from ablate.components import catalogue\n"
            "catalogue.load()\n"
            "build_app()\n"
            "print(flows.mine.WHO, '|', components.mine.WHO)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "the user's flows | the user's components"


def test_building_the_wheel_warns_of_no_package_left_out(tmp_path):
    """Issue 54: setuptools printed a long "Package would be ignored" block on every
    install: the judge's prompt folder (package data) was importable as a namespace package
    but not listed. Built from a copy of the tree, no such warning, and the prompts are in."""
    import shutil
    import zipfile
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for top in ("components", "flows"):
        shutil.copytree(ROOT / top, tmp_path / top,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbc", "*.nbi"))
    code = ("from setuptools import build_meta\n"
            "print(build_meta.build_wheel('dist'))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout + done.stderr
    assert "absent from the `packages` configuration" not in out, out[-3000:]
    assert "Package would be ignored" not in out
    wheel = tmp_path / "dist" / done.stdout.strip().splitlines()[-1]
    names = zipfile.ZipFile(wheel).namelist()
    assert "ablate/components/judge/prompts/v1/en.yaml" in names
    assert "ablate/components/judge/prompts/v1/zh.yaml" in names
