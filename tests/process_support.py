"""Driving worker processes from a test: the parent side of the duplicate-delivery tests.

A worker is a child process that reads one JSON message per line on stdin (``"STOP"`` ends it) and reports on
stdout; the tests hand out every resume twice and count what ran. Kept apart from the ``*_workers`` modules, which
the children import, so the children import nothing of the test suite's parent side.
"""

import json
import subprocess
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
