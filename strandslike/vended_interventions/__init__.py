"""Ready-made intervention handlers: `HumanInTheLoop` (approvals with policy, trust and audit).

Strands 1.62 also ships ``CedarAuthorization`` here (Cedar policies through the ``cedarpy`` package); strandslike
does not: its `ApprovalPolicy` covers declarative allow / deny / ask rules without a native dependency.
"""

from .hitl import HumanInTheLoop

__all__ = ["HumanInTheLoop"]
