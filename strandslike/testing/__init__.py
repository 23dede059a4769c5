"""Testing your own agents: fixtures, helpers, and a recorder of hook events.

Installing strandslike installs a pytest plugin (`strandslike.testing.pytest_plugin`, through the ``pytest11``
entry point) with the fixtures ``scripted_model``, ``session_store`` and ``event_recorder``. This package holds
what the fixtures hand out and the helpers to use with them; importing it does not import pytest.

```python
from strandslike import Agent
from strandslike.models import text, tool_call
from strandslike.testing import run_until_done
from strandslike.vended_interventions.hitl import HumanInTheLoop


def test_cleanup_asks_before_deleting(scripted_model, event_recorder):
    model = scripted_model(tool_call("delete_files", paths=["a.txt"]), text("Done."))
    agent = Agent(model=model, tools=[delete_files], interventions=[HumanInTheLoop()], hooks=[event_recorder])
    result = run_until_done(agent, "clean up", "y")
    assert result.stop_reason == "end_turn"
    scripted_model.assert_all_played()
```
"""

from ._recorder import EventRecorder
from ._running import StillInterruptedError, answer_all, pending_interrupts, run_until_done, run_until_done_async
from ._store import SessionStore

__all__ = [
    "EventRecorder",
    "SessionStore",
    "StillInterruptedError",
    "answer_all",
    "pending_interrupts",
    "run_until_done",
    "run_until_done_async",
]
