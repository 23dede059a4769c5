"""JSON Schema validation of client-given data (answers to interrupts, edited tool input).

jsonschema implements the full draft 2020-12 (and earlier drafts, by ``$schema``) for arbitrary schemas, which
pydantic does not; it is imported on first use so ``import strandslike`` stays cheap.
"""

from typing import Any


def first_schema_error(schema: dict[str, Any], payload: Any) -> str | None:
    """Return a description of the first place ``payload`` breaks ``schema`` (``path: message``), or None."""
    import jsonschema

    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(validator_class(schema).iter_errors(payload), key=lambda error: list(error.path))
    if not errors:
        return None
    where = "/".join(str(part) for part in errors[0].path) or "the value"
    return f"{where}: {errors[0].message}"
