"""Helpers for the AG-UI server tests (importable as ``agui_support``: pytest puts this directory on ``sys.path``).

- `LiveServer`: the app served by uvicorn on a free loopback port, in a background thread.
- `AguiThread`: a client of one thread over real HTTP (httpx, streaming); it keeps the conversation the way the
  official client does (replaced by each ``MESSAGES_SNAPSHOT``) and checks every event of every run: each one must
  validate against the ``ag-ui-protocol`` models, with no field the protocol does not define, in a valid order.
- Scripted agent factories: the agent of a thread is rebuilt for every request and its `ScriptedModel` goes on
  after the turns its conversation already holds.
"""

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import httpx
import uvicorn
from ag_ui.core import Event
from pydantic import BaseModel, Field, TypeAdapter

from strandslike import Agent, tool
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel
from strandslike.models.scripted import ScriptedTurn
from strandslike.protocol.agui import create_app
from strandslike.session import FileSessionManager

EVENT = TypeAdapter(Event)
SENT: list[dict[str, Any]] = []  # every email the send_email tool really sent, with the arguments it received


# -- the server ---------------------------------------------------------------------------------------------------


class LiveServer:
    """`create_app(factory)` served by uvicorn on ``127.0.0.1`` and a free port, for the ``with`` block.

    ``options`` go to `create_app` (``token``, ``cors_origins``, ``max_body_bytes``). `requests_done` counts the
    POST requests the app has completely handled (the run ended and the session was released), and `wait_done`
    waits for a number of them: a test that drops a connection learns when the server finished the run.
    """

    def __init__(self, factory: Callable[..., Any], storage_dir: Path, **options: Any) -> None:
        self.app = create_app(factory, storage_dir=storage_dir, **options)
        self.requests_done = 0
        self._done = threading.Condition()
        config = uvicorn.Config(
            self._counting_app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            log_config=None,
            lifespan="off",
            interface="asgi3",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="agui-test-server", daemon=True)
        self.url = ""

    def __enter__(self) -> "LiveServer":
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    async def _counting_app(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            if scope["type"] == "http" and scope["method"] == "POST":
                with self._done:
                    self.requests_done += 1
                    self._done.notify_all()

    def wait_done(self, count: int, timeout: float = 30) -> None:
        """Block until ``count`` POST requests were completely handled."""
        with self._done:
            if not self._done.wait_for(lambda: self.requests_done >= count, timeout):
                raise AssertionError(f"only {self.requests_done} of {count} requests finished")


# -- the client ---------------------------------------------------------------------------------------------------


class Run:
    """The events of one run."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    @property
    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]

    @property
    def error(self) -> dict[str, Any] | None:
        return self.events[-1] if self.events[-1]["type"] == "RUN_ERROR" else None

    @property
    def outcome(self) -> dict[str, Any]:
        last = self.events[-1]
        assert last["type"] == "RUN_FINISHED", f"the run did not finish: {last}"
        return dict(last["outcome"])

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        outcome = self.outcome
        assert outcome["type"] == "interrupt", f"the run did not end with interrupts: {outcome}"
        return list(outcome["interrupts"])

    @property
    def messages(self) -> list[dict[str, Any]]:
        [snapshot] = self.of("MESSAGES_SNAPSHOT")
        return list(snapshot["messages"])

    @property
    def state(self) -> Any:
        [snapshot] = self.of("STATE_SNAPSHOT")
        return snapshot["snapshot"]

    def results(self) -> dict[str, str]:
        """Return the content of every TOOL_CALL_RESULT, by tool call id."""
        return {event["toolCallId"]: event["content"] for event in self.of("TOOL_CALL_RESULT")}

    def assert_error(self, code: str) -> dict[str, Any]:
        error = self.error
        assert error is not None, f"expected RUN_ERROR {code}, got {self.types}: {self.events[-1]}"
        assert error["code"] == code, error
        assert error["message"]
        return error


class AguiThread:
    """One AG-UI thread driven over HTTP, keeping its messages like the official client does."""

    def __init__(self, url: str, thread_id: str) -> None:
        self.url = url
        self.thread_id = thread_id
        self.messages: list[dict[str, Any]] = []
        self._runs = 0

    async def send(self, text: str, **extra: Any) -> Run:
        """Add a user message and run."""
        self.messages.append({"id": f"client-{self.thread_id}-{len(self.messages)}", "role": "user", "content": text})
        return await self.run(**extra)

    async def resume(self, *entries: dict[str, Any], **extra: Any) -> Run:
        """Run with ``resume`` entries."""
        return await self.run(resume=list(entries), **extra)

    async def run(self, **extra: Any) -> Run:
        """Post a RunAgentInput with the thread's messages (``extra`` adds or overrides fields)."""
        self._runs += 1
        body = {"threadId": self.thread_id, "runId": f"run-{self._runs}", "messages": self.messages, **extra}
        run = await post(self.url, body)
        if run.of("MESSAGES_SNAPSHOT"):
            self.messages = run.messages
        return run


async def post(url: str, body: Any, *, path: str = "/", headers: dict[str, str] | None = None) -> Run:
    """POST a body (JSON, or raw bytes) and return the run's events, each one checked."""
    async with httpx.AsyncClient(timeout=30) as client:
        request: dict[str, Any] = {"content": body} if isinstance(body, bytes) else {"json": body}
        headers = {"accept": "text/event-stream", "content-type": "application/json", **(headers or {})}
        async with client.stream("POST", url + path, headers=headers, **request) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            text = "".join([chunk async for chunk in response.aiter_text()])
    events = parse_sse(text)
    check_events(events)
    return Run(events)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Return the JSON data of every server-sent event."""
    events: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        data = [line[len("data: ") :] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def check_events(events: list[dict[str, Any]]) -> None:
    """Check every event against the ag-ui-protocol models, and the order of the run's events."""
    assert events, "no events"
    for event in events:
        model = EVENT.validate_python(event)
        _assert_no_extra_fields(model, event["type"])
        assert model.model_dump(mode="json", by_alias=True) == event  # nothing lost or added by the models
    types = [event["type"] for event in events]
    if types[0] == "RUN_ERROR":
        assert types == ["RUN_ERROR"], types
        return
    assert types[0] == "RUN_STARTED", types
    assert types[-1] in ("RUN_FINISHED", "RUN_ERROR"), types
    assert all(kind not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR") for kind in types[1:-1]), types
    if types[-1] == "RUN_FINISHED":
        assert types[-3:-1] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"], types
        _assert_balanced(events)


def _assert_no_extra_fields(value: Any, where: str) -> None:
    if isinstance(value, BaseModel):
        assert not value.model_extra, f"{where}: fields the protocol does not define: {value.model_extra}"
        for name in type(value).model_fields:
            _assert_no_extra_fields(getattr(value, name), where)
    elif isinstance(value, list | tuple):
        for item in value:
            _assert_no_extra_fields(item, where)


def _assert_balanced(events: list[dict[str, Any]]) -> None:
    texts: set[str] = set()
    calls: set[str] = set()
    steps: list[str] = []
    for event in events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            assert event["messageId"] not in texts
            texts.add(event["messageId"])
        elif kind == "TEXT_MESSAGE_CONTENT":
            assert event["messageId"] in texts
        elif kind == "TEXT_MESSAGE_END":
            texts.remove(event["messageId"])
        elif kind == "TOOL_CALL_START":
            assert event["toolCallId"] not in calls
            calls.add(event["toolCallId"])
        elif kind == "TOOL_CALL_ARGS":
            assert event["toolCallId"] in calls
        elif kind == "TOOL_CALL_END":
            calls.remove(event["toolCallId"])
        elif kind == "STEP_STARTED":
            steps.append(event["stepName"])
        elif kind == "STEP_FINISHED":
            steps.remove(event["stepName"])
    assert not texts, f"text messages left open: {texts}"
    assert not calls, f"tool calls left open: {calls}"
    assert not steps, f"steps left open: {steps}"


def resolved(interrupt: dict[str, Any], payload: Any) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


def cancelled(interrupt: dict[str, Any]) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "cancelled"}


# -- agents -------------------------------------------------------------------------------------------------------


@tool
def send_email(to: str, subject: str, body: str = "") -> str:
    """Send an email.

    Args:
        to: The recipient.
        subject: The subject.
        body: The body.
    """
    SENT.append({"to": to, "subject": subject, "body": body})
    return f"Email sent to {to}."


class Decision(BaseModel):
    approved: bool


def approval(*, allow_edits: bool = False, expires_in: float | None = None) -> Callable[[BeforeToolCallEvent], None]:
    """Guard send_email behind an approval interrupt (AG-UI's ``{"approved": bool}`` answer)."""

    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "send_email":
            return
        args = event.tool_use["input"]
        message = f"Send email to {args['to']} with subject {args['subject']!r}?"
        if allow_edits:  # answered with the approve-with-edits schema the server publishes: a dict
            reply = event.interrupt("approval", reason=args, message=message, allow_edits=True, expires_in=expires_in)
            approved = bool(reply.get("approved")) if isinstance(reply, dict) else False
        else:
            reply = event.interrupt("approval", reason=args, message=message, response_type=Decision)
            approved = reply.approved
        if not approved:
            event.cancel_tool = "The user declined to send this email."

    return approve


def scripted_factory(
    script: Sequence[ScriptedTurn], *, hooks: Iterable[Any] = (), tools: Iterable[Any] = (send_email,), **kwargs: Any
) -> Callable[..., Agent]:
    """Return a factory building a scripted agent on the thread's session."""
    turns = list(script)

    def build(session_manager: FileSessionManager) -> Agent:
        # A new agent per request: the scripted model reads from the restored conversation where the script stands.
        model = ScriptedModel(turns, mode="conversation")
        return Agent(model=model, tools=list(tools), hooks=list(hooks), session_manager=session_manager, **kwargs)

    return build


def filing_request(*, expires_in: float) -> Callable[[BeforeModelCallEvent], None]:
    """Ask for the quarterly filing before the first model call (a non-tool ``input_required`` interrupt)."""

    def ask(event: BeforeModelCallEvent) -> None:
        if event.agent.state.get("filing") is not None:
            return
        filing = event.interrupt(
            "filing",
            message="Please provide the quarterly filing details.",
            response_type=FilingAnswer,
            expires_in=expires_in,
        )
        if filing is not None:  # None: the request was cancelled, and so is the model call
            event.agent.state.set("filing", filing.model_dump())

    return ask


class FilingAnswer(BaseModel):
    """The answer of the filing request (the seed example's schema)."""

    quarter: Literal["Q1", "Q2", "Q3", "Q4"]
    year: int = Field(ge=2000)
    revenue: float
