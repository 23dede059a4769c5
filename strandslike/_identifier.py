"""Validation of the ids that name things on disk and on the wire: sessions, agents, orchestrators, threads.

One rule set for every user of an id (session stores, `Agent`, `Graph`/`Swarm`, the AG-UI server, the CLI), so an
id accepted anywhere can be stored everywhere. Strands' own check (``strands/_identifier.py``) only refuses path
separators; an id here must also

- be a non-empty string of at most `MAX_ID_BYTES` bytes in UTF-8 (stores prefix it, e.g. ``session_<id>``, and
  file names are limited to 255 bytes, not characters: 128 three-byte characters would not fit);
- contain no ``..`` and not start or end with whitespace;
- contain no character of the Unicode categories Cc (controls, C0 and C1), Cf (format characters, among them the
  bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069, U+200E, U+200F and U+061C, which make an id
  display as another one), Cs (lone surrogates, which cannot be encoded and so cannot name a file), Co (private
  use), Cn (unassigned), Zl and Zp (U+2028, U+2029: line breaks in logs and terminals).

A refused id raises `InvalidIdError` (a `ValueError`, as in Strands) before anything is written.
"""

import enum
import functools
import re
import unicodedata

from .types.exceptions import InvalidIdError

MAX_ID_BYTES = 128
_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible format character (such as a bidirectional override)",
    "Cs": "a lone surrogate (not valid Unicode)",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Identifier(enum.Enum):
    """What an id names (Strands' names, plus the orchestrators)."""

    AGENT = "agent"
    SESSION = "session"
    MULTI_AGENT = "multi_agent"


def validate(id_: str, type_: Identifier) -> str:
    """Return ``id_`` if it is a valid id of kind ``type_`` (Strands' signature).

    Raises:
        InvalidIdError: The id is refused (a `ValueError`); the message says why.
    """
    return validate_id(id_, type_.value)


def validate_id(value: object, kind: str) -> str:
    """Return ``value`` if it is a valid id, else raise `InvalidIdError` saying why.

    Args:
        value: The id to check.
        kind: What it identifies (``"session"``, ``"agent"``, ``"multi_agent"``, ``"graph"``...), for the message.

    Raises:
        InvalidIdError: The id is refused (a `ValueError`).
    """
    if not isinstance(value, str):
        raise InvalidIdError(kind, value, f"id must be a string, got {type(value).__name__}")
    # An id longer than this many characters is too long whatever it holds; no need to look at (or cache) it.
    problem = id_problem(value) if len(value) <= MAX_ID_BYTES else _length_problem(value)
    if problem is not None:
        raise InvalidIdError(kind, value, problem)
    return value


@functools.lru_cache(maxsize=1024)
def id_problem(value: str) -> str | None:
    """Return why ``value`` cannot be an id (a phrase), or None if it can. Cached: stores check ids on every write."""
    if not value:
        return "id cannot be empty"
    if not value.isascii():
        for position, char in enumerate(value):
            category = unicodedata.category(char)
            if category in _REFUSED_CATEGORIES:
                return f"id contains U+{ord(char):04X} ({_REFUSED_CATEGORIES[category]}) at position {position}"
    elif _ASCII_CONTROL.search(value):
        return "id cannot contain control characters"
    if "/" in value or "\\" in value:
        return "id cannot contain path separators"
    if ".." in value:
        return "id cannot contain '..'"
    if value.strip() != value:
        return "id cannot start or end with whitespace"
    return _length_problem(value)


def _length_problem(value: str) -> str | None:
    # Counted in UTF-8 bytes, as file systems count. Only called once lone surrogates are ruled out, or on an id
    # already too long in characters (then the count is not needed).
    if len(value) > MAX_ID_BYTES:
        return f"id is {len(value)} characters long; the limit is {MAX_ID_BYTES} bytes in UTF-8"
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        return f"id is {size} bytes long in UTF-8 ({len(value)} characters); the limit is {MAX_ID_BYTES} bytes"
    return None


__all__ = ["MAX_ID_BYTES", "Identifier", "id_problem", "validate", "validate_id"]
