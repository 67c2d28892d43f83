"""The docs hold together: every relative link resolves (files and #anchors), every
`interregion` command line they show names a real command and real options, and the
architecture page and the README name every package and module there is."""

from __future__ import annotations

import ast
import io
import re
import shlex
import tokenize
import unicodedata
from pathlib import Path

import click
import pytest

from orchestrator.cli import main
from orchestrator.core import paths

ROOT = paths.ROOT
PACKAGE = ROOT / "orchestrator"


def doc_files() -> list[Path]:
    """README.md, docs/*.md, and the READMEs of data/, results/ and the package's folders."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += [ROOT / "data" / "README.md", ROOT / "results" / "README.md"]
    files += sorted(PACKAGE.rglob("README.md"))
    return files


_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers (from 1)."""
    out, fenced = [], False
    for no, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((no, line))
    return out


def code_blocks(text: str) -> list[str]:
    """The lines inside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text without markup, lower case, punctuation
    dropped (letters, digits, `_`, `-` and spaces kept), spaces turned into `-`."""
    parts = _CODE_SPAN.split(heading)  # text, ticks, code, ticks, code, ..., text
    text = ""
    for i in range(0, len(parts), 3):
        prose = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", parts[i])  # a link: its text
        text += re.sub(r"<[^>]+>", "", prose)  # inline HTML (in code it is text)
        if i + 2 < len(parts):
            text += parts[i + 2]
    text = text.strip().lower()
    kept = "".join(
        c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN" or c.isalnum()
    )
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for _no, line in prose_lines(text):
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    """Each relative link of a Markdown file that does not resolve, as `file:line: target`."""
    text = path.read_text(encoding="utf-8")
    problems = []
    for no, line in prose_lines(text):
        for m in _LINK.finditer(_CODE_SPAN.sub("", line)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{no}"
            if not linked.exists():
                problems.append(f"{where}: {target} (no such file)")
            elif anchor:
                if linked.suffix != ".md" or linked.is_dir():
                    problems.append(f"{where}: {target} (an anchor into a non-Markdown file)")
                elif anchor not in anchors(linked.read_text(encoding="utf-8")):
                    problems.append(f"{where}: {target} (no such heading)")
    return problems


def test_every_relative_link_in_the_docs_resolves():
    files = doc_files()
    assert ROOT / "docs" / "architecture.md" in files
    problems = [p for f in files for p in broken_links(f)]
    assert not problems, "\n".join(problems)


def test_the_link_check_finds_what_is_broken(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# Title\n\n## Results contract: `results/<sweep-id>/`\n\n## Same\n\n## Same\n"
    )
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#title) [ok](#local) [ok](https://example.com/x)\n"
        "[ok](docs/a.md#results-contract-resultssweep-id) [ok](docs/a.md#same-1)\n"
        "## Local\n"
        "[gone](docs/b.md) [no heading](docs/a.md#nowhere) [no second](docs/a.md#same-2)\n"
        "`[in code](docs/c.md)`\n"
        "```\n[in a block](docs/d.md)\n```\n"
    )
    assert broken_links(page) == [
        f"{page}:4: docs/b.md (no such file)",
        f"{page}:4: docs/a.md#nowhere (no such heading)",
        f"{page}:4: docs/a.md#same-2 (no such heading)",
    ]


_REPO_PATH = re.compile(r"^(orchestrator|testkit|infra|playbooks|tests|bench|data|docs)/[\w./-]*$")


def test_every_path_the_docs_name_exists():
    """A code span such as `orchestrator/sweep/measure.py` or `infra/local` names a real
    file or folder (what a re-layout moves, the docs must follow)."""
    missing = []
    for path in doc_files():
        for no, line in prose_lines(path.read_text(encoding="utf-8")):
            for m in _CODE_SPAN.finditer(line):
                named = m.group(2).strip()
                if _REPO_PATH.match(named) and not (ROOT / named).exists():
                    missing.append(f"{path.relative_to(ROOT)}:{no}: {named}")
    assert not missing, "\n".join(missing)


def _command_lines() -> list[tuple[Path, str]]:
    """`interregion ...` lines of the docs' code blocks and code spans, continuations joined."""
    out = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        block = "\n".join(code_blocks(text)).replace("\\\n", " ")
        lines = [line.strip() for line in block.splitlines()]
        for _no, line in prose_lines(text):
            lines += [m.group(2).strip() for m in _CODE_SPAN.finditer(line)]
        out += [(path, line) for line in lines if line.startswith("interregion ")]
    return out


def _resolve(words: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """The command the words name, its path, and the words after it."""
    command: click.Command = main
    path = []
    rest = list(words)
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    return command, path, rest


def test_every_command_line_in_the_docs_names_real_commands_and_options():
    lines = _command_lines()
    assert len(lines) > 80  # the pages show many; a parser that finds few is broken
    problems = []
    for path, line in lines:
        words = shlex.split(line, comments=True)[1:]
        command, names, rest = _resolve(words)
        if isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
            if rest[0] not in ("...", "ARGS"):
                problems.append(f"{path.name}: {line}: no command {rest[0]!r}")
            continue
        known = {"--help", "-h"}
        for param in command.params:
            known.update(param.opts + param.secondary_opts)
        for word in rest:
            option = word.strip("[]").split("=")[0]
            if option.startswith("-") and option not in known:
                problems.append(f"{path.name}: {line}: {' '.join(names)} has no {option}")
    assert not problems, "\n".join(problems)


def _packages() -> list[Path]:
    """Every folder of the package that holds Python modules (with an `__init__` or not)."""
    return sorted({p.parent for p in PACKAGE.glob("*/*.py")})


def test_the_architecture_page_lists_every_package_and_its_modules():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    headings = {m.group(2) for _n, line in prose_lines(page) if (m := _HEADING.match(line))}
    packages = _packages()
    assert {p.name for p in packages} >= {"core", "model", "results", "plan", "sweep", "cli"}
    missing = []
    for package in packages:
        if f"`orchestrator.{package.name}`" not in headings:
            missing.append(f"no heading `orchestrator.{package.name}`")
            continue
        section = page.split(f"### `orchestrator.{package.name}`", 1)[1].split("\n### ", 1)[0]
        for module in sorted(package.glob("*.py")):
            if f"`{module.name}`" not in section and module.name != "__init__.py":
                missing.append(f"orchestrator.{package.name}: {module.name} not listed")
    flat = [m.name for m in PACKAGE.glob("*.py") if m.name not in ("__init__.py", "__main__.py")]
    for name in flat:
        if f"`{name}`" not in page:
            missing.append(f"orchestrator/{name} not listed")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("folder", ["infra/", "playbooks/", "regions.yaml"])
def test_the_readme_table_has_a_row_for_the_tool_folders(folder):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"| `{folder}` |" in readme


def test_the_readme_table_has_a_row_per_package_and_stays_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for package in _packages():
        assert f"| `orchestrator/{package.name}` |" in readme, package.name
    for module in PACKAGE.glob("*.py"):
        if module.name not in ("__init__.py", "__main__.py"):
            assert f"| `orchestrator/{module.name}` |" in readme, module.name
    assert len(readme.encode()) < 25_000 and len(readme.splitlines()) <= 200
    for target in ("make run", "make test", "make demo"):
        assert target in readme


# `package.module.name` in prose: a module renamed or moved leaves these behind
_PACKAGES = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
_DOTTED = re.compile(
    r"(?<![\w./-])(?:orchestrator\.)?(" + "|".join(_PACKAGES) + r")\.([a-z_][a-z0-9_]*)\.[A-Za-z_]"
)


# `orchestrator.package.x` with nothing after it: a module, a subpackage, or a name of the
# package's face (its __init__)
_QUALIFIED = re.compile(
    r"(?<![\w./-])orchestrator\.(" + "|".join(_PACKAGES) + r")\.([a-z_][a-z0-9_]*)(?![\w.(])"
)


def stale_module_names(text: str) -> list[str]:
    """The `package.module.name` references in `text` whose module is not in the package,
    and the `orchestrator.package.x` ones whose x is neither a module of it nor a name its
    face holds."""
    stale = [
        m.group(0)[:-2]
        for m in _DOTTED.finditer(text)
        if not (PACKAGE / m.group(1) / f"{m.group(2)}.py").exists()
        and not (PACKAGE / m.group(1) / m.group(2)).is_dir()
    ]
    for m in _QUALIFIED.finditer(text):
        package, name = PACKAGE / m.group(1), m.group(2)
        face = (package / "__init__.py").read_text(encoding="utf-8")
        if not (
            (package / f"{name}.py").exists()
            or (package / name).is_dir()
            or re.search(rf"\b{name}\b", face)
        ):
            stale.append(m.group(0))
    return stale


def _prose_of(module: Path) -> list[tuple[int, str]]:
    """A module's comments and docstrings, with their line numbers."""
    source = module.read_text(encoding="utf-8")
    found = [
        (t.start[0], t.string)
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.COMMENT
    ]
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(ast.parse(source)):
        doc = ast.get_docstring(node, clean=False) if isinstance(node, documented) else None
        if doc:
            found.append((getattr(node, "lineno", 1), doc))
    return found


def test_the_docstrings_comments_and_docs_name_modules_that_exist():
    stale = [
        f"{module.relative_to(ROOT)}:{no}: {name}"
        for module in sorted(PACKAGE.rglob("*.py"))
        for no, text in _prose_of(module)
        for name in stale_module_names(text)
    ]
    stale += [
        f"{page.relative_to(ROOT)}:{no}: {name}"
        for page in doc_files()
        for no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for name in stale_module_names(line)
    ]
    assert not stale, "\n".join(stale)


def test_the_module_name_check_finds_a_renamed_module():
    said = "merged as results.store.write_rows does it (see `orchestrator.site.build.build_site`)"
    assert stale_module_names(said) == ["results.store", "orchestrator.site.build"]
    assert stale_module_names("results.files.write_rows, sweep.id, docs/site.build.md") == []
    assert stale_module_names("(orchestrator.cli.signals) and orchestrator.cli.options") == [
        "orchestrator.cli.signals"
    ]
    assert stale_module_names("orchestrator.cli.stop_on_signals, orchestrator.history.") == []
