"""Validation of the ids that become file names."""

import re

MAX_ID_LENGTH = 128
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def validate_id(value: object, kind: str) -> str:
    """Return ``value`` if it is a safe id, else raise `ValueError` saying why.

    Safe ids are non-empty strings of at most 128 characters, without path separators, ``..`` or control
    characters, so that no id can name a file outside its storage directory.

    Args:
        value: The id to check.
        kind: What it identifies (``"session"``, ``"agent"``, ``"multi_agent"``), for the message.
    """
    if not isinstance(value, str):
        raise ValueError(f"{kind}_id={value!r} | id must be a string, got {type(value).__name__}")
    problem = None
    if not value:
        problem = "id cannot be empty"
    elif len(value) > MAX_ID_LENGTH:
        problem = f"id is {len(value)} characters long; the limit is {MAX_ID_LENGTH}"
    elif "/" in value or "\\" in value:
        problem = "id cannot contain path separators"
    elif ".." in value:
        problem = "id cannot contain '..'"
    elif _CONTROL.search(value):
        problem = "id cannot contain control characters"
    elif value.strip() != value:
        problem = "id cannot start or end with whitespace"
    if problem is not None:
        raise ValueError(f"{kind}_id={value!r} | {problem}. Use letters, digits, '-', '_' or '.'.")
    return value
