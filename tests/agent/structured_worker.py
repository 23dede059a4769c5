"""Child process for the structured-output session test: pause (interrupt) or resume, print the result as JSON."""

import json
import sys

from pydantic import BaseModel

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, structured_output_call, text, tool_call
from strandslike.session import FileSessionManager


class Report(BaseModel):
    path: str
    deleted: bool


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def approval(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete" and event.interrupt("approval") != "yes":
        event.cancel_tool = "refused"


def main(command: str, storage: str, answer: str = "") -> None:
    if command == "pause":
        turns = [tool_call("delete", path="/tmp/a")]
    else:
        turns = [text("Done."), structured_output_call(Report, path="/tmp/a", deleted=True)]
    agent = Agent(
        model=ScriptedModel(turns),
        tools=[delete],
        hooks=[approval],
        session_manager=FileSessionManager("so-session", storage),
        structured_output_model=Report if command == "resume-default" else None,
        callback_handler=None,
    )
    if command == "pause":
        result = agent("delete /tmp/a", structured_output_model=Report)
    else:
        prompt = [{"interruptResponse": {"interruptId": answer, "response": "yes"}}]
        if command == "resume-default":
            result = agent(prompt)
        else:
            result = agent(prompt, structured_output_model=Report)
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "interrupts": [i.id for i in result.interrupts or ()],
                "structured_output": result.structured_output.model_dump() if result.structured_output else None,
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
