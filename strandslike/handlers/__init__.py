"""Callback handlers: receive an agent's stream events as keyword arguments (Strands' ``strands.handlers``)."""

from .callback_handler import CompositeCallbackHandler, PrintingCallbackHandler, null_callback_handler

__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]
