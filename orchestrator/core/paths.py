"""Where the project's files live. Everything else takes paths as arguments.

The catalog, the Terraform stacks, the playbooks, the vendored public data and the
pricing table are read from the package itself (`orchestrator/bundled/`, which the
wheel's build copies from the checkout's top-level folders: setup.py), or, when the
package runs from a checkout (an editable install, `make setup`), from those
top-level folders directly. They are real files on disk either way: Terraform and
Ansible read them by path.
"""

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
RESULTS = ROOT / "results" if CHECKOUT else Path("results")
SCHEDULES = ROOT / "schedules.yaml" if CHECKOUT else Path("schedules.yaml")
