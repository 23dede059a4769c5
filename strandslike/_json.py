r"""The one JSON encoder of everything strandslike persists, and the check that a value can go through it.

Validation and storage must agree exactly: a value that passes `ensure_json_serializable` is written by every store
and reads back equal; a value that would not is refused *before* anything runs or changes. So both use this module.

What is refused, and why (each of these once let a resume pass validation and then wedge a session):

- dict keys that are not strings: ``json.dumps`` silently turns ``{1: 2}`` into ``{"1": 2}`` (the value changes on
  the way back) and ``{None: 1, "a": 2}`` breaks sorted encodings;
- ``NaN`` and infinities: not JSON; other readers (PostgreSQL, browsers) refuse them;
- strings that are not valid Unicode (lone surrogates such as ``"\ud800"``): they cannot be encoded as UTF-8;
- integers with more than `MAX_INT_DIGITS` digits: Python refuses to print them, so they can never be written;
- nesting deeper than `MAX_DEPTH` lists and objects: it would exhaust the interpreter's stack on the way back;
- any other type (sets, objects, ``bytes`` unless the caller stores bytes, as messages do for images).

Tuples are accepted and stored as lists, as Strands does.
"""

import base64
import json
import math
from typing import Any

from .types.exceptions import NotJSONSerializableError, safe_repr

MAX_DEPTH = 100
MAX_INT_DIGITS = 4000
_MAX_INT_BITS = int(MAX_INT_DIGITS * math.log2(10))  # a cheap bound: no int within it prints past the limit
BYTES_MARKER = "__bytes_encoded__"


def json_problem(value: Any, *, allow_bytes: bool = False) -> str | None:
    """Return why ``value`` cannot be stored as JSON (a short phrase naming where), or None if it can.

    Walks the value without recursion, so no input can raise `RecursionError`.
    """
    # Each entry: the item, its path as a linked (parent, key) pair (built into text only for the message), depth.
    stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while stack:
        item, path, depth = stack.pop()
        if item is None or item is True or item is False:
            continue
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as exc:
                    return f"{_where(path)} is not valid Unicode text (a lone surrogate at position {exc.start})"
        elif isinstance(item, int):
            if item.bit_length() > _MAX_INT_BITS:
                return f"{_where(path)} is an integer with more than {MAX_INT_DIGITS} digits"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{_where(path)} is {item!r}, which JSON cannot represent"
        elif isinstance(item, dict):
            if depth >= MAX_DEPTH:
                return f"{_where(path)} is nested more than {MAX_DEPTH} levels deep"
            for key, child in item.items():
                if type(key) is not str:
                    shown = safe_repr(key)
                    return f"{_where(path)} has a key {shown} of type {type(key).__name__}; object keys must be strings"
                if not key.isascii():
                    try:
                        key.encode("utf-8")
                    except UnicodeEncodeError as exc:
                        return (
                            f"{_where(path)} has a key that is not valid Unicode text (a lone surrogate at position "
                            f"{exc.start})"
                        )
                stack.append((child, (path, key), depth + 1))
        elif isinstance(item, list | tuple):
            if depth >= MAX_DEPTH:
                return f"{_where(path)} is nested more than {MAX_DEPTH} levels deep"
            for index, child in enumerate(item):
                stack.append((child, (path, index), depth + 1))
        elif allow_bytes and isinstance(item, bytes | bytearray):
            continue
        else:
            return f"{_where(path)} is of type {type(item).__name__}, which is not JSON"
    return None


def _where(path: Any) -> str:
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    keys.reverse()
    shown = "".join(f"[{_short(key)}]" if isinstance(key, str) else f"[{key}]" for key in keys[-8:])
    return "the value" + ("[...]" if len(keys) > 8 else "") + shown


def ensure_json_serializable(value: Any, what: str, *, allow_bytes: bool = False) -> None:
    """Raise `NotJSONSerializableError` unless every store can write ``value`` and read it back equal.

    Args:
        value: The value to check.
        what: What the value is, for the error message (e.g. ``"The response to interrupt 'approval'"``).
        allow_bytes: Accept ``bytes`` (stored base64-encoded, as Strands stores images).

    Raises:
        NotJSONSerializableError: The value cannot be stored; the message says where and why (a `TypeError`).
    """
    if value is None or value is True or value is False:
        return
    problem = json_problem(value, allow_bytes=allow_bytes)
    if problem is not None:
        raise NotJSONSerializableError(what, value, problem)


def _encode_bytes(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {BYTES_MARKER: True, "data": base64.b64encode(value).decode()}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_encode_bytes)


def encode_json(value: Any, what: str, *, allow_bytes: bool = False) -> bytes:
    """Return ``value`` as compact UTF-8 JSON, after checking it with `ensure_json_serializable`.

    ``bytes`` (when allowed) become ``{"__bytes_encoded__": true, "data": "<base64>"}``, Strands' encoding.

    Raises:
        NotJSONSerializableError: The value cannot be stored.
    """
    ensure_json_serializable(value, what, allow_bytes=allow_bytes)
    return _ENCODER.encode(value).encode("utf-8")


def _short(key: str) -> str:
    return repr(key if len(key) <= 40 else key[:37] + "...")


__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "encode_json", "ensure_json_serializable", "json_problem"]
