"""A thread id becomes a session id: the AG-UI server refuses the same hostile ids (issue 9, item 6) before it
creates anything, with ``RUN_ERROR`` code ``INVALID_THREAD_ID`` (or ``INVALID_INPUT`` when the body is not even
valid JSON text, as with a lone surrogate)."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from agui_support import LiveServer, scripted_factory

from strandslike.models import text

HOSTILE = ["é" * 65, "a\x85b", "a\u2028b", "a\u202eb", "a\u2066b", "a\u200bb", "a\ue000b", "a\u0378b"]


async def events_of(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(
            url, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
    assert response.status_code == 200
    # Server-sent events end lines with \n only; str.splitlines() would also split on U+2028 or U+0085.
    return [
        json.loads(line[len("data: ") :])
        for line in response.content.decode("utf-8").split("\n")
        if line.startswith("data: ")
    ]


@pytest.mark.parametrize("thread_id", HOSTILE, ids=[ascii(value)[:16] for value in HOSTILE])
async def test_a_hostile_thread_id_is_refused_and_nothing_is_created(tmp_path: Path, thread_id: str) -> None:
    with LiveServer(scripted_factory([text("never")]), tmp_path) as server:
        events = await events_of(server.url, {"threadId": thread_id, "runId": "r", "messages": []})
    assert [event["type"] for event in events][-1] == "RUN_ERROR"
    assert events[-1]["code"] == "INVALID_THREAD_ID"
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240  (the server has answered: nothing runs concurrently)


async def test_a_lone_surrogate_thread_id_is_refused_as_invalid_input(tmp_path: Path) -> None:
    with LiveServer(scripted_factory([text("never")]), tmp_path) as server:
        events = await events_of(server.url, {"threadId": "a\ud800b", "runId": "r", "messages": []})
    assert [event["type"] for event in events] == ["RUN_ERROR"]
    assert events[0]["code"] in ("INVALID_INPUT", "INVALID_THREAD_ID")
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240


async def test_a_128_byte_thread_id_works(tmp_path: Path) -> None:
    thread_id = "é" * 64
    with LiveServer(scripted_factory([text("hello")]), tmp_path) as server:
        events = await events_of(
            server.url,
            {"threadId": thread_id, "runId": "r", "messages": [{"id": "m1", "role": "user", "content": "hi"}]},
        )
    assert events[-1]["type"] == "RUN_FINISHED"
    assert (tmp_path / f"session_{thread_id}").is_dir()
