"""A small TOML writer for flat profiles: top-level keys and one level of tables.

Values may be str, bool, int, finite float, and lists (possibly nested) of those.
Read back with :mod:`tomllib`; ``tomllib.loads(dumps(data)) == data`` (tuples come
back as lists).
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    if not isinstance(k, str) or not k:
        raise ValueError(f"TOML keys must be non-empty strings, got {k!r}")
    return k if _BARE_KEY.match(k) else _string(k)


def _string(text: str) -> str:
    """A TOML basic string (JSON escapes, plus DEL, which TOML forbids raw)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        if not math.isfinite(v):
            raise ValueError(f"{where} is {v!r}; profiles hold finite numbers only")
        text = repr(float(v))
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    raise ValueError(f"{where} has a {type(v).__name__} ({v!r}); the TOML writer takes str, bool, int, float, lists")


def dumps(data: Mapping[str, Any], *, header: str = "") -> str:
    """Return `data` as TOML text.

    Parameters
    ----------
    data : mapping
        Top-level keys with plain values first, then tables (mappings of plain values).
    header : str, optional
        Comment lines put first (each prefixed with ``# ``).

    Raises
    ------
    ValueError
        If a value is not writable (None, a nested table, NaN, another type).
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    tables = []
    for k, v in data.items():
        if isinstance(v, Mapping):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v, k)}")
    for name, table in tables:
        lines.append("")
        lines.append(f"[{_key(name)}]")
        for k, v in table.items():
            if isinstance(v, Mapping):
                raise ValueError(f"[{name}] {k} is a nested table; profiles are flat (one level of tables)")
            lines.append(f"{_key(k)} = {_value(v, f'[{name}] {k}')}")
    return "\n".join(lines) + "\n"
