"""Reading the files a user gives us: text only, UTF-8 only, and YAML without surprises.

Every reader of a user's file goes through `read_text` (or `load_yaml`), so a folder
where a file is expected, a binary file or another encoding is one line naming the
file, never a traceback. `load_yaml` also refuses what PyYAML would accept silently:
a key given twice in one mapping (the last would win: a budget can rise 500x
unnoticed) and infinite or NaN numbers (`.inf`, `.nan`).
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
import stat
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import yaml

from orchestrator.core.errors import UserError

READ_LIMIT = 256 * 2**20  # a year's measurements.csv of a full catalog is ~100 MB
YAML_LIMIT = 16 * 2**20  # the catalog is 0.1 MB
_CHUNK = 2**20


def read_text(path: Path, what: str = "file", limit: int = READ_LIMIT) -> str:
    """The text of `path`, at most `limit` bytes; one-line UserErrors for a folder, a
    device (/dev/zero never ends), a file over the limit, a binary file or a file that is
    not UTF-8. A missing file raises FileNotFoundError (callers word it)."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder, expected a {what}")
    chunks: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
                raise UserError(f"{path}: is a device, expected a {what}: give a file")
            while chunk := f.read(_CHUNK):
                if b"\0" in chunk:  # refused at once, not after reading all of it
                    raise UserError(f"{path}: binary data, expected a text {what}")
                size += len(chunk)
                if size > limit:
                    raise UserError(
                        f"{path}: larger than {limit // 2**20} MiB, expected a {what}: "
                        "give a smaller file"
                    )
                chunks.append(chunk)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise UserError(f"{path}: cannot read it ({e.strerror})") from None
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text: save the {what} as UTF-8") from None
    return text.removeprefix("\ufeff")


# aliases may repeat a node; past this many nodes once expanded (a billion laughs: nested
# aliases, each ten of the one before) the document is refused before it is built
MAX_EXPANDED_NODES = 1_000_000


def _expanded(node: yaml.Node) -> int:
    """How many nodes `node` stands for with every alias expanded: each distinct node
    counted once with its children's counts (linear in the document, not its expansion)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        at, done = stack.pop()
        if id(at) in sizes:
            continue
        children: list[yaml.Node] = []
        if isinstance(at, yaml.SequenceNode):
            children = list(at.value)
        elif isinstance(at, yaml.MappingNode):
            children = [n for pair in at.value for n in pair]
        if done:
            sizes[id(at)] = 1 + sum(sizes.get(id(c), 0) for c in children)
            continue
        stack.append((at, True))
        stack.extend((c, False) for c in children if id(c) not in sizes and c is not at)
    return sizes[id(node)]


class _Bounded:
    """construct_document that refuses a document whose aliases expand past
    MAX_EXPANDED_NODES."""

    def construct_document(self, node: yaml.Node) -> Any:
        if _expanded(node) > MAX_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"its aliases expand to more than {MAX_EXPANDED_NODES:,} values",
                node.start_mark,
            )
        return super().construct_document(node)  # type: ignore[misc]


@contextlib.contextmanager
def csv_errors(name: str, reader: Any = None) -> Iterator[None]:
    """What the csv module refuses while the block reads (a field over its 128 KiB limit,
    a NUL, a quote left open) as one line naming the file and, given the `reader`, the
    line."""
    try:
        yield
    except csv.Error as e:
        line = f" line {reader.line_num}:" if reader is not None else ""
        raise UserError(f"{name}:{line} not a CSV file that can be read ({e}): fix it") from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and infinite or NaN numbers."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)  # resolve `<<` merges first, as the base class does
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        if isinstance(key, Hashable) and key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key '{key}', also on line {seen[key]}",
                key_node.start_mark,
            )
        if isinstance(key, Hashable):
            seen[key] = line
    return loader.construct_mapping(node, deep=deep)


def _float(loader: _StrictLoader, node: yaml.ScalarNode) -> float:
    value = loader.construct_yaml_float(node)
    if not math.isfinite(value):
        raise yaml.constructor.ConstructorError(
            None, None, f"'{node.value}' is not a finite number", node.start_mark
        )
    return float(value)


class _StrictCLoader(getattr(yaml, "CSafeLoader", _StrictLoader)):  # type: ignore[misc]
    """_StrictLoader on libyaml's parser where PyYAML has it: the same values, ~7x faster
    (the catalog: 8 ms, not 55, in every command that reads it)."""


for _loader in (_StrictLoader, _StrictCLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    _loader.add_constructor("tag:yaml.org,2002:float", _float)


class _BoundedLoader(_Bounded, _StrictLoader):
    """_StrictLoader that also refuses alias bombs."""


class _BoundedCLoader(_Bounded, _StrictCLoader):
    """_StrictCLoader that also refuses alias bombs."""


def parse_yaml(text: str, name: str) -> Any:
    """YAML text -> data; one-line UserErrors (with the line) for what cannot be read.
    Read by libyaml first; text it refuses is read again by PyYAML's own parser, whose
    errors (and what it accepts) are those every message here was written for."""
    # an alias is written '*name': text without a '*' has none to bound (the catalog: the
    # bound's walk over every node would add a third to its parse)
    fast, python = (
        (_BoundedCLoader, _BoundedLoader) if "*" in text else (_StrictCLoader, _StrictLoader)
    )
    try:
        return yaml.load(text, Loader=fast)
    except yaml.YAMLError:
        pass
    try:
        return yaml.load(text, Loader=python)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark else ""
        problem = " ".join(str(getattr(e, "problem", None) or "syntax error").split())
        raise UserError(f"{name}:{line} not valid YAML ({problem}): fix the file") from None


def load_yaml(path: Path, what: str = "YAML file") -> Any:
    """`path` read as text (at most YAML_LIMIT bytes) and parsed strictly (parse_yaml)."""
    return parse_yaml(read_text(path, what, YAML_LIMIT), str(path))
