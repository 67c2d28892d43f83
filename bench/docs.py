"""docs/benchmarks.md, generated from the benches' figures.

Each bench writes its figures with `--json` (bench/_figures.py): `make bench-json` keeps
them in bench/figures/<bench>.json, and this script turns those files into the page, one
section per bench with the date, machine and load of its run. A file whose `source` is
"quoted" holds figures the hand-kept page quoted before it was generated, with the date
they were measured: they stay marked so until the bench runs again. How the figures
moved over time is in bench/figures/CHANGELOG.md (dated) and the git log.

Run: .venv/bin/python bench/docs.py           # writes docs/benchmarks.md
     .venv/bin/python bench/docs.py --check   # fails when the page is not what the files make
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "bench" / "figures"
PAGE = ROOT / "docs" / "benchmarks.md"
CHANGELOG = FIGURES / "CHANGELOG.md"
# the page's order: from planning to the history, then what the user sees first
ORDER = (
    "schedule", "netmodel", "emulator", "sweep", "prepare", "study", "limiter",
    "report", "site", "history", "mesh", "quotable", "stalls", "hostile_input", "demo",
    "cli_startup",
)  # fmt: skip
FORMAT = "interregion-bench/v1"

INTRO = """\
The figures the issues ask for, measured by the scripts in `bench/` (`make bench` prints
them; root is needed for the emulator and sweep ones). Tests never assert on wall-clock
time. Each section says when its figures were measured, on what machine and at what load
(the 1-minute load average as the run started and ended): this machine has 2 cores shared
with other work, so times are indicative. Figures marked *quoted* were carried over from
the notebook this page was before it was generated, with the date it gave them (or, where
it gave none, the date they first appear in the repository: measured on or before it);
the rest are a run's own `--json` output.
"""


def _anchor(title: str) -> str:
    keep = "".join(c for c in title.lower() if c.isalnum() or c in " -")
    return keep.replace(" ", "-")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:  # NaN: not measured
            return ""
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 1e4 else str(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def _load(doc: dict) -> str:
    load = doc.get("load") or {}
    start, end = load.get("start"), load.get("end")
    if start is None and end is None:
        return str(load.get("text", "load not recorded"))
    return f"load {_cell(start)} → {_cell(end)}"


def _machine(doc: dict) -> str:
    m = doc.get("machine") or {}
    if not m:
        return "machine not recorded"
    parts = [f"{m.get('cpus', '?')} cpus", str(m.get("arch", ""))]
    if m.get("memory_gib"):
        parts.append(f"{m['memory_gib']} GiB")
    if m.get("kernel"):
        parts.append(f"Linux {m['kernel']}")
    return ", ".join(p for p in parts if p)


def _when(doc: dict) -> str:
    date = str(doc["date_utc"]).replace("T", " ").removesuffix("Z")
    date = date + " UTC" if ":" in date else date
    return f"{date}, *quoted*" if doc.get("source") == "quoted" else date


def check_doc(doc: dict, name: str) -> None:
    """A figures file as bench/_figures.py writes it; a ValueError naming what is wrong."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"{name}: format is not {FORMAT}")
    for key in ("bench", "script", "area", "date_utc", "tables", "source"):
        if key not in doc:
            raise ValueError(f"{name}: no '{key}'")
    if doc["source"] not in ("run", "quoted"):
        raise ValueError(f"{name}: source {doc['source']!r} is neither run nor quoted")
    for table in doc["tables"]:
        width = len(table["columns"])
        for row in table["rows"]:
            if len(row) != width:
                raise ValueError(f"{name}: '{table['title']}' has a row of {len(row)} cells")


def load_figures(folder: Path = FIGURES) -> list[dict]:
    """Every figures file, in the page's order: by bench (ORDER), then by file name (a
    bench may have several, e.g. one run of a part and the quoted figures of another)."""
    docs = []
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        check_doc(doc, path.name)
        if doc["bench"] not in ORDER:
            raise ValueError(f"{path.name}: bench {doc['bench']!r} is not in bench/docs.py's ORDER")
        docs.append((ORDER.index(doc["bench"]), path.name, doc))
    return [doc for _i, _name, doc in sorted(docs, key=lambda d: d[:2])]


def render(docs: list[dict], changelog: str) -> str:
    out = [
        "# Benchmarks\n",
        "<!-- Generated by bench/docs.py from bench/figures/*.json: run a bench with --json "
        "(make bench-json) or edit those files, then make bench-docs. -->\n",
        INTRO,
        "| area | script | headline | goal | measured |",
        "|---|---|---|---|---|",
    ]
    for doc in docs:
        out.append(
            f"| [{doc['area']}](#{_anchor(doc['area'])}) | `{doc['script']}` | "
            f"{_cell(doc.get('headline'))} | {_cell(doc.get('goal'))} | {_when(doc)} |"
        )
    for doc in docs:
        args = " ".join(doc.get("args") or [])
        command = f"`{doc['script']}{' ' + args if args else ''}`"
        out += [
            "",
            f"## {doc['area']}",
            "",
            f"{command}: {_when(doc)}; {_machine(doc)}; {_load(doc)}.",
        ]
        if doc.get("headline"):
            goal = f" (goal: {doc['goal']})" if doc.get("goal") else ""
            out += ["", f"**{doc['headline']}**{goal}"]
        for table in doc["tables"]:
            out += ["", f"{table['title']}:", ""]
            out.append("| " + " | ".join(_cell(c) for c in table["columns"]) + " |")
            out.append("|" + "---|" * len(table["columns"]))
            out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table["rows"]]
        if doc.get("notes"):
            out.append("")
            out += [f"- {note}" for note in doc["notes"]]
    out += ["", changelog.strip(), ""]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--figures", type=Path, default=FIGURES)
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args()
    try:
        docs = load_figures(args.figures)
        changelog = (args.figures / CHANGELOG.name).read_text(encoding="utf-8")
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    page = render(docs, changelog)
    if args.check:
        if not args.out.exists() or args.out.read_text(encoding="utf-8") != page:
            print(f"error: {args.out} is not what bench/figures makes: run make bench-docs",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0
    args.out.write_text(page, encoding="utf-8")
    print(f"{args.out}: {len(docs)} benches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
