"""Where the project's files live. Everything else takes paths as arguments."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CATALOG = ROOT / "regions.yaml"
PRICING = ROOT / "infra" / "pricing.yaml"
INFRA = ROOT / "infra"
PLAYBOOKS = ROOT / "playbooks"
RESULTS = ROOT / "results"
DATA = ROOT / "data"  # public measurements the model is calibrated on (data/README.md)
