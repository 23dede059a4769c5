"""Callback handlers for an agent's stream events: printing, combining several, and ignoring them."""

import sys
from collections.abc import Callable
from typing import Any


class PrintingCallbackHandler:
    """Print streamed text (and reasoning) to standard output as it arrives, and each tool the model calls.

    This is Strands' default handler; strandslike's agents print nothing unless given one:
    ``Agent(callback_handler=PrintingCallbackHandler())``.
    """

    def __init__(self, verbose_tool_use: bool = True) -> None:
        """Configure the output.

        Args:
            verbose_tool_use: Print a line naming each tool the model calls.
        """
        self.tool_count = 0
        self._verbose_tool_use = verbose_tool_use

    def __call__(self, **kwargs: Any) -> None:
        """Print what an event carries: ``reasoningText``, ``data`` (text) and tool calls starting.

        Args:
            **kwargs: One stream event, e.g. ``data="..."``, ``reasoningText="..."``, ``event={...}`` (a model
                stream chunk) or ``complete=True``.
        """
        reasoning = kwargs.get("reasoningText", False)
        data = kwargs.get("data", "")
        complete = kwargs.get("complete", False)
        event = kwargs.get("event")
        tool_use = (
            event.get("contentBlockStart", {}).get("start", {}).get("toolUse") if isinstance(event, dict) else None
        )
        out = sys.stdout
        if reasoning:
            out.write(str(reasoning))
        if data:
            out.write(data if not complete else data + "\n")
        if tool_use:
            self.tool_count += 1
            if self._verbose_tool_use:
                out.write(f"\nTool #{self.tool_count}: {tool_use['name']}\n")
        if complete and data:
            out.write("\n\n")
        out.flush()


class CompositeCallbackHandler:
    """Pass every event to several handlers, in order."""

    def __init__(self, *handlers: Callable[..., Any]) -> None:
        """Combine ``handlers``."""
        self.handlers = handlers

    def __call__(self, **kwargs: Any) -> None:
        """Call each handler with the event."""
        for handler in self.handlers:
            handler(**kwargs)


def null_callback_handler(**_kwargs: Any) -> None:
    """Ignore every event (what ``callback_handler=None`` means).

    Args:
        **_kwargs: The event, ignored.
    """
    return None


__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]
