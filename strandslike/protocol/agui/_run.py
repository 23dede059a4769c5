"""One AG-UI run: parse the input, get the thread's agent, check the contract, run, report.

The thread's agent is the one kept from the thread's previous request in this process, if its session confirms
it is current (`_cache`), else rebuilt by the factory from the thread's session.

Events, in order: ``RUN_STARTED``; text, tool call and step events as the run streams; ``STATE_SNAPSHOT`` and
``MESSAGES_SNAPSHOT``; then ``RUN_FINISHED`` (outcome ``success``, ``interrupt`` or ``cancelled``) or, if anything
was refused or failed, ``RUN_ERROR`` with a ``code`` as the last event. A body that is not a ``RunAgentInput`` has
no run to start: its answer is a ``RUN_ERROR`` alone.
"""

import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import pydantic
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    MessagesSnapshotEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
)

from ...agent.agent import Agent
from ...agent.agent_result import AgentResult
from ...interrupt import PendingInterruptsError
from ...multiagent.base import MultiAgentBase, MultiAgentResult, Status
from ...session._ids import validate_id
from ...session.file_session_manager import FileSessionManager
from ...session.repository_session_manager import RepositorySessionManager
from ...types.exceptions import SessionException
from ._cache import DEFAULT_AGENT_CACHE_SIZE, AgentCache
from ._errors import (
    AGENT_ERROR,
    AGENT_FACTORY_ERROR,
    INVALID_INPUT,
    INVALID_THREAD_ID,
    RUN_FAILED,
    SESSION_CONFLICT,
    ProtocolError,
    error_code,
    error_message,
)
from ._interrupts import agui_interrupt_id, to_agui
from ._messages import new_user_message, user_message, user_text
from ._resume import plan_resume
from ._stream import StreamTranslator
from ._target import Target

logger = logging.getLogger(__name__)


class AgentFactory(Protocol):
    """Builds the agent of one thread; called as ``factory(session_manager=...)`` when the thread has no hot agent.

    It must pass the session manager to what it builds (``Agent(..., session_manager=session_manager)``, or
    ``GraphBuilder().set_session_manager(session_manager)``), with the same tools and hooks every time, so the
    agent restored from the session finds its conversation, state and open interrupts. The server may keep a
    thread's agent for its next request (see `create_app`'s ``agent_cache_size``), and builds it again whenever
    the session changed meanwhile: the session, not the process, holds the thread. The same factories serve
    ``python -m strandslike resume --agent``.
    """

    def __call__(self, session_manager: RepositorySessionManager) -> Agent | MultiAgentBase:
        """Return the agent (or Graph or Swarm) persisted by ``session_manager``."""
        ...


@dataclass
class RunConfig:
    """What every run of one application shares.

    Attributes:
        factory: Builds the agent of a thread.
        storage_dir: Where the sessions live (None: ``~/.strandslike/sessions``), unless ``session_managers`` is set.
        session_managers: Opens a thread's session (``session_managers(thread_id)``), e.g. in PostgreSQL; None:
            a `FileSessionManager` in ``storage_dir``.
        max_body_bytes: The largest request body accepted.
        running: Threads with a run in flight in this process.
        agents: The hot agents kept between requests.
    """

    factory: AgentFactory
    storage_dir: Path | None = None
    session_managers: Callable[[str], RepositorySessionManager] | None = None
    max_body_bytes: int = 10 * 1024 * 1024
    running: set[str] = field(default_factory=set)
    agents: AgentCache = field(default_factory=lambda: AgentCache(DEFAULT_AGENT_CACHE_SIZE))


async def run_events(body: bytes, config: RunConfig) -> AsyncGenerator[list[BaseEvent], None]:
    """Run the ``RunAgentInput`` in ``body`` and yield its AG-UI events; never raises for a bad request or run.

    Events come in batches, each sent as it is ready: the events one step of the agent produced together (a text
    delta, a tool call's start and arguments), or the snapshots and ``RUN_FINISHED`` at the end. A batch goes to
    the client in one write, which costs less than one write per event and delays nothing.
    """
    try:
        run_input = _parse(body)
    except ProtocolError as exc:
        yield [RunErrorEvent(message=str(exc), code=exc.code)]
        return
    yield [RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id, protocol_version=PROTOCOL_VERSION)]
    try:
        async for batch in _thread_run(run_input, config):
            yield batch
    except Exception as exc:
        code = error_code(exc)
        if code in (AGENT_ERROR, AGENT_FACTORY_ERROR):
            logger.exception("thread_id=<%s>, run_id=<%s> | run failed", run_input.thread_id, run_input.run_id)
        yield [RunErrorEvent(message=error_message(exc), code=code)]


def _parse(body: bytes) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate_json(body)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'body'}: {error['msg']}" for error in exc.errors()[:3]
        )
        raise ProtocolError(
            INVALID_INPUT, f"The request body is not a valid AG-UI RunAgentInput ({problems}). Nothing ran."
        ) from None


async def _thread_run(run_input: RunAgentInput, config: RunConfig) -> AsyncGenerator[list[BaseEvent], None]:
    thread_id = run_input.thread_id
    try:
        validate_id(thread_id, "session")
    except ValueError as exc:
        raise ProtocolError(
            INVALID_THREAD_ID, f"threadId {thread_id!r} cannot name a session: {exc} Nothing ran."
        ) from None
    if thread_id in config.running:
        raise ProtocolError(
            SESSION_CONFLICT,
            f"thread_id=<{thread_id}> | another run of this thread is in progress. Nothing ran; retry when it ends.",
        )
    config.running.add(thread_id)
    try:
        target = await _open(config, thread_id)
        completed = False
        try:
            async for batch in _drive(run_input, target):
                yield batch
            completed = True
        finally:
            with anyio.CancelScope(shield=True):
                await _finish(config, thread_id, target, completed)
    finally:
        config.running.discard(thread_id)


async def _open(config: RunConfig, thread_id: str) -> Target:
    """Get the thread's agent and claim its session.

    A kept agent is claimed at the version it last read or wrote, on the event loop when the session manager does
    no blocking I/O (a non-blocking ``flock`` for files): if anyone changed the session since, the claim is
    refused and the agent is rebuilt from the session. Otherwise the session is opened, the agent built and the
    session claimed in one trip to a worker thread: each hop costs a wake-up of the thread and then of the event
    loop, and under load those dominate a request.
    """
    kept = config.agents.take(thread_id)
    if kept is not None:
        try:
            if kept.session_manager.blocking_io:
                await anyio.to_thread.run_sync(functools.partial(kept.begin, log_refusal=False))
            else:
                kept.begin(log_refusal=False)
            return kept
        except SessionException:
            # Changed or held by another process since this agent was kept: rebuild it from the session (which
            # claims again, and refuses the request if the session is still held).
            kept.session_manager.close()
        except BaseException:
            kept.session_manager.close()
            raise
    opened = await anyio.to_thread.run_sync(_open_blocking, config, thread_id)
    if isinstance(opened, Target):
        return opened
    manager, pending = opened  # an async factory: await what it returned, then claim
    try:
        target = Target(await _awaited(pending), manager)
        await anyio.to_thread.run_sync(target.begin)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(manager.close)
        raise
    return target


def _open_blocking(config: RunConfig, thread_id: str) -> "Target | tuple[RepositorySessionManager, Any]":
    if config.session_managers is not None:
        manager = config.session_managers(thread_id)
    else:
        manager = FileSessionManager(thread_id, storage_dir=config.storage_dir)
    try:
        built = _call_factory(config.factory, manager)
        if inspect.isawaitable(built):
            return manager, built
        target = Target(built, manager)
        target.begin()
    except BaseException:
        manager.close()
        raise
    return target


async def _finish(config: RunConfig, thread_id: str, target: Target, completed: bool) -> None:
    """Persist what changed and release the claim; keep the agent for the thread's next request if it may be kept.

    It may be kept after a request that ran to its end and left it exactly as its session holds it.
    """
    kept = False
    try:
        await target.end_async()
        if completed and config.agents.size > 0 and target.is_synced():
            config.agents.keep(thread_id, target)
            kept = True
    finally:
        if not kept:
            if target.session_manager.blocking_io:
                await anyio.to_thread.run_sync(target.session_manager.close)
            else:
                target.session_manager.close()  # releases what the request still holds: no blocking I/O


def _call_factory(factory: AgentFactory, manager: RepositorySessionManager) -> Any:
    try:
        return factory(session_manager=manager)
    except SessionException:
        raise  # a corrupt or conflicting session keeps its own code
    except Exception as exc:
        raise ProtocolError(AGENT_FACTORY_ERROR, f"The agent factory failed: {type(exc).__name__}: {exc}") from exc


async def _awaited(pending: Any) -> Any:
    try:
        return await pending
    except SessionException:
        raise
    except Exception as exc:
        raise ProtocolError(AGENT_FACTORY_ERROR, f"The agent factory failed: {type(exc).__name__}: {exc}") from exc


async def _drive(run_input: RunAgentInput, target: Target) -> AsyncGenerator[list[BaseEvent], None]:
    target.refuse_partial_resumes()
    thread_id = run_input.thread_id
    prompt: Any = None
    run = False
    if run_input.resume:
        plan = plan_resume(run_input.resume, thread_id, target)
        prompt, run = plan.blocks, not plan.replay
    else:
        prompt = _prompt(run_input, target)
        if prompt is not None and target.interrupted:
            raise _pending(target, thread_id)  # new input while interrupts wait (AG-UI rule 4)
        # Nothing new: report the thread as it is, a client loading its history (after a reload or a dropped
        # connection); a thread that waits on interrupts finishes with the same interrupt outcome again.
        run = prompt is not None
    translator = StreamTranslator(target)
    result: Any = None
    if run:
        async with contextlib.aclosing(target.stream(prompt)) as events:
            async for event in events:
                if "result" in event:
                    result = event["result"]
                translated = translator.translate(event)
                if translated:
                    yield translated
    closing = [
        *translator.close(),
        StateSnapshotEvent(snapshot=target.state_snapshot()),
        MessagesSnapshotEvent(messages=target.messages()),
    ]
    try:
        closing.append(_finished(run_input, target, result))
    except Exception:
        yield closing  # the thread's state goes out before the RUN_ERROR
        raise
    yield closing


def _prompt(run_input: RunAgentInput, target: Target) -> Any:
    message = new_user_message(run_input.messages, {message.id for message in target.messages()})
    if message is None:
        return None
    text = user_text(message)
    if isinstance(target.runnable, Agent):
        return [user_message(text, message.id)]  # the message keeps the client's id
    return text


def _pending(target: Target, thread_id: str) -> PendingInterruptsError:
    ids = [agui_interrupt_id(interrupt.id, thread_id) for interrupt in target.open_interrupts()]
    if not ids:  # answered, but the run that applied the answers did not finish
        return PendingInterruptsError(
            f"thread_id=<{thread_id}> | the thread's interrupts are answered but the run that applied the answers "
            "did not finish; send the same resume again to continue (AG-UI rule 4); a run with no new message "
            "reports them with the answers given (metadata.answered). Nothing ran."
        )
    return PendingInterruptsError(
        f"thread_id=<{thread_id}> | the thread waits on {len(ids)} interrupt(s) ({', '.join(ids)}); a RunAgentInput "
        "on this thread must carry a resume answering every one of them (AG-UI rule 4); a run with no new message "
        "and no resume reports them in full (RUN_FINISHED with the interrupt outcome). Nothing ran."
    )


def _finished(run_input: RunAgentInput, target: Target, result: Any) -> RunFinishedEvent:
    waiting = target.waiting_interrupts()
    outcome: RunFinishedInterruptOutcome | RunFinishedCancelledOutcome | RunFinishedSuccessOutcome
    if waiting:
        outcome = RunFinishedInterruptOutcome(interrupts=[to_agui(o, run_input.thread_id) for o in waiting])
    elif isinstance(result, MultiAgentResult) and result.status == Status.FAILED:
        failed = [
            f"{node_id} ({node.result})" for node_id, node in result.results.items() if node.status is Status.FAILED
        ]
        raise ProtocolError(RUN_FAILED, f"The orchestration failed: {', '.join(failed) or 'it was stopped'}.")
    elif isinstance(result, AgentResult) and result.stop_reason == "cancelled":
        outcome = RunFinishedCancelledOutcome()
    else:
        outcome = RunFinishedSuccessOutcome()
    return RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id, outcome=outcome)
