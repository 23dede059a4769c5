"""`SessionManager`: a hook provider that restores an agent from storage and persists it as it runs."""

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..hooks.events import (
    AfterInvocationEvent,
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    MessageAddedEvent,
    MultiAgentInitializedEvent,
)
from ..hooks.registry import HookProvider, HookRegistry
from ..types.content import Message

if TYPE_CHECKING:
    from ..agent.agent import Agent

T = TypeVar("T")


class SessionManager(HookProvider, ABC):
    """Restores an agent when it is built and persists it on its lifecycle events (Strands-compatible).

    Subclasses implement the synchronous Strands methods (`initialize`, `append_message`, `sync_agent`,
    `redact_latest_message`); the manager calls them from async hooks and, when ``blocking_io`` is True, in a
    worker thread so that storage never stalls the event loop. `AgentInitializedEvent` is the exception: it
    fires inside ``Agent.__init__``, which is synchronous.

    Attributes:
        session_id: The session this manager persists to.
    """

    session_id: str
    blocking_io: bool = True

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Wire the manager to the agent's and orchestrators' lifecycle events."""
        registry.add_callback(AgentInitializedEvent, lambda event: self.initialize(event.agent))
        registry.add_callback(BeforeInvocationEvent, self._on_before_invocation)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)
        registry.add_callback(MultiAgentInitializedEvent, lambda event: self.initialize_multi_agent(event.source))
        registry.add_callback(AfterNodeCallEvent, self._on_multi_agent_changed)
        registry.add_callback(AfterMultiAgentInvocationEvent, self._on_multi_agent_changed)

    async def _io(self, function: Callable[..., T], *args: Any) -> T:
        if self.blocking_io:
            return await anyio.to_thread.run_sync(function, *args)
        return function(*args)

    async def _on_before_invocation(self, event: BeforeInvocationEvent) -> None:
        await self._io(self.begin_invocation, event.agent)

    async def _on_message_added(self, event: MessageAddedEvent) -> None:
        await self._io(self._message_added, event.message, event.agent)

    def _message_added(self, message: Message, agent: "Agent") -> None:
        self.append_message(message, agent)
        self.sync_agent(agent)

    async def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        await self._io(self.end_invocation, event.agent)

    async def _on_multi_agent_changed(self, event: AfterNodeCallEvent | AfterMultiAgentInvocationEvent) -> None:
        await self._io(self.sync_multi_agent, event.source)

    def begin_invocation(self, agent: "Agent", **kwargs: Any) -> None:
        """Prepare to persist an invocation (e.g. take a lock); the default does nothing."""

    def end_invocation(self, agent: "Agent", **kwargs: Any) -> None:
        """Persist the agent at the end of an invocation; the default calls `sync_agent`."""
        self.sync_agent(agent)

    @abstractmethod
    def redact_latest_message(self, redact_message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Replace the content of the latest persisted message."""

    @abstractmethod
    def append_message(self, message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Persist a message appended to the agent's conversation."""

    @abstractmethod
    def sync_agent(self, agent: "Agent", **kwargs: Any) -> None:
        """Persist the agent's state if it changed."""

    @abstractmethod
    def initialize(self, agent: "Agent", **kwargs: Any) -> None:
        """Restore ``agent`` from the session, or add it to the session if it is new."""

    def begin_multi_agent_invocation(self, source: Any, **kwargs: Any) -> None:
        """Claim an orchestrator's session for one invocation, as `begin_invocation` does for an agent.

        A server calls it before it runs or resumes a Graph or Swarm it restored, and `end_multi_agent_invocation`
        after. The default claims nothing: orchestrator state is guarded within one process only (by the
        orchestrator's own lock) until a session manager implements the claim here.
        """

    def end_multi_agent_invocation(self, source: Any, **kwargs: Any) -> None:
        """Release what `begin_multi_agent_invocation` claimed; the default does nothing.

        The orchestrator's state is persisted by `sync_multi_agent` as it runs.
        """

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Persist an orchestrator's state."""
        raise NotImplementedError(f"{type(self).__name__} does not persist multi-agent orchestrators")

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Restore an orchestrator from the session, or add it if it is new."""
        raise NotImplementedError(f"{type(self).__name__} does not persist multi-agent orchestrators")
