"""Errors of the intervention layer: a misconfigured handler list, or a handler returning something unusable."""

from ..types.exceptions import StrandslikeError


class InterventionConfigError(StrandslikeError, ValueError):
    """The handlers given to an agent cannot work together: duplicate names, an unknown ``on_error``."""


class InterventionTypeError(StrandslikeError, TypeError):
    """Something that is not a handler was given as one, or a handler returned something that is not an action."""
