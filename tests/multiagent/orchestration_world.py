"""A storage and the side effects of tools shared by several "processes" of Graph and Swarm runs (in-process).

A process dying inside a node's tool body is simulated by a `BaseException` the tool raises (`Died`): like a
SIGKILL it skips everything after the body, and from that moment the storage refuses every write (the "dead"
process writes nothing more), so the log holds exactly what was durable before the body started. The
real-process SIGKILL versions of these checks are in `test_multiagent_crash.py` and
`test_multiagent_duplicates.py`.
"""

import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel
from strandslike.models.scripted import ScriptedTurn
from strandslike.multiagent import Graph, GraphBuilder, Swarm
from strandslike.session import FileSessionManager, InMemorySessionRepository, LogRef, RepositorySessionManager
from strandslike.session.session_repository import LogClaim

SESSION = "orders"
KEY_NAMESPACE = uuid.UUID("6f0d4a52-9a3e-5d4c-8f51-2b7c1e0a9d11")  # strandslike.tools.journal's


class Died(BaseException):
    """Stands for the death of the process inside a tool body."""


def expected_key(scope: str, tool_use_id: str) -> str:
    """The idempotency key of a tool use under ``scope``, computed independently of strandslike."""
    return str(uuid.uuid5(KEY_NAMESPACE, f"{scope}\x00{tool_use_id}"))


class RecordingRepository(InMemorySessionRepository):
    """The in-memory store, recording every append (kinds of its records, durable) and refusing them once dead."""

    def __init__(self, world: "World") -> None:
        super().__init__()
        self.world = world
        self.appends: list[tuple[list[str], bool]] = []

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        if self.world.dead:
            raise Died
        super().append_log(claim, records, durable=durable)
        self.appends.append(([record["k"] for record in records], durable))
        self.world.appended(records)


class DyingFileSessionManager(FileSessionManager):
    """The file store, refusing every append once the world's process died."""

    def __init__(self, world: "World", *args: Any, **kwargs: Any) -> None:
        self.world = world
        super().__init__(*args, **kwargs)

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        if self.world.dead:
            raise Died
        super().append_log(claim, records, durable=durable, **kwargs)
        self.world.appended(records)


def approve_payments(event: BeforeToolCallEvent) -> None:
    """A node agent's approval hook: ``pay`` and ``lookup`` run only once a human said "y"."""
    if event.tool_use["name"] not in ("pay", "lookup"):
        return
    if event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


class World:
    """One storage (a directory, or one in-memory repository) and the tools' side effects, shared by 'processes'."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.repository = RecordingRepository(self)
        self.runs: list[dict[str, Any]] = []  # every tool body that started: tool, tool-use id, idempotency key
        self.die_in: set[str] = set()  # tool-use ids whose body kills the "process"
        self.dead = False
        self.models: dict[str, ScriptedModel] = {}
        # A tool body whose id is in ``gates`` waits until a record the predicate accepts has been appended.
        self.gates: dict[str, Callable[[dict[str, Any]], bool]] = {}
        self._written: list[dict[str, Any]] = []
        self._condition = threading.Condition()

    def appended(self, records: Sequence[dict[str, Any]]) -> None:
        with self._condition:
            self._written.extend(records)
            self._condition.notify_all()

    def wait_for_record(self, accept: Callable[[dict[str, Any]], bool]) -> None:
        with self._condition:
            if not self._condition.wait_for(lambda: any(accept(record) for record in self._written), timeout=30):
                raise AssertionError("the record a tool waited for was never written")

    def manager(self, session_id: str = SESSION) -> Any:
        self.dead = False  # a fresh process
        if self.kind == "file":
            return DyingFileSessionManager(self, session_id, storage_dir=self.tmp_path)
        return RepositorySessionManager(session_id, self.repository)

    def records(self, owner_id: str, session_id: str = SESSION) -> list[dict[str, Any]]:
        """The records of an orchestrator's log, as another process would read them."""
        ref = LogRef(session_id, "multi_agent", owner_id)
        if self.kind == "file":
            stored = FileSessionManager(session_id, storage_dir=self.tmp_path).read_log(ref)
        else:
            stored = self.repository.read_log(ref)
        return [] if stored is None else list(stored.records)

    def tools(self) -> list[Any]:
        world = self

        def body(name: str, tool_context: ToolContext) -> str:
            tool_use_id = tool_context.tool_use["toolUseId"]
            world.runs.append({"tool": name, "id": tool_use_id, "key": tool_context.idempotency_key})
            if tool_use_id in world.gates:
                world.wait_for_record(world.gates.pop(tool_use_id))
            if tool_use_id in world.die_in:
                world.die_in.discard(tool_use_id)
                world.dead = True
                raise Died
            return f"{name} done"

        @tool(context=True)
        def pay(amount: int, tool_context: ToolContext) -> str:
            """Pay an amount.

            Args:
                amount: How much.
            """
            return body("pay", tool_context)

        @tool(context=True, idempotent=True)
        def lookup(key: str, tool_context: ToolContext) -> str:
            """Look a key up (safe to repeat).

            Args:
                key: The key.
            """
            return body("lookup", tool_context)

        return [pay, lookup]

    def agent(self, name: str, turns: list[ScriptedTurn], **kwargs: Any) -> Agent:
        kwargs.setdefault("hooks", [approve_payments])
        model = ScriptedModel(turns)
        self.models[name] = model
        return Agent(name=name, model=model, tools=self.tools(), callback_handler=None, **kwargs)

    def graph(
        self, turns: dict[str, list[ScriptedTurn]], *, edges: Sequence[tuple[str, str]] = (), **kwargs: Any
    ) -> Graph:
        """A graph of one agent per entry of ``turns`` (in order), on a fresh manager of this world."""
        options = _node_options(kwargs)
        builder = GraphBuilder()
        for name, script in turns.items():
            builder.add_node(self.agent(name, script, **options), name)
        for source, target in edges:
            builder.add_edge(source, target)
        builder.set_graph_id(kwargs.pop("graph_id", "flow"))
        builder.set_session_manager(kwargs.pop("session_manager", None) or self.manager())
        for key, value in kwargs.items():
            getattr(builder, key)(value)
        return builder.build()

    def swarm(self, turns: dict[str, list[ScriptedTurn]], **kwargs: Any) -> Swarm:
        """A swarm of one agent per entry of ``turns`` (the first is the entry point), on a fresh manager."""
        options = _node_options(kwargs)
        agents = [self.agent(name, script, **options) for name, script in turns.items()]
        return Swarm(agents, session_manager=self.manager(), id="team", **kwargs)


def _node_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the node agents' options out of an orchestrator's keyword arguments."""
    options: dict[str, Any] = {"unfinished_tool_policy": kwargs.pop("unfinished_tool_policy", "report")}
    if "node_hooks" in kwargs:
        options["hooks"] = kwargs.pop("node_hooks")
    return options


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    """Every tool result in an agent's conversation, in order."""
    return [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]
