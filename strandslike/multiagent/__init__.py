"""Multi-agent orchestration: Graph and Swarm, with interrupts across nodes and session persistence."""

from .base import MultiAgentBase, MultiAgentResult, NodeResult, Status
from .graph import Graph, GraphBuilder, GraphEdge, GraphNode, GraphResult, GraphState
from .swarm import SharedContext, Swarm, SwarmNode, SwarmResult, SwarmState

__all__ = [
    "Graph",
    "GraphBuilder",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
    "MultiAgentBase",
    "MultiAgentResult",
    "NodeResult",
    "SharedContext",
    "Status",
    "Swarm",
    "SwarmNode",
    "SwarmResult",
    "SwarmState",
]
