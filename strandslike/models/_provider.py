"""What the real providers share: importing their SDK on first use, and checking configuration keys."""

import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from ..types.exceptions import ProviderNotInstalledError, StrandslikeError


class InvalidModelConfigError(StrandslikeError, ValueError):
    """A model provider was given configuration keys it does not know."""

    code = "INVALID_MODEL_CONFIG"

    def __init__(self, provider: str, invalid: Iterable[str], valid: Iterable[str]) -> None:
        self.invalid = sorted(invalid)
        super().__init__(
            f"{provider} does not know the configuration parameters {self.invalid}. Valid parameters are: "
            f"{sorted(valid)}. Put provider-specific request fields under params={{...}}."
        )


def import_sdk(module: str, provider: str, package: str, extra: str) -> ModuleType:
    """Import ``module`` of a provider's SDK, or raise an error naming the extra that installs it.

    Raises:
        ProviderNotInstalledError: The SDK is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the SDK is there but one of its own dependencies is broken: show that error as it is
        raise ProviderNotInstalledError(provider, package, extra) from exc


def check_config_keys(provider: str, config: Mapping[str, Any], valid: frozenset[str]) -> None:
    """Raise `InvalidModelConfigError` if ``config`` has keys outside ``valid``."""
    invalid = config.keys() - valid
    if invalid:
        raise InvalidModelConfigError(provider, invalid, valid)


def tool_result_text(content: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    """Yield tool result content with ``json`` blocks turned into text (for APIs that take text results)."""
    import json

    for block in content:
        if "json" in block:
            yield {"text": json.dumps(block["json"], ensure_ascii=False)}
        else:
            yield block
