"""Converters: the public AWS/GCP measurements vendored in data/ -> our CSV schema.

Their columns differ from ours (data/README.md describes them), so `interregion
history convert` rewrites them as measurements.csv rows that `history import` then
loads as a dated, labelled source. Pure functions over the text; only AWS and GCP
rows are kept (skyplane's Azure rows are dropped).

skyplane-latency-2022.csv: `ping -c 10` summary per directed pair -> rtt_min/avg/max/
mdev_ms, rtt_samples 10 and the machine types; GCP zones (us-central1-a) name their
region. Each row's GCP network tiers go to `network_tier` (PREMIUM, STANDARD or
PREMIUM/STANDARD: source's then destination's), a column beside the schema's that
`history import` takes into the fingerprint: the tiers are never pooled. No time of
day: the import's month dates the rows.

doit-intercloud-throughput-2022-02.csv: `timestamp` -> started_utc; `avgrtt` ->
rtt_avg_ms (rtt_samples 5: `ping -c 5`); `bitrate_Bps` is the BYTES one ~10 s iperf2
stream moved, so throughput_bps = bitrate_Bps x 8 / 10 (netmodel.DOIT_TEST_SECONDS); streams 1,
duration_s 10; the machine type of each side from `aws_vm` / `gcp_vm`.

Both publish the mean RTT only, so their RTT is the mean (orchestrator.results.flags.row_rtt_ms).
Every converted row carries its `flags` (orchestrator.results.flags), computed over the file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.core import DATA, UserError, csv_errors, distance_km, read_text
from orchestrator.model import CLOUDS, Catalog, load_catalog
from orchestrator.netmodel import DOIT_TEST_SECONDS
from orchestrator.results import (
    count_flags,
    csv_text,
    number_problem,
    of_ends,
    set_flags,
    write_atomic,
)

FORMATS = ("skyplane", "doit")
# the file of each format that ships with the package (data/, in the wheel too): what
# `history convert --from FORMAT builtin` converts
BUILTIN = "builtin"
BUILTIN_FILES = {
    "skyplane": "skyplane-latency-2022.csv",
    "doit": "doit-intercloud-throughput-2022-02.csv",
}


def builtin_file(fmt: str) -> Path:
    """The shipped public data file of format `fmt` (data/README.md says where from)."""
    return DATA / BUILTIN_FILES[fmt]


SKYPLANE_PINGS = 10  # ping -c 10 (data/README.md)
DOIT_PINGS = 5  # ping -c 5
# A converted file's columns: the schema's, then what the schema has no column for.
EXTRA_COLUMNS = ("network_tier",)


def tier(src_tier: str, dst_tier: str) -> str:
    """One network_tier for a pair: the tier both ends use, else source/destination."""
    return of_ends(src_tier, dst_tier)


def region_key(cloud: str, region: str) -> tuple[str, str]:
    """(cloud, region) as the catalog names them; a GCP zone names its region."""
    cloud = cloud.lower()
    if cloud == "gcp" and region.count("-") == 2:
        region = region.rsplit("-", 1)[0]
    return cloud, region


def _distance(catalog: Catalog | None, src: tuple[str, str], dst: tuple[str, str]) -> str:
    if catalog is None:
        return ""
    known = {r.key: r for r in catalog.regions}
    a, b = known.get(":".join(src)), known.get(":".join(dst))
    return f"{distance_km(a.lat, a.lon, b.lat, b.lon):.1f}" if a and b else ""


def _row(src: tuple[str, str], dst: tuple[str, str], **values: Any) -> dict[str, Any]:
    return {
        "src_cloud": src[0],
        "src_region": src[1],
        "dst_cloud": dst[0],
        "dst_region": dst[1],
        "status": "ok",
        **values,
    }


def skyplane_rows(text: str, catalog: Catalog | None = None) -> Iterator[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    _require(reader.fieldnames, ("src_region", "dst_region", "avg_rtt"), "skyplane")
    for line in reader:
        src_cloud, _, src_id = line["src_region"].partition(":")
        dst_cloud, _, dst_id = line["dst_region"].partition(":")
        if src_cloud not in CLOUDS or dst_cloud not in CLOUDS:
            continue
        src, dst = region_key(src_cloud, src_id), region_key(dst_cloud, dst_id)
        yield _row(
            src,
            dst,
            distance_km=_distance(catalog, src, dst),
            rtt_min_ms=line.get("min_rtt", ""),
            rtt_avg_ms=line["avg_rtt"],
            rtt_max_ms=line.get("max_rtt", ""),
            rtt_mdev_ms=line.get("mdev_rtt", ""),
            rtt_samples=SKYPLANE_PINGS,
            network_tier=tier(line.get("src_tier", ""), line.get("dst_tier", "")),
            src_machine_type=line.get("src_instance_class", ""),
            dst_machine_type=line.get("dst_instance_class", ""),
        )


def doit_rows(text: str, catalog: Catalog | None = None) -> Iterator[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    _require(reader.fieldnames, ("from_cloud", "to_cloud", "bitrate_Bps", "avgrtt"), "doit")
    for line in reader:
        src = region_key(line["from_cloud"], line["from_region"])
        dst = region_key(line["to_cloud"], line["to_region"])
        if src[0] not in CLOUDS or dst[0] not in CLOUDS:
            continue
        try:
            throughput = f"{float(line['bitrate_Bps']) * 8.0 / DOIT_TEST_SECONDS:.1f}"
        except ValueError:
            throughput = ""
        machine = {"aws": line.get("aws_vm", ""), "gcp": line.get("gcp_vm", "")}
        yield _row(
            src,
            dst,
            started_utc=line.get("timestamp", ""),
            distance_km=_distance(catalog, src, dst),
            rtt_avg_ms=line["avgrtt"],
            rtt_samples=DOIT_PINGS,
            throughput_bps=throughput,
            streams=1,
            duration_s=DOIT_TEST_SECONDS,
            src_machine_type=machine[src[0]],
            dst_machine_type=machine[dst[0]],
        )


def _require(found: Any, needed: tuple[str, ...], fmt: str) -> None:
    missing = [c for c in needed if c not in (found or ())]
    if missing:
        raise UserError(
            f"not a {fmt} file: the header lacks {', '.join(missing)} (see data/README.md)"
        )


def convert(fmt: str, text: str, catalog: Catalog | None = None) -> list[dict[str, Any]]:
    """Rows in the results schema from a public file of format `fmt` (skyplane, doit),
    each with its flags; a source's extra fields in EXTRA_COLUMNS."""
    with csv_errors(f"--from {fmt} file"):
        if fmt == "skyplane":
            rows = list(skyplane_rows(text, catalog))
        elif fmt == "doit":
            rows = list(doit_rows(text, catalog))
        else:
            raise UserError(f"--from {fmt}: one of {', '.join(FORMATS)}")
    for n, row in enumerate(rows, start=2):  # each number as the store will take it
        for column, value in row.items():
            problem = number_problem(column, str(value)) if value not in ("", None) else None
            if problem:
                raise UserError(f"--from {fmt} file: row {n}, {column}: {problem}: fix the row")
    # the asked duration is unknown (iperf2's ~10 s): no duration_short
    set_flags(rows)
    return rows


@dataclass(frozen=True)
class Converted:
    """`history convert`'s result: the CSV written, its rows and their flags counted."""

    out: Path
    rows: int
    flagged: dict[str, int]  # rows per flag (results.flags.FLAGS order)


def convert_file(fmt: str, file: Path | str, out: Path) -> Converted:
    """`history convert`'s use case: `file` (or BUILTIN, the format's shipped file) in format
    `fmt` rewritten as a CSV in our schema at `out`, for `history import`."""
    path = builtin_file(fmt) if file == BUILTIN else Path(file)
    rows = convert(fmt, read_text(path, "CSV file"), load_catalog())
    write_atomic(out, csv_text(rows, extra=EXTRA_COLUMNS))
    return Converted(out, len(rows), count_flags(r.get("flags") for r in rows))
