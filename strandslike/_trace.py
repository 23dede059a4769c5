"""Trace attributes, as Strands keeps them for its OpenTelemetry spans."""

from collections.abc import Mapping
from typing import Any

_SCALARS = (str, int, float, bool)


def trace_attribute_values(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the attributes OpenTelemetry accepts: strings, numbers, booleans and lists of them (others dropped)."""
    kept: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if isinstance(value, _SCALARS) or (isinstance(value, list) and all(isinstance(x, _SCALARS) for x in value)):
            kept[key] = value
    return kept
