"""The AG-UI servers `bench_agui.py` measures, each run alone in its own process by uvicorn.

    bench/.venv/bin/python bench/agui_servers.py strandslike|adapter|adapter-files PORT STORAGE_DIR

The same scripted workload on both sides: a model that decides from the conversation alone (a new user message →
call ``send_email(to="a@b.com", subject="Hi")``; a tool result → answer "Done."), one ``send_email`` tool, and an
approval on it answered with AG-UI's ``{"approved": true}``:

- ``strandslike``: ``create_app(factory, storage_dir=...)``, a ``BeforeToolCallEvent`` hook raising the approval
  interrupt; every request rebuilds the thread's agent from its FileSessionManager session (restore, claim,
  persist, fsync when it pauses), as the server always does.
- ``adapter``: ag-ui-strands' ``StrandsAgent`` (per-thread strands-agents 1.62 agents, cached in memory) with
  ``ToolBehavior(interrupt_on_call=True)`` (its own approval hook, the same ``{"approved": bool}`` contract), served
  by ``create_strands_app``. Its default: nothing is persisted.
- ``adapter-files``: the same with ``session_manager_provider`` giving each thread a strands-agents
  ``FileSessionManager`` in STORAGE_DIR (what it needs to resume in another process).
"""

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _workload import text_turn_events, tool_turn_events  # noqa: E402

EMAIL = {"to": "a@b.com", "subject": "Hi"}


def next_turn(messages: Any) -> list[dict[str, Any]]:
    """The scripted reply to a conversation: a tool call to a new prompt, "Done." after the tool's result."""
    last = messages[-1]
    if any("toolResult" in block for block in last["content"]):
        return text_turn_events("Done.")
    return tool_turn_events([(f"tooluse_{len(messages)}", "send_email", dict(EMAIL))])


def send_email(to: str, subject: str) -> str:
    """Send an email.

    Args:
        to: The recipient.
        subject: The subject.
    """
    return f"Email sent to {to}."


def strandslike_app(storage: str) -> Any:
    from strandslike import Agent, tool
    from strandslike.hooks import BeforeToolCallEvent
    from strandslike.models import Model
    from strandslike.protocol.agui import create_app

    class ConversationModel(Model):
        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {"model_id": "bench-conversation"}

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            for event in next_turn(messages):
                yield event

    model = ConversationModel()
    email_tool = tool(send_email)

    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "send_email":
            return
        answer = event.interrupt(
            "approval", reason=event.tool_use["input"], message="Send this email?", kind="tool_call"
        )
        if not (isinstance(answer, dict) and answer.get("approved") is True):
            event.cancel_tool = "The user declined."

    def factory(session_manager: Any) -> Agent:
        return Agent(
            model=model, tools=[email_tool], hooks=[approve], session_manager=session_manager, callback_handler=None
        )

    return create_app(factory, storage_dir=storage)


def adapter_app(storage: str, *, files: bool) -> Any:
    from ag_ui_strands import StrandsAgent, StrandsAgentConfig, ToolBehavior, create_strands_app
    from strands import Agent, tool
    from strands.models import Model
    from strands.session.file_session_manager import FileSessionManager

    class ConversationModel(Model):
        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {"model_id": "bench-conversation"}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            raise NotImplementedError
            yield  # pragma: no cover

        async def stream(  # type: ignore[override]
            self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
        ) -> Any:
            for event in next_turn(messages):
                yield event

    template = Agent(model=ConversationModel(), tools=[tool(send_email)], callback_handler=None)

    def session_manager(input_data: Any) -> Any:
        return FileSessionManager(session_id=input_data.thread_id, storage_dir=storage)

    config = StrandsAgentConfig(
        tool_behaviors={"send_email": ToolBehavior(interrupt_on_call=True)},
        session_manager_provider=session_manager if files else None,
    )
    agent = StrandsAgent(template, name="bench", config=config)
    return create_strands_app(agent, path="/", ping_path=None, cors_enabled=False)


def main() -> None:
    import logging
    import os

    import uvicorn

    kind, port, storage = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            del os.environ[name]
    logging.disable(logging.WARNING)
    app = strandslike_app(storage) if kind == "strandslike" else adapter_app(storage, files=kind == "adapter-files")
    print(json.dumps({"ready": kind}), flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


if __name__ == "__main__":
    main()
