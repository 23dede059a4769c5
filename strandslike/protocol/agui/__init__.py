"""An AG-UI server for strandslike agents: ``create_app(agent_factory)`` is a Starlette (ASGI) application.

It speaks the AG-UI protocol over server-sent events with the official ``ag-ui-protocol`` models and encoder, and
carries strandslike interrupts through AG-UI's interrupt lifecycle: a run ends with an ``interrupt`` outcome, and the
next run on the thread resumes it. Serve it with uvicorn, or with ``python -m strandslike serve``. It needs the
``agui`` extra: ``pip install 'strandslike[agui]'``.

How it maps AG-UI onto strandslike:

- **Threads are sessions.** Each request builds a fresh agent with
  ``agent_factory(session_manager=FileSessionManager(threadId, storage_dir=...))``; the server keeps nothing between
  requests, so a thread survives restarts and runs on any worker that shares the storage directory. A second run
  of a busy thread gets ``SESSION_CONFLICT`` (an agent's request holds its session's file lock; a Graph or Swarm
  is guarded within one server process only).
- **Input.** The prompt is the last user message the session does not have yet (text only); the conversation the
  agent continues is the session's, not the client's copy. ``RunAgentInput.state`` is ignored: ``agent.state``
  lives on the server, where hooks rely on it (a client could otherwise grant itself trust), and is reported with
  ``STATE_SNAPSHOT``. ``tools``, ``context`` and ``forwardedProps`` are ignored too.
- **Reconnecting.** A run with no new message and no resume (an empty ``resume`` counts as none) runs nothing
  and reports the thread: ``STATE_SNAPSHOT``, ``MESSAGES_SNAPSHOT``, then ``RUN_FINISHED``. On a thread that
  waits on interrupts its outcome is ``interrupt`` with the same interrupts, in full (reason, message,
  responseSchema, toolCallId, expiresAt, metadata), so a client that lost the stream or reloaded the page shows
  the pending approvals again and answers them; otherwise it is ``success``. Rule 4 refuses only new input: a new
  user message on a waiting thread gets ``RUN_ERROR`` ``PENDING_INTERRUPTS``. If a run applied the answers but
  stopped before it finished (a failing hook, a crash), the report lists those interrupts with the answer given
  in ``metadata.answered`` (``{"status": ..., "payload": ...}``): send it again to finish the run.
- **Resumes.** ``resolved`` + payload → ``interrupt.resume(payload)``; a payload with ``editedArgs`` (unless
  ``approved`` is false) → ``interrupt.restart(input=editedArgs, metadata=payload)``; ``cancelled`` →
  ``interrupt.cancel()``. A resume must answer every open interrupt, and nothing is applied unless all of it is
  valid. Replaying a resume that was applied runs nothing and reports the thread as it is now.
- **Interrupt ids** are ``<strandslike id>@<threadId>``: strandslike ids are deterministic, so the thread makes
  them unique and an answer sent to another thread is refused (``SESSION_MISMATCH``).
- **Errors.** Every refusal or failure is a ``RUN_ERROR`` with a ``code``, as the last event after
  ``RUN_STARTED`` (a body that is not a ``RunAgentInput`` gets a lone ``RUN_ERROR``, code ``INVALID_INPUT``), always
  over HTTP 200. A refused resume changes nothing: the thread stays resumable.
- **Orchestrations.** A Graph or Swarm runs like an agent; each node is a step, its messages carry the node as
  ``name``, and an interrupt raised in or before a node has ``metadata.nodeId``.

Browser clients on another origin need CORS: wrap the app in Starlette's ``CORSMiddleware``.
"""

try:
    from ._app import create_app
    from ._run import AgentFactory
except ModuleNotFoundError as exc:  # pragma: no cover - depends on what is installed
    if (exc.name or "").partition(".")[0] not in ("ag_ui", "starlette"):
        raise
    raise ImportError(
        f"strandslike.protocol.agui needs the {exc.name!r} package, which is not installed. Install the AG-UI "
        "extra: pip install 'strandslike[agui]'"
    ) from exc

__all__ = ["AgentFactory", "create_app"]
