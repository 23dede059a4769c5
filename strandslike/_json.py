"""Checks that values can be persisted as JSON."""

import json
from typing import Any

from .types.exceptions import NotJSONSerializableError

_SCALARS = (str, int, float, bool, type(None))


def ensure_json_serializable(value: Any, what: str) -> None:
    """Raise `NotJSONSerializableError` if ``value`` cannot be written as JSON.

    Args:
        value: The value to check.
        what: What the value is, for the error message (e.g. ``"interrupt reason"``).
    """
    if isinstance(value, _SCALARS):
        return
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise NotJSONSerializableError(what, value, str(exc)) from None
