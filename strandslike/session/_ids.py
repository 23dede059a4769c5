"""Validation of the ids that become file names: the rules of `strandslike._identifier`, shared by every user."""

from .._identifier import MAX_ID_BYTES, validate_id

MAX_ID_LENGTH = MAX_ID_BYTES  # the limit is counted in UTF-8 bytes; the old name is kept for importers

__all__ = ["MAX_ID_BYTES", "MAX_ID_LENGTH", "validate_id"]
