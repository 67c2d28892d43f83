"""Reading the Terraform stacks' declarations: variables, their types, and whether a
value conforms to a type."""

from __future__ import annotations

import re
from typing import Any

import hcl2

from orchestrator.core import paths


def _load(stack: str, name: str) -> dict[str, Any]:
    with open(paths.INFRA / stack / name) as f:
        return hcl2.load(f)


def _unquote(text: str) -> str:
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def _expr(text: str) -> str:
    return text[2:-1] if text.startswith("${") and text.endswith("}") else text


def declared(stack: str) -> dict[str, dict[str, Any]]:
    """Variable name -> its block (type, description, default, validation)."""
    out = {}
    for block in _load(stack, "variables.tf").get("variable", []):
        for name, body in block.items():
            out[_unquote(name)] = body
    return out


# A tiny parser for Terraform type constraints: string, number, bool,
# map(T), list(T), set(T), object({a = T, ...}).
def parse_type(text: str) -> Any:
    tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|[(){}=,]", _expr(text))
    pos = 0

    def take(expected: str | None = None) -> str:
        nonlocal pos
        token = tokens[pos]
        if expected is not None:
            assert token == expected, (expected, token, text)
        pos += 1
        return token

    def one() -> Any:
        name = take()
        if name in ("string", "number", "bool", "any"):
            return name
        take("(")
        if name == "object":
            take("{")
            attrs = {}
            while tokens[pos] != "}":
                key = take()
                take("=")
                attrs[key] = one()
                if tokens[pos] == ",":
                    take(",")
            take("}")
            take(")")
            return ("object", attrs)
        inner = one()
        take(")")
        return (name, inner)

    result = one()
    assert pos == len(tokens), text
    return result


def conforms(value: Any, type_: Any, where: str) -> list[str]:
    """Problems with `value` against a parsed type, one line each."""
    if type_ == "any":
        return []
    if type_ == "string":
        return [] if isinstance(value, str) else [f"{where}: expected string, got {value!r}"]
    if type_ == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected number, got {value!r}"]
    if type_ == "bool":
        return [] if isinstance(value, bool) else [f"{where}: expected bool, got {value!r}"]
    kind, inner = type_
    if kind == "map":
        if not isinstance(value, dict):
            return [f"{where}: expected map, got {value!r}"]
        return [p for k, v in value.items() for p in conforms(v, inner, f"{where}[{k}]")]
    if kind in ("list", "set"):
        if not isinstance(value, list):
            return [f"{where}: expected list, got {value!r}"]
        return [p for i, v in enumerate(value) for p in conforms(v, inner, f"{where}[{i}]")]
    assert kind == "object"
    if not isinstance(value, dict):
        return [f"{where}: expected object, got {value!r}"]
    problems = []
    if set(value) != set(inner):
        problems.append(f"{where}: attributes {sorted(value)} != declared {sorted(inner)}")
    for k in set(value) & set(inner):
        problems += conforms(value[k], inner[k], f"{where}.{k}")
    return problems
