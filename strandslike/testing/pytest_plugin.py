"""The strandslike pytest plugin: fixtures for testing your own agents (loaded automatically once installed).

strandslike registers this module under pytest's ``pytest11`` entry point, so with strandslike installed every
pytest run has these fixtures; nothing to import or configure. (With ``-p no:strandslike`` or
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` set, add ``pytest_plugins = ["strandslike.testing.pytest_plugin"]`` to your
``conftest.py``.)

- ``scripted_model``: a factory of `ScriptedModel`s: ``scripted_model(tool_call("search", q="x"), text("done"))``
  (or one list of turns), with `ScriptedModel`'s keywords (``mode="conversation"`` for a new agent per request).
  ``scripted_model.models`` lists what it built; ``scripted_model.assert_all_played()`` checks every script ran
  to its end.
- ``session_store``: a `SessionStore`, a temporary storage directory for `FileSessionManager` sessions;
  ``session_store.manager("id")`` opens a session there, and every manager it opened is closed after the test.
- ``event_recorder``: an `EventRecorder`, a hook provider whose ``.events`` lists the events that fired.

Helpers to use with them, from `strandslike.testing`: `answer_all` and `run_until_done` /
`run_until_done_async`.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..models.scripted import ScriptedModel
    from ._recorder import EventRecorder
    from ._store import SessionStore


class ScriptedModels:
    """The ``scripted_model`` fixture: builds `ScriptedModel`s and remembers them.

    Attributes:
        models: Every model built, in order.
    """

    def __init__(self) -> None:
        self.models: list[ScriptedModel] = []

    def __call__(self, *turns: Any, **kwargs: Any) -> "ScriptedModel":
        """Build a `ScriptedModel` from the turns given (or from one list of turns) and ``ScriptedModel``'s keywords.

        ``scripted_model(text("hi"))`` and ``scripted_model([text("hi")])`` are the same model.
        """
        from ..models.scripted import ScriptedModel

        script = list(turns[0]) if len(turns) == 1 and isinstance(turns[0], list | tuple) else list(turns)
        model = ScriptedModel(script, **kwargs)
        self.models.append(model)
        return model

    def assert_all_played(self) -> None:
        """Fail the test unless every model built in it played its whole script."""
        unplayed = [(number, model.remaining) for number, model in enumerate(self.models) if model.remaining]
        if unplayed:
            details = ", ".join(f"model {number}: {left} turn(s) left" for number, left in unplayed)
            pytest.fail(f"Not every scripted turn was played ({details}).", pytrace=False)


@pytest.fixture
def scripted_model() -> ScriptedModels:
    """Build `ScriptedModel`s: ``scripted_model(tool_call("search", q="x"), text("done"), mode=...)``."""
    return ScriptedModels()


@pytest.fixture
def session_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator["SessionStore"]:
    """A temporary storage directory for file sessions; the managers opened through it are closed afterwards."""
    from ._store import SessionStore

    store = SessionStore(tmp_path_factory.mktemp("sessions"))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def event_recorder() -> "EventRecorder":
    """A hook provider recording every event that fires: ``Agent(..., hooks=[event_recorder])``."""
    from ._recorder import EventRecorder

    return EventRecorder()


__all__ = ["ScriptedModels", "event_recorder", "scripted_model", "session_store"]
