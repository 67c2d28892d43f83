"""The small fixture catalog and sweep folders the report and site tests build on."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.model.catalog import parse_catalog
from testkit import synthetic

CATALOG = parse_catalog(
    {
        "clouds": {"aws": {"machine_type": "t3.small"}, "gcp": {"machine_type": "e2-small"}},
        "regions": [
            {"cloud": "aws", "id": "us-east-1", "city": "Ashburn", "country": "US",
             "lat": 39.04, "lon": -77.49, "source": "t"},
            {"cloud": "aws", "id": "eu-west-1", "city": "Dublin", "country": "IE",
             "lat": 53.35, "lon": -6.26, "source": "t"},
            {"cloud": "aws", "id": "ap-southeast-2", "city": "Sydney", "country": "AU",
             "lat": -33.87, "lon": 151.21, "source": "t"},
            {"cloud": "gcp", "id": "us-east4", "city": "Ashburn", "country": "US",
             "lat": 39.03, "lon": -77.47, "source": "t", "zone": "us-east4-a"},
            {"cloud": "gcp", "id": "europe-west1", "city": "St. Ghislain", "country": "BE",
             "lat": 50.45, "lon": 3.82, "source": "t", "zone": "europe-west1-b"},
            {"cloud": "gcp", "id": "asia-northeast1", "city": "Tokyo", "country": "JP",
             "lat": 35.68, "lon": 139.69, "source": "t", "zone": "asia-northeast1-a"},
        ],
    }
)  # fmt: skip


def _sweep(results: Path, sweep_id: str, n: int = 120, seed: int = 1, backend="local") -> Path:
    folder = results / sweep_id
    rows = synthetic.synthetic_rows(
        CATALOG.regions, n, sweep_id=sweep_id, seed=seed, backend=backend
    )
    synthetic.write_measurements(folder / "measurements.csv", rows)
    (folder / "sweep.json").write_text(json.dumps(synthetic.sweep_record(sweep_id, backend)))
    return folder


def write_catalog(path: Path) -> Path:
    """CATALOG as a regions.yaml for the commands' --catalog."""
    import yaml

    regions = [
        {k: v for k, v in r.__dict__.items() if v not in ("", False)} for r in CATALOG.regions
    ]
    path.write_text(
        yaml.safe_dump(
            {
                "clouds": {
                    "aws": {"machine_type": "t3.small"},
                    "gcp": {"machine_type": "e2-small"},
                },
                "regions": regions,
            }
        )
    )
    return path
