"""End to end with the official TypeScript client: ``node js/client.mjs <url>`` drives the demo agent over HTTP.

Needs Node and ``npm ci`` in ``tests/protocol/js`` (``.ci/run`` does it); skipped otherwise, except in CI (``CI``
set), where a missing client fails the test so it can never silently stop running.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from agui_support import LiveServer

from strandslike._demo import session_agent

JS = Path(__file__).parent / "js"
INTERRUPT_ID = "v1:before_tool_call:tooluse_2:b9e6f0f7-048e-5f43-a7b0-2b41b64a57ec"


def node_or_skip() -> str:
    missing = None
    node = shutil.which("node")
    if node is None:
        missing = "node is not installed: the @ag-ui/client end-to-end test needs Node.js 18 or later"
    elif not (JS / "node_modules" / "@ag-ui" / "client").is_dir():
        missing = f"@ag-ui/client is not installed: run `npm ci` in {JS}"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} (required in CI: .ci/run installs it)")
        pytest.skip(missing)
    assert node is not None
    return node


def test_the_official_client_sends_gets_the_interrupt_reloads_resumes_and_succeeds(tmp_path):
    node = node_or_skip()
    token = "js-client-token-0123456789"
    with LiveServer(session_agent, tmp_path, token=token) as server:  # the client sends it as a bearer token
        completed = subprocess.run(
            [node, "client.mjs", server.url, "js-thread", token],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert completed.returncode == 0, completed.stderr
    summary = json.loads(completed.stdout.strip().splitlines()[-1])

    first = summary["first"]
    assert first["error"] is None
    assert first["outcome"] == "interrupt"
    assert first["events"][0] == "RUN_STARTED"
    assert first["events"][-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert first["toolCalls"] == ["tooluse_1", "tooluse_2"]
    [interrupt] = summary["pending"]
    assert interrupt["id"] == f"{INTERRUPT_ID}@js-thread"  # the demo's HumanInTheLoop question, on this thread
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == "tooluse_2"
    assert interrupt["message"].startswith('Approve "delete_files"?')
    assert interrupt["metadata"]["name"] == "strands:human-in-the-loop"
    assert interrupt["metadata"]["options"] == ["approve", "deny", "trust", "edit"]
    assert interrupt["responseSchema"]["title"] == "Approval"
    assert "pending interrupt" in summary["clientRefusal"]

    # The reloaded client got the same interrupts back, in full, from a run with no new input; nothing ran.
    reload = summary["reload"]
    assert reload["error"] is None
    assert reload["outcome"] == "interrupt"
    assert reload["events"] == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert summary["reloadedPending"] == summary["pending"]
    assert summary["reloadedMessages"] == summary["firstMessages"]
    assert summary["resume"] == [{"interruptId": interrupt["id"], "status": "resolved", "payload": "y"}]

    second = summary["second"]
    assert second["error"] is None
    assert second["outcome"] == "success"
    assert second["toolCalls"] == []  # the approved call is not announced again
    assert second["toolResults"] == {"tooluse_2": "true"}
    assert second["text"] == "I deleted a/b/c.txt and d/e/f.txt."
    assert summary["pendingAfter"] == []
    assert summary["state"] == {}  # approved once ("y"): HumanInTheLoop trusts nothing
    roles = [message["role"] for message in summary["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
