"""Errors raised when plugins are attached."""

from ..types.exceptions import StrandslikeError


class PluginConfigError(StrandslikeError, ValueError):
    """Plugins cannot be attached as given: two share a name."""


class PluginTypeError(StrandslikeError, TypeError):
    """Something that is not a plugin of the right kind was given as one."""
