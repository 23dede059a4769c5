"""Argument conditions, shared by approval policy rules and scoped trust: data in, a compiled matcher out.

A condition maps one argument of a tool call to a test, written as a small table of data (no code is ever
evaluated):

- ``{glob = "/tmp/*"}``: the value is a string matching the shell-style pattern (``*``, ``?``, ``[abc]``; case
  sensitive; ``*`` also matches ``/``);
- ``{min = N}``, ``{max = N}`` (or both): the value is a number (not a boolean) within the bound(s), inclusive;
- ``{in = [...]}``: the value equals one of the listed JSON values (``1`` and ``1.0`` are equal; ``1`` and
  ``true`` or ``"1"`` are not); a list value also matches when each of its elements is listed.

The argument is named by its key; a dotted key (``options.force``) reaches into nested objects. A missing
argument never matches. A list value matches when it is not empty and every element matches (so
``paths = {glob = "/tmp/*"}`` holds for ``delete_files(paths=["/tmp/a", "/tmp/b"])``).
"""

import json
import math
import re
from collections.abc import Callable, Mapping
from fnmatch import translate
from typing import Any

Matcher = Callable[[Any], bool]
CONDITION_KEYS = ("glob", "min", "max", "in")
_MISSING = object()


class ConditionError(ValueError):
    """A condition is malformed; the message says what is wrong (the caller adds where)."""


Condition = tuple[tuple[str, ...], Matcher]  # the argument's path (its name split on dots) and its test


def compile_conditions(args: Any) -> tuple[Condition, ...]:
    """Check an ``args`` table (argument name → condition) and return its compiled conditions, in order.

    Raises:
        ConditionError: The table or one of its conditions is malformed; the message names the argument.
    """
    if args is None:
        return ()
    if not isinstance(args, Mapping):
        raise ConditionError(f"args must be a table of argument name = condition, got {_kind(args)}")
    compiled = []
    for name, spec in args.items():
        if not isinstance(name, str) or not name or any(not part for part in name.split(".")):
            raise ConditionError(f"args: {name!r} is not an argument name")
        try:
            compiled.append((tuple(name.split(".")), compile_condition(spec)))
        except ConditionError as exc:
            raise ConditionError(f"args.{name}: {exc}") from None
    return tuple(compiled)


def compile_condition(spec: Any) -> Matcher:
    """Check one condition table and return a function telling whether a value satisfies it.

    Raises:
        ConditionError: The condition is malformed.
    """
    if not isinstance(spec, Mapping) or not spec:
        raise ConditionError(
            f'a condition must be a table with one of {", ".join(CONDITION_KEYS)}, e.g. {{glob = "/tmp/*"}}, '
            f"got {_kind(spec)}"
        )
    unknown = [key for key in spec if key not in CONDITION_KEYS]
    if unknown:
        raise ConditionError(
            f"unknown condition {', '.join(repr(key) for key in unknown)}; use one of {', '.join(CONDITION_KEYS)}"
        )
    keys = set(spec)
    if "glob" in keys:
        if len(keys) > 1:
            raise ConditionError("glob cannot be combined with other conditions; write one rule per test")
        pattern = spec["glob"]
        if not isinstance(pattern, str) or not pattern:
            raise ConditionError(f"glob must be a non-empty string, got {_kind(pattern)}")
        return _glob_matcher(pattern)
    if "in" in keys:
        if len(keys) > 1:
            raise ConditionError("in cannot be combined with other conditions; write one rule per test")
        values = spec["in"]
        if not isinstance(values, list) or not values:
            raise ConditionError(f"in must be a non-empty list of values, got {_kind(values)}")
        return _in_matcher(values)
    low, high = _bound(spec, "min"), _bound(spec, "max")
    if low is not None and high is not None and low > high:
        raise ConditionError(f"min ({low}) is greater than max ({high}); nothing could match")
    return _range_matcher(low, high)


def match_all(conditions: tuple[Condition, ...], tool_input: Any) -> bool:
    """Return whether ``tool_input`` satisfies every condition (an empty tuple always matches)."""
    # This runs for every rule naming a tool, on every call of it: plain dict lookups, no helper calls.
    for path, matcher in conditions:
        value = tool_input
        for part in path:
            if type(value) is dict or isinstance(value, Mapping):
                value = value.get(part, _MISSING)
            else:
                return False
        if value is _MISSING or not matcher(value):
            return False
    return True


def lookup(tool_input: Any, name: str) -> Any:
    """Return the argument ``name`` (dotted for nested objects) of a tool input, or a private missing marker."""
    value = tool_input
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def normalize_trust_args(args: Any) -> dict[str, dict[str, Any]] | None:
    """Return trust arguments as condition tables: a string is a glob, a number or boolean an equality test.

    Raises:
        ConditionError: An argument's condition is malformed.
    """
    if args is None:
        return None
    if not isinstance(args, Mapping):
        raise ConditionError(f"args must be a mapping of argument name to condition, got {_kind(args)}")
    normalized: dict[str, dict[str, Any]] = {}
    for name, spec in args.items():
        if isinstance(spec, str):
            spec = {"glob": spec}
        elif isinstance(spec, bool | int | float) or spec is None:
            spec = {"in": [spec]}
        elif isinstance(spec, Mapping):
            spec = dict(spec)
        normalized[name] = spec
    compile_conditions(normalized)  # validate
    return normalized


def _glob_matcher(pattern: str) -> Matcher:
    match = re.compile(translate(pattern)).match

    def matcher(value: Any) -> bool:
        if type(value) is str:
            return match(value) is not None
        if type(value) is list:
            return bool(value) and all(type(item) is str and match(item) is not None for item in value)
        return False

    return matcher


def _in_matcher(values: list[Any]) -> Matcher:
    allowed = {_equality_key(value) for value in values}

    def matcher(value: Any) -> bool:
        if _equality_key(value) in allowed:
            return True
        return type(value) is list and bool(value) and all(_equality_key(item) in allowed for item in value)

    return matcher


def _range_matcher(low: float | None, high: float | None) -> Matcher:
    lowest = -math.inf if low is None else low
    highest = math.inf if high is None else high

    def matcher(value: Any) -> bool:
        kind = type(value)
        if kind is int or kind is float:  # not bool: a boolean is not a number here
            return bool(lowest <= value <= highest)
        if kind is list:
            return bool(value) and all(type(item) in (int, float) and lowest <= item <= highest for item in value)
        return False

    return matcher


def _bound(spec: Mapping[str, Any], key: str) -> float | None:
    if key not in spec:
        return None
    value = spec[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConditionError(f"{key} must be a finite number, got {_kind(value)}")
    return float(value)


def _equality_key(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return ("str", value)
    if kind is bool:
        return ("bool", value)
    if kind is int or kind is float:
        return ("number", float(value))
    if value is None:
        return ("null",)
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _kind(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"
