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
    assert set(setup["packages"]) == on_disk
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
