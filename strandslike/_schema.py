"""JSON Schema validation of client-given data (answers to interrupts, edited tool input).

jsonschema implements the full draft 2020-12 (and earlier drafts, by ``$schema``) for arbitrary schemas, which
pydantic does not; it is imported on first use so ``import strandslike`` stays cheap.
"""

from typing import Any

_MESSAGE_LIMIT = 300


def first_schema_error(schema: dict[str, Any], payload: Any) -> str | None:
    """Return a description of the first place ``payload`` breaks ``schema`` (``path: message``), or None.

    Never raises for a payload or schema that is merely hostile: a schema that refers to itself endlessly, or a payload
    nested too deeply for the validator, and a schema that is not valid are reported as problems; long messages are
    cut (jsonschema quotes the offending value whole).
    """
    import jsonschema

    try:
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        errors = sorted(validator_class(schema).iter_errors(payload), key=lambda error: list(error.path))
    except RecursionError:
        return (
            "the value could not be checked against the schema: it is nested too deeply, or the schema refers to "
            "itself endlessly"
        )
    except Exception as exc:  # the schema is data too (a restored session's): a broken one refuses, never crashes
        return _cut(
            f"the value could not be checked against the schema, which is invalid ({type(exc).__name__}: {exc})"
        )
    if not errors:
        return None
    where = "/".join(str(part) for part in errors[0].path) or "the value"
    return _cut(f"{_cut(where, 80)}: {errors[0].message}")


def _cut(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
