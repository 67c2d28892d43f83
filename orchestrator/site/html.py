"""The pages' common parts: the header and footer, the EMULATED banner, JSON in a page,
and a file written whole (or in place, into a folder being built)."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import orjson

from orchestrator.core import open_new, reusing, script_safe

esc = html.escape


def write(path: Path, text: str) -> None:
    """`path` written whole: under a temporary name, renamed; in a folder being built
    with a previous build's files to take, as write_new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if reusing(path):
        write_new(path, text)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_new(path: Path, text: str) -> None:
    """A file written in place into a folder being built, which no reader sees before it
    is swapped in whole (thousands of pair pages: no rename each); its folder must exist."""
    with open_new(path) as f:
        f.write(text)


def head(title: str, prefix: str, history: bool = False, studies: bool = False) -> str:
    """The top of every page; `history` adds the pages built from the history store,
    `studies` the list of TCP studies (studies/index.html)."""
    links = (
        f"<a href='{prefix}history/matrix.html'>Matrix</a>"
        f"<a href='{prefix}history/changes.html'>Changes</a>"
        if history
        else ""
    )
    if studies:
        links += f"<a href='{prefix}studies/index.html'>TCP studies</a>"
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{esc(title)} - interregion</title>\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        "<link rel='icon' href='data:,'>\n"  # no favicon request
        f"<link rel='stylesheet' href='{prefix}assets/site.css'>\n"
        "</head>\n<body>\n"
        "<header>"
        f"<a class='brand' href='{prefix}index.html'>interregion</a>"
        # with a history store the front page is the matrix, the latest sweep latest.html
        f"<a href='{prefix}{'latest' if history else 'index'}.html'>Latest sweep</a>"
        f"<a href='{prefix}methodology.html'>Methodology</a>"
        f"<a href='{prefix}data.html'>Data</a>"
        f"{links}"
        "</header>\n<main>\n"
    )


def foot() -> str:
    return "</main>\n</body>\n</html>\n"


def scripts(*srcs: str) -> str:
    return "".join(f"<script src='{src}'></script>\n" for src in srcs)


def banner(emulated: bool, what: str = "These results were", attrs: str = "") -> str:
    if not emulated:
        return ""
    return (
        f"<div class='emulated-banner'{attrs}>EMULATED: "
        f"{esc(what)} measured on the emulated cloud (network namespaces on one machine "
        "with a latency model), not on AWS or GCP.</div>\n"
    )


_JSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def json_text(data: Any) -> str:
    """Compact UTF-8 JSON, a float as json.dumps writes it, NaN as null; orjson, as a
    year's pair pages are tens of MB of it."""
    return orjson.dumps(data, default=_json_default, option=_JSON_OPTIONS).decode()


def json_script(element_id: str, data: Any) -> str:
    text = script_safe(json_text(data))
    return f"<script type='application/json' id='{element_id}'>{text}</script>\n"


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
