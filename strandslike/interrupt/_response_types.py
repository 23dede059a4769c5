"""Finding an interrupt's ``response_type`` again after a restore, so its validators run before a resume applies.

A typed interrupt (``interrupt(..., response_type=Approval)``) publishes the type's JSON Schema, which is persisted
and checked on every resume. A pydantic model can say more than its schema (field validators, constraints JSON
Schema cannot express); in the process that raised the interrupt the type itself checks answers too. A server that
builds a fresh agent per request has never run the hook that raised it, so the type is remembered by reference
(``module:qualname``) and looked up again when an answer arrives.

The lookup never imports anything: it only reads attributes of modules already imported (the code that built the
agent imported the type's module), through ``vars()`` so no module or class hook runs, and it accepts the type only
if its schema is still the persisted one. A type it cannot find (a class defined inside a function, a generic alias
such as ``list[str]``, a module not imported in this process) is checked by its schema alone at resume time; its
extra validators then run when the hook or tool asks again, and a refusal there reopens the interrupt.
"""

import functools
import sys
from collections.abc import Callable
from typing import Any


def type_ref(response_type: Any) -> str | None:
    """Return ``module:qualname`` for a class that can be looked up again, else None."""
    if not isinstance(response_type, type):
        return None
    module = getattr(response_type, "__module__", None)
    qualname = getattr(response_type, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def restored_validator(ref: Any, schema: Any) -> Callable[[Any], Any] | None:
    """Return the validator of the type ``ref`` names if it is loaded and still publishes ``schema``, else None."""
    if not isinstance(ref, str) or not isinstance(schema, dict):
        return None
    found = _lookup(ref)
    if found is None:
        return None
    try:
        adapter = _adapter(found)
        if adapter.json_schema() != schema:  # the type changed since the interrupt was raised: trust the schema
            return None
    except Exception:  # not a type pydantic can use (any more)
        return None
    validate: Callable[[Any], Any] = adapter.validate_python
    return validate


def _lookup(ref: str) -> type | None:
    module_name, _, qualname = ref.partition(":")
    target: Any = sys.modules.get(module_name)
    if target is None or not qualname:
        return None
    for part in qualname.split("."):
        try:
            target = vars(target).get(part)
        except TypeError:  # no __dict__
            return None
        if target is None:
            return None
    return target if isinstance(target, type) else None


@functools.lru_cache(maxsize=256)
def _adapter(response_type: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(response_type)


__all__ = ["restored_validator", "type_ref"]
