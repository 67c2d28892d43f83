"""The wheel's build step: the top-level files the package runs on go into the package.

The checkout keeps regions.yaml, infra/, playbooks/ and data/ at the top (each step's
folder, as the README's table shows); an installed package reads its copies from
orchestrator/bundled/ (orchestrator.core.paths), with the sample schedules.yaml that
`schedule init` writes and the docs/ pages its help points to. Built and machine-local
things stay out: Terraform's working folders and state (its lock files go in), and the
delayd binaries (an installed package builds delayd from its source on first use:
orchestrator.emulator.delay).
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TOP = ("regions.yaml", "schedules.yaml", "infra", "playbooks", "data", "docs")
LEFT_OUT = (".terraform", "*.tfstate", "*.tfstate.*", "__pycache__", "*.pyc", "*.o", "tf-*")
BUILT = {"delayd", "delayd-asan"}  # binaries beside delayd.c (the folder is also "delayd")


def _left_out(folder: str, names: list[str]) -> set[str]:
    out = {n for n in names if any(fnmatch.fnmatch(n, p) for p in LEFT_OUT)}
    out |= {n for n in names if n in BUILT and os.path.isfile(os.path.join(folder, n))}
    out |= {n for n in names if n.startswith("test_") and not n.endswith(".c")}
    return out


class BuildWithBundle(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own folders
        here = Path(__file__).resolve().parent
        bundle = Path(self.build_lib) / "orchestrator" / "bundled"
        shutil.rmtree(bundle, ignore_errors=True)
        bundle.mkdir(parents=True)
        for name in TOP:
            source = here / name
            if source.is_dir():
                shutil.copytree(source, bundle / name, ignore=_left_out)
            else:
                shutil.copy2(source, bundle / name)


setup(cmdclass={"build_py": BuildWithBundle})
