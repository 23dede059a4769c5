"""The version of strandslike: the single source of truth, read by the build (pyproject's dynamic version)."""

__version__ = "0.1.0"
