"""Strands 1.62's documented plugin, intervention and HumanInTheLoop examples, with only the import root changed.

Each example below is the documentation's code (the user guide's Human-in-the-loop page and the API docstrings of
``strands.plugins``, ``strands.interventions`` and ``strands.vended_interventions.hitl``) with ``strands`` replaced
by ``strandslike``, a `ScriptedModel` passed as ``model=`` in place of the default Bedrock model, placeholder tool
bodies that record their calls, and ``input()`` or a Slack call answered by the test.
"""

import builtins
from typing import Any

import pytest

from strandslike.models import ScriptedModel, text, tool_call

CALLS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


# ---- strands.plugins.Plugin docstring ------------------------------------------------------------------------------


def test_plugin_docstring_example(capsys):
    from strandslike import Agent, tool
    from strandslike.hooks import BeforeModelCallEvent
    from strandslike.plugins import Plugin, hook

    class MyPlugin(Plugin):
        name = "my-plugin"

        @hook
        def on_model_call(self, event: BeforeModelCallEvent):
            print(f"Model called: {event}")

        @tool
        def my_tool(self, param: str) -> str:
            """A tool that does something."""
            return f"Result: {param}"

    model = ScriptedModel([tool_call("my_tool", param="x"), text("done")])
    agent = Agent(model=model, plugins=[MyPlugin()])
    agent("use my tool")
    assert capsys.readouterr().out.count("Model called:") == 2
    assert model.requests[1].messages[-1]["content"][0]["toolResult"]["content"] == [{"text": "Result: x"}]


def test_plugin_custom_initialization_example(capsys):
    from strandslike import Agent
    from strandslike.hooks import BeforeModelCallEvent
    from strandslike.plugins import Plugin

    class MyPlugin(Plugin):
        name = "my-plugin"

        def init_agent(self, agent: Agent) -> None:
            # Custom initialization logic - no super() needed
            # Decorated hooks/tools are auto-registered by the plugin registry
            agent.add_hook(self.custom_hook)

        def custom_hook(self, event: BeforeModelCallEvent):
            print(event)

    Agent(model=ScriptedModel([text("hi")]), plugins=[MyPlugin()])("hello")
    assert "BeforeModelCallEvent" in capsys.readouterr().out


def test_multiagent_plugin_docstring_examples(capsys):
    from strandslike import Agent
    from strandslike.hooks import AfterNodeCallEvent, BeforeInvocationEvent, BeforeNodeCallEvent
    from strandslike.multiagent import Swarm
    from strandslike.plugins import MultiAgentPlugin, Plugin, hook

    class MonitoringPlugin(MultiAgentPlugin):
        name = "monitoring"

        @hook
        def on_before_node(self, event: BeforeNodeCallEvent):
            print(f"Node {event.node_id} starting")

        @hook
        def on_after_node(self, event: AfterNodeCallEvent):
            print(f"Node {event.node_id} completed")

    class ObservabilityPlugin(Plugin, MultiAgentPlugin):
        name = "observability"

        @hook
        def on_agent_invocation(self, event: BeforeInvocationEvent):
            print("Agent invocation started")

        @hook
        def on_node_call(self, event: BeforeNodeCallEvent):
            print(f"Node {event.node_id} starting")

        def init_agent(self, agent):
            pass  # Agent-level setup

        def init_multi_agent(self, orchestrator):
            pass  # Orchestrator-level setup

    observability = ObservabilityPlugin()
    worker = Agent(name="worker", model=ScriptedModel([text("ok")]), plugins=[observability])
    Swarm([worker], plugins=[MonitoringPlugin(), observability])("task")
    assert capsys.readouterr().out.splitlines() == [
        "Node worker starting",
        "Node worker starting",
        "Agent invocation started",
        "Node worker completed",
    ]


# ---- strands.interventions docstrings --------------------------------------------------------------------------


def test_interventions_package_example():
    from strandslike import Agent, InterventionHandler, tool
    from strandslike.interventions import Deny, Proceed

    @tool
    def wire_money(amount: int) -> str:
        """Wire money.

        Args:
            amount: How much.
        """
        CALLS.append(amount)
        return "wired"

    class MyAuth(InterventionHandler):
        name = "my-auth"

        def is_authorized(self, event):
            return event.tool_use["input"]["amount"] < 100

        def before_tool_call(self, event):
            if not self.is_authorized(event):
                return Deny(reason="not authorized")
            return Proceed()

    model = ScriptedModel([tool_call("wire_money", amount=5), tool_call("wire_money", amount=500), text("done")])
    agent = Agent(model=model, tools=[wire_money], interventions=[MyAuth()])
    agent("pay")
    assert CALLS == [5]
    assert model.requests[2].messages[-1]["content"][0]["toolResult"]["content"] == [{"text": "DENIED: not authorized"}]


# ---- the user guide's Human in the loop page --------------------------------------------------------------------


def make_tools():
    from strandslike import tool

    @tool
    def delete_files(paths: list[str]) -> str:
        """Delete files at the given paths.

        Args:
            paths: The files.
        """
        CALLS.append(("delete", paths))
        return f"Deleted {paths}"

    @tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: The file.
        """
        CALLS.append(("read", path))
        return "content"

    return delete_files, read_file


def test_hitl_interrupt_resume_mode(capsys):
    from strandslike import Agent
    from strandslike.vended_interventions.hitl import HumanInTheLoop

    delete_files, _ = make_tools()
    model = ScriptedModel([tool_call("delete_files", paths=["/tmp/a"]), text("Deleted.")])

    agent = Agent(
        model=model,
        tools=[delete_files],
        interventions=[HumanInTheLoop()],
    )

    # Agent pauses with stop_reason 'interrupt' when a tool needs approval
    result = agent("Delete the temp files")

    if result.stop_reason == "interrupt":
        # Present the interrupt to the user (web UI, Slack, etc.)
        print(result.interrupts[0].reason)

        # Resume with the human's response
        result = agent(
            [
                {
                    "interruptResponse": {
                        "interruptId": result.interrupts[0].id,
                        "response": "yes",  # 'y', 'yes', or True -> approved
                    }
                }
            ]
        )

    assert "delete_files" in capsys.readouterr().out
    assert result.stop_reason == "end_turn"
    assert CALLS == [("delete", ["/tmp/a"])]


def test_hitl_stdio_mode(monkeypatch):
    from strandslike import Agent
    from strandslike.vended_interventions.hitl import HumanInTheLoop

    prompts: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt: prompts.append(prompt) or "y")
    delete_files, _ = make_tools()

    agent = Agent(
        model=ScriptedModel([tool_call("delete_files", paths=["/tmp/a"]), text("Deleted.")]),
        tools=[delete_files],
        interventions=[HumanInTheLoop(ask="stdio")],
    )
    agent("Delete the temp files")

    assert prompts == ['Approve "delete_files"?\n  Input: {"paths": ["/tmp/a"]} (y/n): ']
    assert CALLS == [("delete", ["/tmp/a"])]


def test_hitl_custom_ask_callback():
    from strandslike import Agent
    from strandslike.vended_interventions.hitl import HumanInTheLoop

    messages: list[str] = []

    async def slack_dm(user_id: str, prompt: str) -> str:
        messages.append(f"{user_id}: {prompt}")
        return "yes"

    user_id = "U123"
    delete_files, _ = make_tools()

    async def slack_ask(prompt: str) -> str:
        return await slack_dm(user_id, prompt)

    agent = Agent(
        model=ScriptedModel([tool_call("delete_files", paths=["/tmp/a"]), text("Deleted.")]),
        tools=[delete_files],
        interventions=[HumanInTheLoop(ask=slack_ask)],
    )
    agent("Delete the temp files")
    assert messages[0].startswith('U123: Approve "delete_files"?')
    assert CALLS == [("delete", ["/tmp/a"])]


def test_hitl_allowed_tools_and_trust():
    from strandslike import Agent
    from strandslike.vended_interventions.hitl import HumanInTheLoop

    delete_files, read_file = make_tools()
    answers = iter(["t"])
    model = ScriptedModel(
        [
            tool_call("read_file", path="a"),
            tool_call("delete_files", paths=["a"]),
            tool_call("delete_files", paths=["b"]),
            text("done"),
        ]
    )
    # read_file runs freely, everything else pauses for approval; "t" approves and trusts the tool for the session
    agent = Agent(
        model=model,
        tools=[read_file, delete_files],
        interventions=[
            HumanInTheLoop(allowed_tools=["read_file"], enable_trust=True, ask=lambda prompt: next(answers))
        ],
    )
    agent("Clean up")
    assert CALLS == [("read", "a"), ("delete", ["a"]), ("delete", ["b"])]
    assert agent.state.get("hitl:trusted_tools") == ["delete_files"]


def test_hitl_classifier_examples():
    from strandslike import Agent
    from strandslike.vended_interventions.hitl import HumanInTheLoop, LLMClassifierConfig
    from strandslike.vended_interventions.hitl.classifier import ClassifierResult

    delete_files, read_file = make_tools()

    # LLM-driven risk classification — only risky calls get escalated (the agent's model answers the classifier)
    model = ScriptedModel(
        [
            tool_call("delete_files", paths=["/tmp/cache"]),
            tool_call("_RiskDecision", requires_approval=False, reason="temporary files"),
            text("done"),
        ]
    )
    agent = Agent(
        model=model,
        tools=[read_file, delete_files],
        interventions=[HumanInTheLoop(allowed_tools=["read_file", "list_dir"], classifier=True)],
    )
    assert agent("clean the cache").stop_reason == "end_turn"

    risk_model = ScriptedModel([tool_call("_RiskDecision", requires_approval=True, reason="deletes user data")])
    agent = Agent(
        model=ScriptedModel([tool_call("delete_files", paths=["/home"]), text("done")]),
        tools=[delete_files],
        interventions=[
            HumanInTheLoop(classifier=LLMClassifierConfig(model=risk_model, system_prompt="Only approve writes."))
        ],
    )
    paused = agent("wipe home")
    assert paused.stop_reason == "interrupt"
    assert "deletes user data" in paused.interrupts[0].reason

    def my_classifier(event, **kwargs):
        return ClassifierResult(
            requires_human_in_the_loop=event.tool_use["name"] == "delete_files",
            reason="deletion requires approval",
        )

    agent = Agent(
        model=ScriptedModel([tool_call("delete_files", paths=["x"]), text("done")]),
        tools=[delete_files],
        interventions=[HumanInTheLoop(classifier=my_classifier)],
    )
    assert agent("delete x").stop_reason == "interrupt"
    assert CALLS == [("delete", ["/tmp/cache"])]
