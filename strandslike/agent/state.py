"""`AgentState`: the agent's JSON-serializable key-value store, persisted by session managers."""

import copy
from typing import Any

from .._json import ensure_json_serializable, json_problem
from ..types.exceptions import InvalidAgentStateError, InvalidStateKeyError, safe_repr


class AgentState:
    """A key-value store whose values must be JSON-serializable, so sessions can persist it.

    Values are copied on the way in and out, so mutating a value you got does not change the state.
    """

    __slots__ = ("_state", "_version")

    def __init__(self, initial_state: dict[str, Any] | None = None) -> None:
        self._state: dict[str, Any] = {}
        self._version = 0
        if initial_state is not None:
            if not isinstance(initial_state, dict):
                raise InvalidAgentStateError(initial_state)
            for key, value in initial_state.items():
                self.set(key, value)

    @property
    def version(self) -> int:
        """Counter bumped by every change; session managers use it to skip unchanged writes."""
        return self._version

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``.

        Raises:
            InvalidStateKeyError: ``key`` is not a non-empty string of valid Unicode (a `ValueError`).
            NotJSONSerializableError: ``value`` cannot be persisted as JSON (a `TypeError` and a `ValueError`).
        """
        problem = _key_problem(key)
        if problem is not None:
            raise InvalidStateKeyError(
                f"Key must be a non-empty string of valid Unicode, got {safe_repr(key)} ({problem})"
            )
        ensure_json_serializable(value, f"The agent.state value for {key!r}")
        self._state[key] = copy.deepcopy(value)
        self._version += 1

    def get(self, key: str | None = None) -> Any:
        """Return a copy of the value under ``key`` (None if absent), or of the whole state when ``key`` is None."""
        if key is None:
            return copy.deepcopy(self._state)
        return copy.deepcopy(self._state.get(key))

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        if key in self._state:
            del self._state[key]
            self._version += 1

    def __contains__(self, key: object) -> bool:
        return key in self._state

    def __repr__(self) -> str:
        return f"AgentState({self._state!r})"


def _key_problem(key: Any) -> str | None:
    if not isinstance(key, str):
        return f"a {type(key).__name__}"
    if not key:
        return "empty"
    return json_problem(key)
