"""Machinery shared by Graph and Swarm: hooks, node execution, interrupts across nodes, persistence of nodes.

Interrupts raised inside a node (by the node agent's tools or hooks, or by a nested orchestrator) are re-issued
by the orchestrator under an id prefixed with the node (``v1:node:<uuid5(node_id)>:<inner id>``), so ids stay
unique across the whole orchestration even when two agents use the same tool-use ids. The orchestrator keeps the
route back to the node in its interrupt state and hands each answer to the node that asked.
"""

import copy
import functools
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import aclosing, nullcontext
from typing import Any

import anyio

from .._identifier import validate_id
from .._sync import run_sync
from ..agent._prompt import is_interrupt_responses
from ..agent.agent import Agent
from ..agent.agent_result import AgentResult
from ..hooks.events import (
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    MultiAgentInitializedEvent,
)
from ..hooks.registry import HookProvider, HookRegistry
from ..interrupt import Interrupt, InterruptAlreadyAnsweredError, NotInterruptedError
from ..interrupt._state import ParsedAnswer, _InterruptState
from ..plugins.multiagent_plugin import MultiAgentPlugin
from ..plugins.multiagent_registry import _MultiAgentPluginRegistry
from ..telemetry.spans import current_tracer
from ..tools.journal import ToolJournal
from ..types.exceptions import ConcurrencyException, SessionException
from ..types.interrupt import InterruptResponseContent, name_uuid
from ._audit import OrchestratorInterruptState, audit_length, settle_node_answers
from ._nodes import (
    InitialState,
    in_flight,
    node_agents,
    node_journals,
    omitting_messages,
    restore_executor,
    snapshot_executor,
)
from .base import Emit, MultiAgentBase, MultiAgentResult, NodeResult, Status, zero_metrics, zero_usage

_ROUTES = "node_interrupts"

OnFinished = Callable[[NodeResult], None]


@functools.lru_cache(maxsize=4096)
def node_interrupt_prefix(node_id: str) -> str:
    """Return the id prefix of the interrupts a node's hooks raise on `BeforeNodeCallEvent`."""
    return f"v1:before_node_call:{name_uuid(node_id)}:"


class Orchestrator(MultiAgentBase):
    """A `MultiAgentBase` with hooks, an interrupt state, node execution and node persistence."""

    def _setup(self, orchestrator_id: str, hooks: Iterable[HookProvider] | None, session_manager: Any) -> None:
        self.id = validate_id(orchestrator_id, type(self).__name__.lower())
        self.hooks = HookRegistry()
        self.session_manager = session_manager
        self._interrupt_state: _InterruptState = OrchestratorInterruptState(self._node_of)
        self._nodes_by_uuid: dict[str, str] | None = None
        self._invocation_lock = threading.Lock()
        # The session manager goes first, so it persists after user hooks on reversed After* events.
        if session_manager is not None:
            self.hooks.add_hook(session_manager)
        for hook in hooks or ():
            if not isinstance(hook, HookProvider):
                raise ValueError(f"Invalid hook: {hook!r}. Orchestrator hooks must be HookProvider instances.")
            self.hooks.add_hook(hook)
        self._plugin_registry = _MultiAgentPluginRegistry(self)

    def _check_node_executors(self, executors: dict[str, Any], kind: str) -> None:
        seen: set[int] = set()
        for node_id, executor in executors.items():
            if id(executor) in seen:
                raise ValueError("Duplicate node instance detected. Each node must have a unique object instance.")
            seen.add(id(executor))
            if not isinstance(executor, Agent | MultiAgentBase):
                raise TypeError(f"Node {node_id!r} must be an Agent or a Graph/Swarm, got {type(executor).__name__}")
            if self.session_manager is not None and getattr(executor, "session_manager", None) is not None:
                raise ValueError(
                    f"Node {node_id!r} has its own session manager, and this {kind} persists its nodes with its own "
                    f"session. Remove the node's session_manager (the {kind}'s session stores the node's messages and "
                    "state), or give the orchestrator no session manager."
                )

    def _fire_initialized(self, plugins: Iterable[MultiAgentPlugin] | None = None) -> None:
        """Attach ``plugins`` (the orchestrator is complete, nodes included), then fire `MultiAgentInitializedEvent`.

        Node agents' idempotency keys are scoped to this orchestrator and the node path first, so two nodes never
        share keys; a session manager then scopes them to its session too (and journals them in its log). A journal
        a session already journals (a nested orchestrator with a session of its own) keeps its scope.
        """
        for path, journal in self.tool_journals().items():
            if journal.sink is None:
                journal.scope = f"{self.id}/{path}"
        self._plugin_registry.add_all(plugins)
        run_sync(self.hooks.invoke_callbacks_async, MultiAgentInitializedEvent(self))

    def tool_journals(self) -> dict[str, ToolJournal]:
        """Return every agent node's tool journal by node path (``"research"``, ``"outer/inner"``), nested ones too."""
        return node_journals({node_id: self._executor(node_id) for node_id in self._node_ids()})

    def _node_agents(self) -> dict[str, Agent]:
        return node_agents({node_id: self._executor(node_id) for node_id in self._node_ids()})

    def serialize_state_parts(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """Return `serialize_state()` without the node agents' conversations, and those conversations by node path.

        The conversations are the live ``messages`` lists (not copies): read them before the orchestration goes on.
        Each agent node of the first part (nested Graphs and Swarms included) lacks its ``"messages"`` member; the
        second part holds it, by node path (see `tool_journals`).
        """
        agents = self._node_agents()
        with omitting_messages(list(agents.values())):
            state = self.serialize_state()
        return state, {path: agent.messages for path, agent in agents.items()}

    # -- invocation envelope ------------------------------------------------------------------------------------

    async def _execute(self, task: Any, invocation_state: dict[str, Any], emit: Emit | None) -> MultiAgentResult:
        """Run an invocation, inside its span when tracing is on."""
        tracer = current_tracer()
        if tracer is None:
            return await self._execute_untraced(task, invocation_state, emit)
        from .swarm import Swarm  # imports this module

        scope = tracer.start_orchestrator("swarm" if isinstance(self, Swarm) else "graph", self.id, self)
        try:
            result = await self._execute_untraced(task, invocation_state, emit)
        except BaseException as exc:
            tracer.end_orchestration(scope, None, exc)
            raise
        tracer.end_orchestration(scope, result, None)
        return result

    async def _execute_untraced(
        self, task: Any, invocation_state: dict[str, Any], emit: Emit | None
    ) -> MultiAgentResult:
        """Validate and apply a resume, then run between the Before/AfterMultiAgentInvocation events."""
        self._enter()
        try:
            replay = self._replayed_result(task)
            if replay is not None:
                return replay  # the same answers already ran to completion: nothing runs twice
            node_answers = self._prepare_resume(task)
            await self._before_invocation(invocation_state)
            try:
                return await self._run(task, invocation_state, emit, node_answers)
            finally:
                await self._after_invocation(invocation_state)
        finally:
            self._leave()

    async def _run(
        self,
        task: Any,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        node_answers: dict[str, list[InterruptResponseContent]] | None,
    ) -> MultiAgentResult:
        """Run the orchestration (``node_answers`` is None for a fresh run, else the answers for each node)."""
        raise NotImplementedError

    def _enter(self) -> None:
        if not self._invocation_lock.acquire(blocking=False):
            raise ConcurrencyException(
                f"{type(self).__name__} {self.id!r} is already running. Concurrent invocations are not supported."
            )

    def _leave(self) -> None:
        self._invocation_lock.release()

    partial_resume: str = "reraise"

    def _replayed_result(self, task: Any) -> MultiAgentResult | None:
        """Return a result for a resume that repeats answers already applied and completed, without running anything.

        Returns None when the orchestration is interrupted, or ``task`` is not a resume naming resolved interrupts
        (the resume then goes on to its usual checks: `NotInterruptedError` when nothing waits).

        Raises:
            UnknownInterruptError: The resume mixes resolved interrupts with ids the orchestration never raised.
            InterruptAlreadyAnsweredError: The resume names resolved interrupts but changes their answers (another
                request resolved them first: a second server, a duplicate delivery).
        """
        state = self._interrupt_state
        if state.activated or not is_interrupt_responses(task) or not state.replays_resolved(task):
            return None
        result = self._build_result()
        result.replayed = True
        return result

    def _build_result(self) -> MultiAgentResult:
        """Return the orchestration's result as its state stands."""
        raise NotImplementedError

    def _prepare_resume(self, task: Any) -> dict[str, list[InterruptResponseContent]] | None:
        """Validate a resume as a whole and apply it; return each node's answers, or None for a fresh run.

        Raises the same typed errors as an agent (`PendingInterruptsError`, `UnknownInterruptError`, ...), before
        anything is applied, so a failed resume leaves the orchestration interrupted and resumable.
        """
        state = self._interrupt_state
        if not state.activated:
            if is_interrupt_responses(task):
                raise NotInterruptedError()
            return None
        answers, node_answers = self._validate_resume(task)
        state.apply(answers, task)
        return node_answers

    def _validate_resume(self, task: Any) -> tuple[dict[str, ParsedAnswer], dict[str, list[Any]]]:
        """Check a resume against this orchestration and its nodes; return its new answers and each node's answers.

        A node gets its new answers and also the answers the resume repeats: an answer applied by a run that
        stopped before it finished (its process died) is on record, and its node must be resumed with it again.
        """
        state = self._interrupt_state
        answers = state.parse_responses(self._without_spent(task), refuse_partial=self.partial_resume == "refuse")
        routes: dict[str, list[str]] = state.context.get(_ROUTES, {})
        node_answers: dict[str, list[Any]] = {}
        for interrupt_id in state.resume_ids(task) or []:
            route = routes.get(interrupt_id)
            interrupt = state.interrupts.get(interrupt_id)
            if route is None or interrupt is None:
                continue
            answer = answers.get(interrupt_id) or ParsedAnswer(
                interrupt.action or "resume", interrupt.response, interrupt.edited_input, interrupt.restart_metadata
            )
            node_id, inner_id = route
            body: dict[str, Any] = {"interruptId": inner_id, "response": answer.response, "action": answer.action}
            if answer.edited_input is not None:
                body["input"] = answer.edited_input
            if answer.action == "restart":
                body["metadata"] = answer.metadata
            node_answers.setdefault(node_id, []).append({"interruptResponse": body})
        for node_id, blocks in node_answers.items():
            executor = self._executor(node_id)
            waiting = getattr(executor, "_interrupt_state", None)
            if waiting is None or not waiting.activated:
                continue  # the node finished after its answers were applied: it replays, it does not run again
            if isinstance(executor, Agent):
                executor._interrupt_state.parse_responses(blocks, executor._resume_checks())
            elif isinstance(executor, Orchestrator):
                executor._validate_resume(blocks)
        return answers, node_answers

    def _without_spent(self, task: Any) -> Any:
        """Drop the answers a resume repeats to node hooks whose node has run since (spent, kept on record).

        A run that stops before it finishes (its process died) waits for the same resume again, answers already
        spent included: those are replays, not unknown ids.

        Raises:
            InterruptAlreadyAnsweredError: The resume changes such an answer.
        """
        state = self._interrupt_state
        ids = state.resume_ids(task)
        spent = {i for i in ids or () if i not in state.interrupts and i in state.resolved}
        if not spent:
            return task
        kept = []
        for block in task:
            interrupt_id = block["interruptResponse"]["interruptId"]
            if interrupt_id not in spent:
                kept.append(block)
            elif not state.is_replay([block]):
                raise InterruptAlreadyAnsweredError(interrupt_id, interrupt_id)
        return kept

    async def _before_invocation(self, invocation_state: dict[str, Any]) -> None:
        await self.hooks.invoke_callbacks_async(BeforeMultiAgentInvocationEvent(self, invocation_state))

    async def _after_invocation(self, invocation_state: dict[str, Any]) -> None:
        await self.hooks.invoke_callbacks_async(AfterMultiAgentInvocationEvent(self, invocation_state))

    def _executor(self, node_id: str) -> Any:
        raise NotImplementedError

    def _node_ids(self) -> list[str]:
        raise NotImplementedError

    def _persisted_nodes(self) -> dict[str, Any]:
        """Return the parts of `serialize_state` every orchestrator shares: node agents and interrupt state."""
        return {
            "nodes": {node_id: snapshot_executor(self._executor(node_id)) for node_id in self._node_ids()},
            "_internal_state": {"interrupt_state": self._interrupt_state.to_dict()},
        }

    def _restore_nodes(self, payload: dict[str, Any], kind: str, members: str, also_named: Iterable[str] = ()) -> None:
        """Restore what `_persisted_nodes` saved, after checking the payload names only nodes this one has.

        Raises:
            ValueError: The payload names nodes (or ``also_named`` holds names) this orchestrator does not have.
        """
        unknown = (set(payload.get("nodes", {})) | set(also_named)) - set(self._node_ids())
        if unknown:
            raise ValueError(
                f"Saved {kind} {payload.get('id')!r} has {members} {sorted(unknown)} that this {kind} lacks"
            )
        for node_id, data in payload.get("nodes", {}).items():
            restore_executor(self._executor(node_id), data)
        self._interrupt_state.load_dict(payload.get("_internal_state", {}).get("interrupt_state", {}))

    # -- interrupts -----------------------------------------------------------------------------------------------

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts the orchestration waits on (not answered yet), in the order they were raised.

        Ids are unique across the orchestration (``v1:node:...`` for those raised inside a node, with
        ``metadata["node_id"]``); empty when the orchestration is not interrupted.
        """
        state = self._interrupt_state
        return state.unanswered() if state.activated else []

    def open_interrupts(self) -> list[Interrupt]:
        """Return `pending_interrupts` (the earlier spelling, kept for callers written against it)."""
        return self.pending_interrupts

    @property
    def interrupt_audit(self) -> list[dict[str, Any]]:
        """The life of every interrupt of the orchestration, oldest first, as `Agent.interrupt_audit` gives an agent's.

        Raised (by which node, hook or tool), answered (how), and what then ran; each entry names the ``node_id``
        it concerns (see `strandslike.multiagent._audit`).
        """
        return [dict(entry) for entry in self._interrupt_state.audit]

    def _node_of(self, interrupt_id: str) -> str | None:
        """Return the node an interrupt of this orchestration concerns (raised before it or inside it)."""
        for prefix in ("v1:node:", "v1:before_node_call:"):
            if interrupt_id.startswith(prefix):
                if self._nodes_by_uuid is None:  # nodes are fixed once the orchestrator is built
                    self._nodes_by_uuid = {str(name_uuid(node_id)): node_id for node_id in self._node_ids()}
                return self._nodes_by_uuid.get(interrupt_id[len(prefix) :].split(":", 1)[0])
        return None

    def _adopt(self, node_id: str, interrupts: list[Interrupt]) -> list[Interrupt]:
        """Re-issue a node's own interrupts under orchestration-unique ids."""
        state = self._interrupt_state
        routes = state.context.setdefault(_ROUTES, {})
        adopted = []
        for inner in interrupts:
            outer_id = f"v1:node:{name_uuid(node_id)}:{inner.id}"
            routes[outer_id] = [node_id, inner.id]
            outer = state.interrupts.get(outer_id)
            if outer is None or outer.answered:
                outer = Interrupt(
                    outer_id,
                    inner.name,
                    copy.deepcopy(inner.reason),
                    message=inner.message,
                    response_schema=copy.deepcopy(inner.response_schema),
                    expires_at=inner.expires_at,
                    tool_use_id=inner.tool_use_id,
                    metadata={**copy.deepcopy(inner.metadata or {}), "node_id": node_id},
                    kind=inner.kind,
                    allow_edits=inner.allow_edits,
                    session_id=inner.session_id,
                    source=f"node {node_id}: {inner.source}" if inner.source else f"node {node_id}",
                )
                state.interrupts[outer_id] = outer
                state.record(outer, "raised", by=outer.source, reason=outer.reason, inner_id=inner.id)
            adopted.append(outer)
        return adopted

    def _node_ran(self, node_id: str, answers: list[InterruptResponseContent] | None) -> None:
        """Spend the answers to a node's hooks once the node has run (or failed); a node resumed inside had none.

        Until then they stay on record: a process that dies while the node runs leaves them answered, so the
        retried resume passes the hooks with the answers already given instead of asking again.
        """
        if answers is None:
            self._spend_hook_answers(node_id)

    def _spend_hook_answers(self, node_id: str) -> None:
        """Forget answered `BeforeNodeCallEvent` interrupts of a node that proceeded, so a revisit asks again."""
        prefix = node_interrupt_prefix(node_id)
        state = self._interrupt_state
        spent = [key for key, interrupt in state.interrupts.items() if key.startswith(prefix) and interrupt.answered]
        for key in spent:
            state.spend(key)

    # -- one node -------------------------------------------------------------------------------------------------

    async def _run_node(
        self,
        node_id: str,
        executor: Any,
        node_input: Any,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        *,
        answers: list[InterruptResponseContent] | None = None,
        node_timeout: float | None = None,
        on_finished: OnFinished | None = None,
    ) -> NodeResult:
        """Run one node, inside its ``execute_node`` span when tracing is on (see `_run_node_untraced`)."""
        tracer = current_tracer()
        if tracer is None:
            return await self._run_node_untraced(
                node_id,
                executor,
                node_input,
                invocation_state,
                emit,
                answers=answers,
                node_timeout=node_timeout,
                on_finished=on_finished,
            )
        scope = tracer.start_node(node_id, "agent" if isinstance(executor, Agent) else "multiagent")
        try:
            result = await self._run_node_untraced(
                node_id,
                executor,
                node_input,
                invocation_state,
                emit,
                answers=answers,
                node_timeout=node_timeout,
                on_finished=on_finished,
            )
        except BaseException as exc:
            tracer.end_node(scope, None, exc)
            raise
        tracer.end_node(scope, result)
        return result

    async def _run_node_untraced(
        self,
        node_id: str,
        executor: Any,
        node_input: Any,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        *,
        answers: list[InterruptResponseContent] | None = None,
        node_timeout: float | None = None,
        on_finished: OnFinished | None = None,
    ) -> NodeResult:
        """Run one node through `BeforeNodeCallEvent`, the node itself, and `AfterNodeCallEvent`.

        ``answers`` resumes a node that was interrupted from inside; its hooks already passed and do not run again.
        A node's exception, a timeout and `cancel_node` all give a FAILED result; they never raise (a
        `SessionException` does: the orchestration can no longer be persisted). ``on_finished`` records a node
        that finished (completed or failed) in the orchestration's state before `AfterNodeCallEvent`, where a
        session manager persists that state, as Strands does; an interrupted node's result is returned only.
        """
        finish = functools.partial(self._finish, on_finished=on_finished)
        node_type = "agent" if isinstance(executor, Agent) else "multiagent"
        if emit is not None:
            emit({"type": "multiagent_node_start", "node_id": node_id, "node_type": node_type})
        started = time.perf_counter()
        if answers is None:
            before = BeforeNodeCallEvent(self, node_id, invocation_state)
            _, raised = await self.hooks.invoke_callbacks_async(before)
            if raised:
                return self._interrupted(node_id, raised, started, emit)
            if self._interrupt_state.interrupts:  # answers to this node's hooks are spent once the node has run
                step = f"node cancelled: {before.cancel_node}" if before.cancel_node else "node ran"
                self._interrupt_state.settle(node_interrupt_prefix(node_id), step)
            if before.cancel_node:
                self._spend_hook_answers(node_id)
                message = before.cancel_node if isinstance(before.cancel_node, str) else "node cancelled by user"
                if emit is not None:
                    emit({"type": "multiagent_node_cancel", "node_id": node_id, "message": message})
                failed = NodeResult(RuntimeError(message), _ms(started), Status.FAILED, execution_count=1)
                return await finish(node_id, failed, invocation_state, emit)

        prompt: Any
        if answers is not None:
            prompt = answers
        else:  # a node cut short by a crash goes on with its batch (see `in_flight`); others get their input
            prompt = None if in_flight(executor) else node_input
        mark = audit_length(executor)
        try:
            with anyio.fail_after(node_timeout) if node_timeout else nullcontext():
                outcome = await self._invoke_executor(node_id, executor, prompt, invocation_state, emit)
        except SessionException:
            # The orchestration can no longer be persisted (a tool's intent could not be written, the session was
            # taken over): nothing more may run, so this stops the orchestration instead of failing one node.
            self._settle_node(node_id, executor, answers, mark, None)
            raise
        except TimeoutError:
            error = TimeoutError(f"Node '{node_id}' execution timed out after {node_timeout}s")
            self._node_ran(node_id, answers)
            self._settle_node(node_id, executor, answers, mark, f"node failed: {error}")
            result = NodeResult(error, _ms(started), Status.FAILED, execution_count=1)
            return await finish(node_id, result, invocation_state, emit)
        except Exception as exc:
            self._node_ran(node_id, answers)
            self._settle_node(node_id, executor, answers, mark, f"node failed: {type(exc).__name__}: {exc}")
            result = NodeResult(exc, _ms(started), Status.FAILED, execution_count=1)
            return await finish(node_id, result, invocation_state, emit)
        self._node_ran(node_id, answers)

        if isinstance(outcome, AgentResult):
            usage = outcome.metrics.accumulated_usage
            metrics = outcome.metrics.accumulated_metrics
            inner = list(outcome.interrupts or ()) if outcome.stop_reason == "interrupt" else []
            status = Status.FAILED if outcome.stop_reason == "cancelled" else Status.COMPLETED
            count = 1
        else:
            usage, metrics, count = outcome.accumulated_usage, outcome.accumulated_metrics, outcome.execution_count
            inner = list(outcome.interrupts) if outcome.status == Status.INTERRUPTED else []
            status = outcome.status if outcome.status in (Status.COMPLETED, Status.FAILED) else Status.COMPLETED
        fallback = "node interrupted again" if inner else f"node {status.value}"
        # A node that only replayed answers it had already applied ran nothing: its outcome is on record already.
        self._settle_node(node_id, executor, answers, mark, None if outcome.replayed else fallback)
        if inner:
            adopted = self._adopt(node_id, inner)
            result = NodeResult(
                outcome, _ms(started), Status.INTERRUPTED, copy.copy(usage), copy.copy(metrics), count, adopted
            )
            if emit is not None:
                emit({"type": "multiagent_node_interrupt", "node_id": node_id, "interrupts": adopted})
                emit({"type": "multiagent_node_stop", "node_id": node_id, "node_result": result})
            return result
        result = NodeResult(outcome, _ms(started), status, copy.copy(usage), copy.copy(metrics), count)
        return await finish(node_id, result, invocation_state, emit)

    def _settle_node(
        self,
        node_id: str,
        executor: Any,
        answers: list[InterruptResponseContent] | None,
        mark: int,
        fallback: str | None,
    ) -> None:
        """Audit what ran in a node: after the answers it was resumed with, and any tool an earlier process left.

        ``fallback`` is the outcome of an answered interrupt the node recorded nothing for (None: record none).
        """
        answered = [block["interruptResponse"]["interruptId"] for block in answers or ()]
        routes = self._interrupt_state.context.get(_ROUTES, {})
        settle_node_answers(self._interrupt_state, routes, node_id, executor, answered, mark, fallback)

    def _interrupted(self, node_id: str, raised: list[Interrupt], started: float, emit: Emit | None) -> NodeResult:
        placeholder = AgentResult("interrupt", {"role": "assistant", "content": []}, interrupts=raised)
        result = NodeResult(placeholder, _ms(started), Status.INTERRUPTED, interrupts=list(raised))
        if emit is not None:
            emit({"type": "multiagent_node_interrupt", "node_id": node_id, "interrupts": raised})
            emit({"type": "multiagent_node_stop", "node_id": node_id, "node_result": result})
        return result

    async def _finish(
        self,
        node_id: str,
        result: NodeResult,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        on_finished: OnFinished | None = None,
    ) -> NodeResult:
        if on_finished is not None:
            on_finished(result)
        if emit is not None:
            emit({"type": "multiagent_node_stop", "node_id": node_id, "node_result": result})
        await self.hooks.invoke_callbacks_async(AfterNodeCallEvent(self, node_id, invocation_state))
        return result

    async def _invoke_executor(
        self, node_id: str, executor: Any, prompt: Any, invocation_state: dict[str, Any], emit: Emit | None
    ) -> AgentResult | MultiAgentResult:
        node_emit: Emit | None = None
        if emit is not None:

            def node_emit(event: dict[str, Any]) -> None:
                emit({"type": "multiagent_node_stream", "node_id": node_id, "event": event})

        outcome: AgentResult | MultiAgentResult
        if isinstance(executor, Agent) and _overrides_entry_points(executor):
            # A subclass that overrides stream_async or invoke_async (as Strands' own tests do) runs through them.
            outcome = await _invoke_overridden(executor, prompt, dict(invocation_state), node_emit)
            final: dict[str, Any] = {"result": outcome}
        elif isinstance(executor, Agent):
            handler = executor._handler_emit()
            outcome = await executor._invoke(prompt, dict(invocation_state), _chain(handler, node_emit))
            final = {"result": outcome}
        else:
            outcome = await executor._execute(prompt, dict(invocation_state), node_emit)
            final = {"type": "multiagent_result", "result": outcome}
        if node_emit is not None:
            node_emit(final)  # the node's own final event, as its stream_async would end
        return outcome


def _overrides_entry_points(agent: Agent) -> bool:
    cls = type(agent)
    if cls is Agent:
        return False
    return cls.stream_async is not Agent.stream_async or cls.invoke_async is not Agent.invoke_async


async def _invoke_overridden(
    agent: Agent, prompt: Any, invocation_state: dict[str, Any], node_emit: Emit | None
) -> AgentResult:
    """Run an Agent subclass node through its own stream_async (as Strands does) or, failing that, invoke_async."""
    if type(agent).stream_async is not Agent.stream_async:
        result: Any = None
        events: Any = agent.stream_async(prompt, invocation_state=invocation_state)
        async with aclosing(events):
            async for event in events:
                if isinstance(event, dict) and "result" in event:
                    result = event["result"]
                elif node_emit is not None:
                    node_emit(event)
    else:
        result = await agent.invoke_async(prompt, invocation_state=invocation_state)
    if not isinstance(result, AgentResult):
        raise TypeError(
            f"{type(agent).__name__} produced {type(result).__name__} instead of an AgentResult; its stream_async "
            "must end with {'result': AgentResult(...)} and its invoke_async must return one"
        )
    return result


def _chain(first: Emit | None, second: Emit | None) -> Emit | None:
    if first is None or second is None:
        return first or second

    def both(event: dict[str, Any]) -> None:
        first(event)
        second(event)

    return both


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def accumulate(total_usage: Any, total_metrics: Any, result: NodeResult) -> None:
    """Add a node result's usage and latency into running totals."""
    for key, value in result.accumulated_usage.items():
        if isinstance(value, int):
            total_usage[key] = total_usage.get(key, 0) + value
    total_metrics["latencyMs"] = total_metrics.get("latencyMs", 0) + result.accumulated_metrics.get("latencyMs", 0)


__all__ = [
    "InitialState",
    "Orchestrator",
    "accumulate",
    "restore_executor",
    "snapshot_executor",
    "zero_metrics",
    "zero_usage",
]
