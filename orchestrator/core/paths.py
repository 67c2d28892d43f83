"""Where the project's files live. Everything else takes paths as arguments.

The catalog, the Terraform stacks, the playbooks, the vendored public data, the
pricing table, the sample profiles and the docs are read from the package itself
(`orchestrator/bundled/`, which the wheel's build copies from the checkout's top-level
folders: setup.py), or, when the package runs from a checkout (an editable install,
`make setup`), from those top-level folders directly. They are real files on disk
either way: Terraform and Ansible read them by path.

What the project writes outside a results folder goes under the XDG base folders,
read when called (`cache_home`, `state_home`): a cache can be deleted at any time
(delayd's build), state is kept between runs (the SSH keys of `emulator up`). The
two exceptions are the emulator's runtime records in /run/interregion (root's
namespaces, gone at a reboot as they are) and SSH's control sockets under /tmp
(a socket path must stay under 108 bytes).
"""

import os
import re
from importlib import resources
from pathlib import Path

BUNDLE = "bundled"  # the folder of orchestrator/ the wheel holds the files in


def _share(package: Path, checkout: Path) -> Path:
    """The folder holding regions.yaml, infra/, playbooks/ and data/: the package's own
    copy when it has one (an installed wheel), else the checkout beside the package."""
    bundled = package / BUNDLE
    return bundled if (bundled / "regions.yaml").is_file() else checkout


PACKAGE = Path(str(resources.files("orchestrator")))
ROOT = PACKAGE.parent  # the checkout, when the package runs from one
# run from a checkout: its results/ and schedules.yaml are the defaults; installed,
# the ones in the folder the command starts in (made absolute at the CLI edge)
CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "regions.yaml").is_file()
SHARE = _share(PACKAGE, ROOT)
CATALOG = SHARE / "regions.yaml"
PRICING = SHARE / "infra" / "pricing.yaml"
INFRA = SHARE / "infra"
PLAYBOOKS = SHARE / "playbooks"
DATA = SHARE / "data"  # public measurements the model is calibrated on (data/README.md)
DOCS = SHARE / "docs"  # the documentation pages (shipped in the wheel too)
SAMPLE_SCHEDULES = SHARE / "schedules.yaml"  # what `schedule init` writes
RESULTS = ROOT / "results" if CHECKOUT else Path("results")
SCHEDULES = ROOT / "schedules.yaml" if CHECKOUT else Path("schedules.yaml")


def _xdg(variable: str, fallback: str) -> Path:
    """$variable/interregion, or ~/fallback/interregion when it is unset, empty or relative
    (the XDG base directory specification ignores a relative one)."""
    value = os.environ.get(variable, "")
    base = Path(value) if os.path.isabs(value) else Path.home() / fallback
    return base / "interregion"


def cache_home() -> Path:
    """$XDG_CACHE_HOME/interregion (~/.cache/interregion): what can be rebuilt."""
    return _xdg("XDG_CACHE_HOME", ".cache")


def state_home() -> Path:
    """$XDG_STATE_HOME/interregion (~/.local/state/interregion): what is kept between runs."""
    return _xdg("XDG_STATE_HOME", ".local/state")


_SHELL_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def shell_word(path: Path | str) -> str:
    """`path` as a shell reads it back in a command a hint prints: as it is when plain,
    else in double quotes with `\\`, `"`, `$` and backticks escaped."""
    text = str(path)
    if _SHELL_PLAIN.fullmatch(text):
        return text
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text) + '"'
