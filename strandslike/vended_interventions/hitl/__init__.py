"""Human in the loop: `HumanInTheLoop` asks a human before tool calls, with an `ApprovalPolicy`, trust and audit.

Without ``ask`` the agent pauses with ``stop_reason == "interrupt"`` and resumes when the caller answers; with
``ask="stdio"`` or a callable it asks inline. Example:

```python
from strandslike import Agent
from strandslike.vended_interventions.hitl import HumanInTheLoop

agent = Agent(model=model, tools=[delete_tool, read_tool], interventions=[HumanInTheLoop(allowed_tools=["read_tool"])])
result = agent("Delete the file")  # stop_reason "interrupt": answer result.interrupts[0] with "y", "n" or "t"
```
"""

from ._trust import TrustGrant
from .classifier import ClassifierResult, HumanInTheLoopClassifier, LLMClassifierConfig
from .hitl import HumanInTheLoop
from .policy import ApprovalPolicy, ApprovalPolicyError, PolicyDecision, PolicyRule

__all__ = [
    "ApprovalPolicy",
    "ApprovalPolicyError",
    "ClassifierResult",
    "HumanInTheLoop",
    "HumanInTheLoopClassifier",
    "LLMClassifierConfig",
    "PolicyDecision",
    "PolicyRule",
    "TrustGrant",
]
