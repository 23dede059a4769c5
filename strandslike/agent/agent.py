"""`Agent`: the façade that configures a run and hands it to the event loop."""

import functools
import inspect
import threading
import types
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._event_loop import append_message, run_cycles
from .._identifier import validate_id
from .._streams import iterate_events
from .._sync import run_sync
from .._trace import trace_attribute_values
from ..hooks.events import AfterInvocationEvent, AgentInitializedEvent, BeforeInvocationEvent
from ..hooks.registry import PROJECT, HookOrder, HookProvider, HookRegistry
from ..interrupt import Interrupt, NotInterruptedError
from ..interrupt._state import PendingToolExecution, _InterruptState
from ..models.model import Model
from ..telemetry.spans import current_tracer
from ..tools.executors._executor import Emit, ToolExecutor
from ..tools.executors.concurrent import ConcurrentToolExecutor
from ..tools.journal import ToolJournal
from ..tools.registry import ToolRegistry
from ..types.agent import AgentInput, ConcurrentInvocationMode
from ..types.content import Message, Messages, SystemContentBlock, split_system_prompt
from ..types.exceptions import ConcurrencyException, ModelNotConfiguredError
from ..types.tools import AgentTool
from ._concurrency import ConcurrencyController
from ._metrics import EventLoopMetrics
from ._model_setup import DEFAULT_RETRY_STRATEGY, resolve_model, resolve_retry_strategy
from ._prompt import dangling_tool_uses, initial_messages, is_interrupt_responses, prompt_to_messages
from ._retry import ModelRetryStrategy
from ._structured import finish_structured_output, start_structured_output, structured_output_async
from .agent_result import AgentResult
from .conversation_manager.conversation_manager import ConversationManager
from .conversation_manager.sliding_window_conversation_manager import SlidingWindowConversationManager
from .state import AgentState

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..interventions.handler import InterventionHandler
    from ..interventions.registry import InterventionRegistry
    from ..plugins.plugin import Plugin
    from ..plugins.registry import _PluginRegistry
    from ..tools.structured_output import StructuredOutputContext
    from ._resume import AgentResumeChecks
    from ._tool_caller import ToolCaller

T = TypeVar("T", bound="BaseModel")

_DEFAULT_AGENT_ID = "default"
_DEFAULT_NAME = "Strands Agents"


class Agent:
    r"""An agent: a model, tools, hooks and a conversation, run by the event loop.

    Example:
        >>> agent = Agent(model=ScriptedModel([text("hi")]))
        >>> str(agent("hello"))
        'hi\\n'
    """

    def __init__(
        self,
        model: Model | str | None = None,
        messages: Messages | None = None,
        tools: Iterable[Any] | None = None,
        system_prompt: str | list[SystemContentBlock] | None = None,
        callback_handler: Callable[..., Any] | None = None,
        conversation_manager: ConversationManager | None = None,
        record_direct_tool_call: bool = True,
        *,
        agent_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        state: AgentState | dict[str, Any] | None = None,
        hooks: Iterable[Any] | None = None,
        plugins: "Iterable[Plugin] | None" = None,
        interventions: "Iterable[InterventionHandler] | None" = None,
        session_manager: Any = None,
        tool_executor: ToolExecutor | None = None,
        load_entry_points: bool = False,
        partial_resume: Literal["reraise", "refuse"] = "reraise",
        structured_output_model: "type[BaseModel] | None" = None,
        structured_output_prompt: str | None = None,
        retry_strategy: ModelRetryStrategy | Any | None = DEFAULT_RETRY_STRATEGY,
        unfinished_tool_policy: Literal["report", "rerun"] = "report",
        load_tools_from_directory: bool = False,
        trace_attributes: Mapping[str, Any] | None = None,
        concurrent_invocation_mode: ConcurrentInvocationMode | str = ConcurrentInvocationMode.THROW,
    ) -> None:
        """Configure the agent; nothing runs until it is invoked.

        Args:
            model: The model provider; required to invoke (`ScriptedModel` for tests and demos). A string is a
                Bedrock model id, as in Strands: ``Agent(model="<id>")`` builds ``BedrockModel(model_id="<id>")``.
            messages: Initial conversation.
            tools: Tools: ``@tool`` functions or `AgentTool` instances; names must be unique.
            system_prompt: System prompt sent with every model call: a string, or a list of system content blocks
                (text, cache points); `system_prompt` is then their joined text and `system_prompt_content` the
                blocks.
            callback_handler: Called with ``**event`` for every stream event; None for no output.
            conversation_manager: Trims the conversation after each invocation (default: a sliding window of 40
                messages, as in Strands; `NullConversationManager` keeps everything).
            record_direct_tool_call: Whether ``agent.tool.name(...)`` calls are recorded in the history.
            agent_id: Id under which sessions persist this agent (default ``"default"``); validated at once (see
                `strandslike._identifier`: no path separators, controls or invisible characters, at most 128 bytes).
            name: Display name (default ``"Strands Agents"``); node id in a Swarm.
            description: What the agent does, for orchestrators.
            state: Initial `agent.state` (JSON-serializable values only).
            hooks: Hook providers, bare annotated callbacks, or pluggy plugin objects.
            plugins: `Plugin` instances: each one's ``init_agent`` runs, then its ``@hook`` and ``@tool`` methods
                are registered (after ``hooks`` and ``interventions``, as in Strands).
            interventions: `InterventionHandler` instances, evaluated in this order at each lifecycle event (a
                denial skips the ones after it); e.g. `HumanInTheLoop` for approvals.
            session_manager: Persists and restores the agent (a hook provider, registered first).
            tool_executor: How a tool batch is scheduled (default `ConcurrentToolExecutor`).
            load_entry_points: Also attach the plugins installed under the ``strandslike`` entry-point group
                (`Plugin` classes or instances, and pluggy plugins), after ``plugins``.
            partial_resume: What a resume that leaves open interrupts unanswered does: ``"reraise"`` them (Strands)
                or ``"refuse"`` the whole resume with `PartialResumeError` (AG-UI rule 3).
            structured_output_model: A pydantic model every invocation must produce as ``result.structured_output``
                (an invocation's own ``structured_output_model=`` takes precedence).
            structured_output_prompt: The message that asks the model for the structured output when it ended its
                turn without producing it (default: Strands' prompt).
            retry_strategy: Retries throttled model calls (default: ``ModelRetryStrategy()``, 6 attempts with
                backoff from 4 to 240 seconds); None turns retries off.
            unfinished_tool_policy: What a restored session does with a tool whose process died while it ran:
                ``"report"`` it to the model as an error with an unknown outcome, without running it again (the
                default; idempotent tools run again anyway), or ``"rerun"`` every such tool (see
                `docs/exactly-once.md`).
            load_tools_from_directory: Load the tools of ``./tools/*.py`` (as Strands does), and load them again when
                a file is added or changed, at the start of the next invocation.
            trace_attributes: Attributes added to the agent's spans when tracing is on; values that are not
                strings, numbers, booleans or lists of them are dropped, as in Strands.
            concurrent_invocation_mode: ``THROW`` (the default): a second invocation while one runs raises
                `ConcurrencyException`, unless it carries the running one's ``idempotency_token``.
                ``UNSAFE_REENTRANT``: no lock, invocations may overlap, with no guarantee about the result.
        """
        self.model = resolve_model(model)
        self.messages: Messages = initial_messages(messages)
        self.system_prompt = system_prompt
        self.agent_id = _DEFAULT_AGENT_ID if agent_id is None else validate_id(agent_id, "agent")
        self.name = name or _DEFAULT_NAME
        self.description = description
        self.callback_handler = callback_handler
        self.record_direct_tool_call = record_direct_tool_call
        if partial_resume not in ("reraise", "refuse"):
            raise ValueError(f"partial_resume={partial_resume!r} | must be 'reraise' or 'refuse'")
        self.partial_resume = partial_resume
        if unfinished_tool_policy not in ("report", "rerun"):
            raise ValueError(f"unfinished_tool_policy={unfinished_tool_policy!r} | must be 'report' or 'rerun'")
        self.unfinished_tool_policy = unfinished_tool_policy
        self.state = state if isinstance(state, AgentState) else AgentState(state)
        self.tool_registry = ToolRegistry()
        self.tool_registry.process_tools(tools or ())
        self.load_tools_from_directory = load_tools_from_directory
        if load_tools_from_directory:
            self.tool_registry.reload_changed_tools()
        self.trace_attributes = trace_attribute_values(trace_attributes)
        self.tool_executor: ToolExecutor = tool_executor or ConcurrentToolExecutor()
        self.event_loop_metrics = EventLoopMetrics()
        self.conversation_manager: ConversationManager = (
            conversation_manager if conversation_manager is not None else SlidingWindowConversationManager()
        )
        self.session_manager = session_manager
        self.structured_output_model = structured_output_model
        self.structured_output_prompt = structured_output_prompt
        self.retry_strategy = resolve_retry_strategy(retry_strategy)
        self._pending_structured_output: tuple[type[BaseModel], str | None] | None = None
        self.hooks = HookRegistry()
        self._interrupt_state = _InterruptState()
        self._cancel_signal = threading.Event()
        self._concurrency = ConcurrencyController(_invocation_mode(concurrent_invocation_mode))
        self._invocation_lock = self._concurrency.lock  # direct tool calls take it too
        self._model_state: dict[str, Any] = {}
        self._tool_caller: ToolCaller | None = None  # made on first use of `agent.tool`
        # When each tool body started and ended; a session manager attaches itself to make it durable.
        self.tool_journal = ToolJournal(self.agent_id)

        if session_manager is not None:
            self.hooks.add_hook(session_manager)
        self.hooks.add_hook(self.conversation_manager)
        self.hooks.add_hook(self.retry_strategy)
        for hook in hooks or ():
            self._register(hook)
        # Strands' order: hooks, then interventions, then plugins (then, here, installed plugins). Their machinery
        # is imported only for an agent that has some (see `_intervention_registry` and `_plugin_registry`).
        if interventions is not None:
            from ..interventions.registry import InterventionRegistry

            self._intervention_registry = InterventionRegistry(interventions, self.hooks)
        if plugins is not None:
            self._plugin_registry.add_all(plugins)
        if load_entry_points:
            from ..plugins._entry_points import load_entry_point_plugins

            load_entry_point_plugins(self, self._plugin_registry)
        if _has_delegating_tool(self):  # registered only when used: its hooks would build events for every agent
            from ._agent_as_tool import _Delegation

            self.hooks.add_hook(_Delegation())
        self.hooks.invoke_callbacks(AgentInitializedEvent(self))

    @functools.cached_property
    def _intervention_registry(self) -> "InterventionRegistry":
        """The agent's intervention handlers (none unless ``interventions=`` was given)."""
        from ..interventions.registry import InterventionRegistry

        return InterventionRegistry((), self.hooks)

    @functools.cached_property
    def _plugin_registry(self) -> "_PluginRegistry":
        """The plugins attached to the agent, made on first use."""
        from ..plugins.registry import _PluginRegistry

        return _PluginRegistry(self)

    def _register(self, hook: Any) -> None:
        if isinstance(hook, HookProvider):
            self.hooks.add_hook(hook)
        elif _has_hookimpls(hook):
            self.hooks.register_plugin(hook)
        elif callable(hook):
            self.hooks.add_callback(None, hook)
        else:
            raise ValueError(f"Invalid hook: {hook!r}. Must be a HookProvider instance or a callable hook callback.")

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        preserve_context: bool = False,
        delegate: bool = False,
    ) -> AgentTool:
        """Make this agent a tool of another agent; the tool takes one ``input`` string (Strands 1.62).

        An interrupt raised inside this agent reaches the outer agent's caller (under an id namespaced by the
        tool call); answering it resumes this agent where it stopped, also from a new process when the outer
        agent has a session manager.

        Args:
            name: The tool name (letters, digits, ``_`` or ``-``, at most 64); default: the agent's name.
            description: The tool description; default: the agent's description, or a generic one.
            preserve_context: Keep this agent's conversation across calls. When False (the default) each call
                starts from the messages and state the agent had when the tool was made, and an interrupted turn
                is kept by the outer agent, so it resumes after a restart; when True the agent needs its own
                session manager for that.
            delegate: End the outer agent's turn with this tool's answer, without another model call; the tool
                must then be the only one called in its turn.

        Raises:
            ValueError: ``preserve_context`` is False and the agent has a session manager.
        """
        from ._agent_as_tool import _AgentAsTool

        return _AgentAsTool(
            self, name=name or self.name, description=description, preserve_context=preserve_context, delegate=delegate
        )

    def cleanup(self) -> None:
        """Release the agent's tool providers (Strands): each is told this agent no longer uses it.

        Call it when the agent is done; it also runs when the agent is garbage collected.
        """
        self.tool_registry.cleanup()

    def __del__(self) -> None:
        # Also called when the constructor raised, before tool_registry was set (as in Strands).
        registry = self.__dict__.get("tool_registry")
        if registry is not None and registry._tool_providers:
            registry.cleanup()

    @property
    def tool(self) -> "ToolCaller":
        """Call tools directly: ``agent.tool.name(**input)``."""
        caller = self._tool_caller
        if caller is None:
            from ._tool_caller import ToolCaller

            caller = self._tool_caller = ToolCaller(self)
        return caller

    @property
    def interrupt_audit(self) -> list[dict[str, Any]]:
        """The life of every interrupt of this agent: raised, answered, and what then ran (oldest first)."""
        return [dict(entry) for entry in self._interrupt_state.audit]

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts this agent waits on (not answered yet), in the order they were raised.

        Empty when the agent is not interrupted. Answer them with their builders, e.g.
        ``agent([i.resume("y") for i in agent.pending_interrupts])``; after a restart from a session this is
        how to find what the agent was waiting for.
        """
        state = self._interrupt_state
        return state.unanswered() if state.activated else []

    def _resume_checks(self) -> "AgentResumeChecks":
        from ._resume import AgentResumeChecks

        return AgentResumeChecks(self)

    @property
    def system_prompt(self) -> str | None:
        """The system prompt as text: the prompt string, or the joined text blocks of a block prompt (Strands)."""
        return self._system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | list[SystemContentBlock] | None) -> None:
        self._system_prompt, self._system_prompt_content = split_system_prompt(value)

    @property
    def system_prompt_content(self) -> list[SystemContentBlock] | None:
        """The system prompt as content blocks (a copy of the list), or None when there is no system prompt."""
        content = self._system_prompt_content
        return list(content) if content is not None else None

    @property
    def concurrent_invocation_mode(self) -> ConcurrentInvocationMode:
        """The concurrency mode the agent was built with."""
        return self._concurrency.mode

    @property
    def tool_names(self) -> list[str]:
        """Names of the agent's tools."""
        return self.tool_registry.tool_names

    def add_hook(
        self, callback: Callable[..., Any], event_type: Any = None, *, order: float = HookOrder.DEFAULT
    ) -> None:
        """Register one hook callback (event types inferred from its annotation when not given)."""
        self.hooks.add_callback(event_type, callback, order=order)

    def cancel(self) -> None:
        """Ask the running invocation to stop: the model stream ends with ``stop_reason="cancelled"``."""
        self._cancel_signal.set()

    def __call__(
        self,
        prompt: AgentInput = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: "type[BaseModel] | None" = None,
        structured_output_prompt: str | None = None,
        idempotency_token: Any = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Blocking twin of `invoke_async`; works with and without a running event loop."""
        return run_sync(
            self.invoke_async,
            prompt,
            invocation_state=invocation_state,
            structured_output_model=structured_output_model,
            structured_output_prompt=structured_output_prompt,
            idempotency_token=idempotency_token,
            **kwargs,
        )

    async def invoke_async(
        self,
        prompt: AgentInput = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: "type[BaseModel] | None" = None,
        structured_output_prompt: str | None = None,
        idempotency_token: Any = None,
        **kwargs: Any,
    ) -> AgentResult:
        """Run the agent on ``prompt`` (or resume it with interrupt responses) and return the result.

        Args:
            prompt: A string, content blocks, messages, ``interruptResponse`` blocks, or None.
            invocation_state: State shared with hooks and tools for this call; your dict is not mutated.
            structured_output_model: A pydantic model the run must produce as ``result.structured_output``
                (overrides the agent's). A resume continues the structured output of the run it resumes.
            structured_output_prompt: Overrides the agent's ``structured_output_prompt`` for this call.
            idempotency_token: Deduplicates a retried request (``THROW`` mode; matched with ``==``): while an
                invocation with an equal token runs, this call waits for it and returns its result (its events are
                not streamed again; the callback handler gets the result) or raises its error.
            **kwargs: Merged into the invocation state (Strands' older form).

        Raises:
            ConcurrencyException: The agent is already running (another token, or none).
            IdempotencyAbortedError: The invocation this call waited on ended without a result.
            PendingInterruptsError: The agent is interrupted and ``prompt`` is not interrupt responses.
            UnknownInterruptError: A response names an unknown interrupt id.
            NotInterruptedError: Interrupt responses were given but the agent is not interrupted.
            InvalidPromptError: ``prompt`` is not a valid prompt, or holds something no session could store.
            InterruptError: Any other refused resume (each with a stable ``code``); nothing was applied.
            ModelNotConfiguredError: The agent has no model.
            StructuredOutputValidationError: The model's structured output kept failing validation.
        """
        emit = self._handler_emit()
        result = await self._invoke(
            prompt,
            _merge(invocation_state, kwargs),
            emit,
            (structured_output_model, structured_output_prompt),
            idempotency_token,
        )
        if emit is not None:
            emit({"result": result})
        return result

    def structured_output(self, output_model: type[T], prompt: AgentInput = None) -> T:
        """Blocking twin of `structured_output_async`."""
        return run_sync(self.structured_output_async, output_model, prompt)

    async def structured_output_async(self, output_model: type[T], prompt: AgentInput = None) -> T:
        """Ask the model for one ``output_model`` instance about the conversation, without changing it.

        The prompt (if any) is sent after the history but not added to it; the model is asked through its
        `Model.structured_output`. Prefer ``agent(prompt, structured_output_model=...)``, which keeps the exchange in
        the history, runs tools and retries invalid answers.

        Args:
            output_model: The pydantic model to produce.
            prompt: Extra input for this request only; None uses the history alone.

        Returns:
            The validated instance.

        Raises:
            RuntimeError: The agent is interrupted (Strands' error).
            ValueError: There is neither history nor a prompt.
            ConcurrencyException: The agent is already running.
        """
        return await structured_output_async(self, output_model, prompt)

    async def stream_async(
        self,
        prompt: AgentInput = None,
        *,
        invocation_state: dict[str, Any] | None = None,
        structured_output_model: "type[BaseModel] | None" = None,
        structured_output_prompt: str | None = None,
        idempotency_token: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run the agent and yield its events as they happen; the last event is ``{"result": AgentResult}``.

        Events: ``{"data": text, "delta": ...}`` for text, ``{"current_tool_use": ...}`` while a tool call
        streams in, ``{"message": message}`` for each appended message, ``{"tool_stream_event": ...}``,
        ``{"tool_result": ...}``, ``{"tool_interrupt_event": ...}`` when a tool call is interrupted,
        ``{"interrupt_event": {"interrupts": [...]}}`` when the run pauses, raw ``{"event": chunk}`` model events,
        and the final ``{"result": ...}``. Iterate to the end, or wrap the call in ``contextlib.aclosing`` if you
        may stop early.
        """
        handler = self._handler_emit()
        merged = _merge(invocation_state, kwargs)

        async def run(send: Emit) -> AgentResult:
            emit: Emit = send
            if handler is not None:

                def emit(event: dict[str, Any]) -> None:
                    handler(event)
                    send(event)

            result = await self._invoke(
                prompt, merged, emit, (structured_output_model, structured_output_prompt), idempotency_token
            )
            if handler is not None:
                handler({"result": result})
            return result

        # Close the inner generator here, in this task, when the consumer stops early.
        async with aclosing(iterate_events(run, lambda result: {"result": result})) as events:
            async for event in events:
                yield event

    def _handler_emit(self) -> Emit | None:
        handler = self.callback_handler
        if handler is None:
            return None

        def emit(event: dict[str, Any]) -> None:
            handler(**event)

        return emit

    async def _invoke(
        self,
        prompt: AgentInput,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        structured_request: "tuple[type[BaseModel] | None, str | None]" = (None, None),
        idempotency_token: Any = None,
    ) -> AgentResult:
        tracer = current_tracer()
        if tracer is None:  # tracing off (the default): no span, no cost
            return await self._invoke_once(prompt, invocation_state, emit, structured_request, idempotency_token)
        return await tracer.trace_agent(
            self, self._invoke_once, prompt, invocation_state, emit, structured_request, idempotency_token
        )

    async def _invoke_once(
        self,
        prompt: AgentInput,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        structured_request: "tuple[type[BaseModel] | None, str | None]",
        idempotency_token: Any,
    ) -> AgentResult:
        concurrency = self._concurrency
        if idempotency_token is None and concurrency.mode is ConcurrentInvocationMode.THROW:  # the usual call
            if not concurrency.lock.acquire(blocking=False):
                raise ConcurrencyException(
                    "Agent is already processing a request. Concurrent invocations are not supported."
                )
            try:
                return await self._run_invocation(prompt, invocation_state, emit, structured_request)
            finally:
                concurrency.lock.release()
        begin = concurrency.begin(idempotency_token)
        if begin.waiting_on is not None:  # a duplicate of the invocation in flight: its outcome is ours
            return await begin.waiting_on.outcome()
        if not begin.lock_acquired:
            refused = ConcurrencyException(
                "Agent is already processing a request. Concurrent invocations are not supported."
            )
            concurrency.complete(begin.registered_token, error=refused)
            raise refused
        result: AgentResult | None = None
        try:
            result = await self._run_invocation(prompt, invocation_state, emit, structured_request)
            return result
        except Exception as exc:
            concurrency.complete(begin.registered_token, error=exc)
            raise
        finally:
            concurrency.complete(begin.registered_token, result=result)  # no result: waiters learn it was aborted
            concurrency.release()

    async def _run_invocation(
        self,
        prompt: AgentInput,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        structured_request: "tuple[type[BaseModel] | None, str | None]",
    ) -> AgentResult:
        if self.model is None:
            raise ModelNotConfiguredError()
        if self._cancel_signal.is_set():  # clear() takes the event's lock: only when needed
            self._cancel_signal.clear()
        if self.load_tools_from_directory:
            self.tool_registry.reload_changed_tools()
        state = {
            **invocation_state,
            "agent": self,
            "request_state": dict(invocation_state.get("request_state", {})),
        }
        if not self._interrupt_state.activated and is_interrupt_responses(prompt):
            from ._resume import replayed_result

            replay = replayed_result(self, prompt)
            if replay is not None:
                return replay  # the same answers already ran to completion: nothing runs twice
        if emit is not None:
            emit({"init_event_loop": True})
        structured = start_structured_output(self, *structured_request)
        try:
            current: AgentInput = prompt
            while True:
                result, resume = await self._pass(current, state, emit, structured)
                if resume is None:
                    return result
                current = resume
        finally:
            finish_structured_output(self, structured)

    def _input_messages(self, prompt: AgentInput) -> Messages:
        """Apply a resume, or convert a new prompt into the messages to append; validate before changing anything."""
        interrupts = self._interrupt_state
        if interrupts.activated:
            answers = interrupts.parse_responses(
                prompt, self._resume_checks(), refuse_partial=self.partial_resume == "refuse"
            )
            interrupts.apply(answers, prompt)
            return []
        if is_interrupt_responses(prompt):
            raise NotInterruptedError()
        if prompt is None and dangling_tool_uses(self.messages):
            # A trailing tool use without results: run those tools without calling the model (Strands).
            interrupts.pending_tool_execution = PendingToolExecution(self.messages[-1])
            interrupts.activate()
            return []
        return prompt_to_messages(prompt, self.messages, self.tool_journal, interrupts)

    async def _pass(
        self,
        prompt: AgentInput,
        state: dict[str, Any],
        emit: Emit | None,
        structured: "StructuredOutputContext | None" = None,
    ) -> tuple[AgentResult, AgentInput]:
        messages = self._input_messages(prompt)
        hooks = self.hooks
        result: AgentResult | None = None
        final: AgentResult
        resume: AgentInput = None
        prepared = messages
        try:
            cancel: bool | str = False
            if hooks._callbacks(BeforeInvocationEvent):  # events nobody listens to are not built
                before = BeforeInvocationEvent(self, state, messages)
                await hooks.invoke_callbacks_async(before)
                cancel, messages = before.cancel, before.messages or []
            if cancel:
                repairs = [block for message in prepared for block in message["content"] if "toolResult" in block]
                if repairs:  # a trailing tool use still needs its results before any assistant message
                    await append_message(self, {"role": "user", "content": repairs}, emit)
                text = cancel if isinstance(cancel, str) else "invocation denied by hook"
                denied: Message = {"role": "assistant", "content": [{"text": text}]}
                await append_message(self, denied, emit)
                final = AgentResult("end_turn", denied, self.event_loop_metrics, state["request_state"])
            else:
                for message in messages:
                    await append_message(self, message, emit)
                final = result = await run_cycles(self, state, emit, structured)
                self.conversation_manager.apply_management(self)
        finally:
            if hooks._callbacks(AfterInvocationEvent):
                after = AfterInvocationEvent(self, state, result)
                await hooks.invoke_callbacks_async(after)
                resume = after.resume
        return final, resume


def _invocation_mode(mode: Any) -> ConcurrentInvocationMode:
    try:
        return ConcurrentInvocationMode(mode)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in ConcurrentInvocationMode)
        raise ValueError(
            f"concurrent_invocation_mode={mode!r} | must be a ConcurrentInvocationMode ({choices})"
        ) from None


def _merge(invocation_state: dict[str, Any] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    if invocation_state is not None and not isinstance(invocation_state, dict):
        raise TypeError(f"invocation_state must be a dict, got {type(invocation_state).__name__}")
    return {**(invocation_state or {}), **kwargs}


def _has_delegating_tool(agent: Agent) -> bool:
    return any(
        tool.tool_type == "agent" and getattr(tool, "delegate", False) is True
        for tool in agent.tool_registry.registry.values()
    )


def _has_hookimpls(obj: Any) -> bool:
    marker = f"{PROJECT}_impl"
    # A plain function's only non-dunder attributes are those set on it (its __dict__): reading just those spares
    # the ~35 getattr_static calls of dir() for the usual hook, a function, on every agent built.
    names = obj.__dict__ if isinstance(obj, types.FunctionType) else dir(obj)
    return any(
        getattr(inspect.getattr_static(obj, name, None), marker, None) is not None
        for name in names
        if not name.startswith("__")
    )
