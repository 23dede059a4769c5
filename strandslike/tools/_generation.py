"""A counter bumped whenever a decorated tool's spec object is replaced, so registries can cache their spec lists."""

SPEC_GENERATION = [0]

__all__ = ["SPEC_GENERATION"]
