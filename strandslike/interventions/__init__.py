"""Interventions: control layers (authorization, guardrails, steering, approvals) that answer with typed actions.

A handler subclasses `InterventionHandler`, overrides the lifecycle methods it needs and returns `Proceed`,
`Deny`, `Guide`, `Confirm` or `Transform`; ``Agent(interventions=[...])`` evaluates the handlers in order at each
event, stops at the first denial and gathers guidance (Strands 1.62's semantics, see `actions`).

Example:
    ```python
    from strandslike import Agent
    from strandslike.interventions import Deny, InterventionHandler, Proceed


    class MyAuth(InterventionHandler):
        name = "my-auth"

        def before_tool_call(self, event):
            if event.tool_use["name"] == "drop_database":
                return Deny(reason="not authorized")
            return Proceed()


    agent = Agent(interventions=[MyAuth()])
    ```
"""

from ._errors import InterventionConfigError, InterventionTypeError
from .actions import Confirm, Deny, Guide, InterventionAction, Proceed, Transform
from .handler import InterventionHandler, OnError

__all__ = [
    "Confirm",
    "Deny",
    "Guide",
    "InterventionAction",
    "InterventionConfigError",
    "InterventionHandler",
    "InterventionTypeError",
    "OnError",
    "Proceed",
    "Transform",
]
