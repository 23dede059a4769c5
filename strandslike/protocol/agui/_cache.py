"""Hot agents: the agents of recent threads, kept in the process between requests, reused only while current.

Rebuilding a thread's agent for every request (the factory, then a restore from the session) was the largest cost
of a request. The server keeps the agents of the threads it served last, least recently used out first, and a
request on one of them reuses it if, and only if, the store confirms it is current:

- an agent is kept only after a request that ended normally and left it exactly as its log holds it (its
  session manager's `is_synced`: every record written, no failed write, nothing changed since), and only for a
  session manager that keeps the durable log contract (``supports_claims``); Graph and Swarm threads are rebuilt
  for every request;
- a request takes the agent out of the cache (no two requests share one), and claims its session at the log
  version the agent was built from or last wrote, which it does for every request anyway: the claim is refused
  (`SessionConflictError`) if anyone else wrote the log since (another replica on the same storage, a CLI
  command), and the request then drops the kept agent and rebuilds it from the session, as a request on a thread
  not in the cache does.

So a kept agent never acts on a stale session: two replicas on one storage directory, or a restarted process,
behave exactly as without the cache. Nothing is written differently either: every request still claims the
session, and intents, interrupts and results are written durably as before.
"""

from collections import OrderedDict

from ._target import Target

DEFAULT_AGENT_CACHE_SIZE = 256


class AgentCache:
    """At most ``size`` hot agents by thread id, least recently used out first (``size`` 0: none are kept)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._targets: OrderedDict[str, Target] = OrderedDict()

    def __len__(self) -> int:
        return len(self._targets)

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._targets

    def take(self, thread_id: str) -> Target | None:
        """Remove and return the kept agent of a thread, if any; the caller must claim it before using it."""
        return self._targets.pop(thread_id, None)

    def keep(self, thread_id: str, target: Target) -> None:
        """Keep a thread's agent (now the most recently used), closing the least recently used beyond ``size``."""
        if self.size <= 0:
            target.session_manager.close()
            return
        previous = self._targets.pop(thread_id, None)
        if previous is not None and previous is not target:
            previous.session_manager.close()
        self._targets[thread_id] = target
        while len(self._targets) > self.size:
            _, evicted = self._targets.popitem(last=False)
            evicted.session_manager.close()

    def clear(self) -> None:
        """Drop every kept agent (closing its session manager)."""
        while self._targets:
            _, target = self._targets.popitem(last=False)
            target.session_manager.close()
