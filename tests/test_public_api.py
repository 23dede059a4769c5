"""Every package re-exports its public names with a sorted, complete ``__all__`` (as httpx checks)."""

import importlib

import pytest

PACKAGES = [
    "strandslike",
    "strandslike.agent",
    "strandslike.agent.conversation_manager",
    "strandslike.handlers",
    "strandslike.hooks",
    "strandslike.interrupt",
    "strandslike.interventions",
    "strandslike.models",
    "strandslike.multiagent",
    "strandslike.plugins",
    "strandslike.protocol",
    "strandslike.protocol.agui",
    "strandslike.session",
    "strandslike.session.postgres",
    "strandslike.telemetry",
    "strandslike.testing",
    "strandslike.tools",
    "strandslike.tools.executors",
    "strandslike.types",
    "strandslike.vended_interventions",
    "strandslike.vended_interventions.hitl",
]

CONTRACT = {
    "strandslike": {"Agent", "AgentBase", "tool", "ToolContext", "AgentResult"},
    "strandslike.agent": {
        "Agent",
        "AgentBase",
        "AgentResult",
        "AgentState",
        "ConversationManager",
        "NullConversationManager",
        "SlidingWindowConversationManager",
        "SummarizingConversationManager",
    },
    "strandslike.handlers": {"CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"},
    "strandslike.hooks": {
        "HookProvider",
        "HookRegistry",
        "HookOrder",
        "HookEvent",
        "BaseHookEvent",
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "AfterInvocationEvent",
        "MessageAddedEvent",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "BeforeToolsEvent",
        "AfterToolsEvent",
        "BeforeToolCallEvent",
        "AfterToolCallEvent",
        "MultiAgentInitializedEvent",
        "BeforeMultiAgentInvocationEvent",
        "AfterMultiAgentInvocationEvent",
        "BeforeNodeCallEvent",
        "AfterNodeCallEvent",
    },
    "strandslike.interrupt": {"Interrupt", "InterruptException"},
    "strandslike.models": {"Model", "ScriptedModel"},
    "strandslike.session": {"SessionManager", "RepositorySessionManager", "SessionRepository", "FileSessionManager"},
    "strandslike.multiagent": {
        "MultiAgentBase",
        "Swarm",
        "Graph",
        "GraphBuilder",
        "Status",
        "MultiAgentResult",
        "NodeResult",
        "GraphResult",
        "SwarmResult",
    },
    "strandslike.agent.conversation_manager": {
        "ConversationManager",
        "NullConversationManager",
        "SlidingWindowConversationManager",
        "SummarizingConversationManager",
    },
    "strandslike.plugins": {"MultiAgentPlugin", "Plugin", "hook"},
    "strandslike.interventions": {
        "Confirm",
        "Deny",
        "Guide",
        "InterventionAction",
        "InterventionHandler",
        "OnError",
        "Proceed",
        "Transform",
    },
    "strandslike.vended_interventions": {"HumanInTheLoop"},
    "strandslike.vended_interventions.hitl": {
        "ApprovalPolicy",
        "HumanInTheLoop",
        "HumanInTheLoopClassifier",
        "LLMClassifierConfig",
    },
}


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_complete(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported)
    # Packages may import their names on first use (PEP 562): resolving every name must work, and then the module's
    # public names are exactly __all__.
    for exported_name in exported:
        assert getattr(module, exported_name) is not None
    public = {n for n in vars(module) if not n.startswith("_") and not isinstance(vars(module)[n], type(importlib))}
    assert public == set(exported)
    assert set(exported) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute"):
        module.no_such_name_anywhere  # noqa: B018


@pytest.mark.parametrize(("name", "names"), CONTRACT.items())
def test_strands_contract_names_are_exported(name, names):
    assert names <= set(importlib.import_module(name).__all__)


def test_types_module_paths_mirror_strands():
    from strandslike.types.content import ContentBlock, Message, Messages  # noqa: F401
    from strandslike.types.tools import ToolContext, ToolResult, ToolSpec, ToolUse  # noqa: F401
