"""Shared helpers for the test suite (importable as ``helpers`` thanks to pytest's ``pythonpath``).

The suite also uses what users get from `strandslike.testing` (its pytest fixtures, `answer_all`,
`run_until_done`, `EventRecorder`); these two build the plain Strands resume blocks many tests mean to send.
"""

from collections.abc import Iterable
from typing import Any


def answer(interrupt: Any, response: Any) -> dict[str, Any]:
    """Build the plain Strands resume block for one interrupt (no strandslike extras such as ``sessionId``)."""
    return {"interruptResponse": {"interruptId": interrupt.id, "response": response}}


def answers(interrupts: Iterable[Any], response: Any) -> list[dict[str, Any]]:
    """Answer every interrupt with the same response."""
    return [answer(interrupt, response) for interrupt in interrupts]
