"""Driving worker processes from a test: the parent side of the duplicate-delivery tests.

A worker is a child process that reads one JSON message per line on stdin (``"STOP"`` ends it) and reports on
stdout; the tests hand out every resume twice and count what ran. Kept apart from the ``*_workers`` modules, which
the children import, so the children import nothing of the test suite's parent side.
"""

import json
import random
import subprocess
from collections.abc import Hashable, Mapping
from typing import Any


class Worker:
    """One worker process (started from ``argv``) and the message it holds."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )
        assert self.process.stdout is not None
        self.stdout = self.process.stdout
        self.holding: dict[str, Any] | None = None
        self.done = 0
        self.alive = True

    def send(self, message: dict[str, Any] | str) -> None:
        """Send one message (a dict, JSON-encoded, is held until answered) or a command such as ``"STOP"``."""
        assert self.process.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()
        if not isinstance(message, str):
            self.holding = message

    def stop(self) -> str:
        """Stop the worker (if alive) and return what it wrote on stderr."""
        if self.alive:
            self.send("STOP")
        _, errors = self.process.communicate(timeout=30)
        return errors.decode()


def delivery_order(interrupts: Mapping[Hashable, str], rng: random.Random, *, spread: int) -> list[dict[str, Any]]:
    """Every session's resume twice, in a shuffled order.

    Half the duplicates follow their original at once (two workers take the same session at the same time); the
    others come later, 2 to ``spread`` deliveries on (the first may be finished, or still running).
    """
    sessions = list(interrupts)
    rng.shuffle(sessions)
    order: list[dict[str, Any]] = []
    later: list[tuple[int, dict[str, Any]]] = []
    for session in sessions:
        first, second = (
            {"id": f"{session}#{copy}", "session": session, "interrupt_id": interrupts[session]} for copy in range(2)
        )
        order.append(first)
        if rng.random() < 0.5:
            order.append(second)
        else:
            later.append((len(order) + rng.randrange(2, spread), second))
        due_now = [item for due, item in later if due <= len(order)]
        later = [(due, item) for due, item in later if due > len(order)]
        order.extend(due_now)
    order.extend(item for _, item in later)
    assert len(order) == 2 * len(interrupts)
    return order
