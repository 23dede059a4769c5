"""An AG-UI server for strandslike agents: ``create_app(agent_factory)`` is a Starlette (ASGI) application.

It speaks the AG-UI protocol over server-sent events with the official ``ag-ui-protocol`` models and encoder, and
carries strandslike interrupts through AG-UI's interrupt lifecycle: a run ends with an ``interrupt`` outcome, and the
next run on the thread resumes it. Serve it with uvicorn, or with ``python -m strandslike serve``. It needs the
``agui`` extra: ``pip install 'strandslike[agui]'``.

How it maps AG-UI onto strandslike:

- **Threads are sessions.** A thread's agent is built with
  ``agent_factory(session_manager=FileSessionManager(threadId, storage_dir=...))`` (with ``session_dsn``,
  ``PostgresSessionManager(threadId, dsn=...)``; with ``session_managers``, your own); the session, not the
  process, holds the thread, so a thread survives restarts and runs on any worker that shares the storage
  directory or the database. The agents of the last ``agent_cache_size`` threads (256 by default) are kept between
  requests and reused only when the request's claim confirms that nobody changed the session since (otherwise the
  agent is rebuilt from the session); Graph and Swarm threads are rebuilt for every request. Each
  request claims its session through the session manager before it checks or runs anything
  (``begin_invocation``, or ``begin_multi_agent_invocation`` for a Graph or Swarm) and releases it at the end: a
  second run of a busy thread, on this server or another one, gets ``SESSION_CONFLICT`` and changes nothing, so
  two servers never both apply an answer to one interrupt. ``FileSessionManager`` does not claim orchestrator
  sessions yet: a Graph or Swarm thread is guarded within one server process only.
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
  ``approved`` is false) → ``interrupt.restart(input=editedArgs, metadata=payload, response=payload)`` (the
  restarted call's ``interrupt()`` returns the payload); ``cancelled`` → ``interrupt.cancel()``. A resume must
  answer every open interrupt, and nothing is applied unless all of it is valid. Replaying a resume that was
  applied runs nothing and reports the thread as it is now.
- **Interrupt ids** are ``<strandslike id>@<threadId>``: strandslike ids are deterministic, so the thread makes
  them unique and an answer sent to another thread is refused (``SESSION_MISMATCH``).
- **HTTP guards** (before anything runs or is written; JSON bodies ``{"code": ..., "message": ...}``): with a
  ``token``, every request needs ``Authorization: Bearer <token>`` (401 with ``WWW-Authenticate: Bearer``
  otherwise; constant-time comparison); a run needs ``Content-Type: application/json`` (415 otherwise, so a page
  on another origin cannot start one without a CORS preflight); a body over ``max_body_bytes`` (10 MiB by
  default) is refused with 413 by its ``Content-Length`` or as soon as it grows past the limit, never buffered
  whole. CORS is off unless ``cors_origins`` are given.
- **Errors.** Past the HTTP guards, every refusal or failure is a ``RUN_ERROR`` with a ``code``, as the last event
  after ``RUN_STARTED`` (a body that is not a ``RunAgentInput`` gets a lone ``RUN_ERROR``, code ``INVALID_INPUT``),
  over HTTP 200. A refused resume changes nothing: the thread stays resumable.
- **Orchestrations.** A Graph or Swarm runs like an agent; each node is a step, its messages carry the node as
  ``name``, and an interrupt raised in or before a node has ``metadata.nodeId``.

Anyone who can reach the server can run the agent and answer its interrupts unless a ``token`` is set: serve it
on the loopback interface, or with a token (``python -m strandslike serve`` refuses a non-loopback host without
one unless told ``--allow-unauthenticated``). Browser clients on another origin need their origin in
``cors_origins``.
"""

try:
    from ._app import create_app
    from ._http import ServerConfigError
    from ._run import AgentFactory
except ModuleNotFoundError as exc:  # pragma: no cover - depends on what is installed
    if (exc.name or "").partition(".")[0] not in ("ag_ui", "starlette"):
        raise
    raise ImportError(
        f"strandslike.protocol.agui needs the {exc.name!r} package, which is not installed. Install the AG-UI "
        "extra: pip install 'strandslike[agui]'"
    ) from exc

__all__ = ["AgentFactory", "ServerConfigError", "create_app"]
