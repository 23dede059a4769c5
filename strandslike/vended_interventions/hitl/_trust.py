"""Trust granted by a human: for a tool, or for a tool when its arguments match conditions; kept in agent.state.

Two keys of ``agent.state`` hold it, so it is persisted with the session like any state:

- ``hitl:trusted_tools``: the names of tools trusted for any arguments (Strands' key and shape, so a session
  written by Strands' HumanInTheLoop is honoured, and code reading it keeps working);
- ``hitl:trust``: every grant with its scope and provenance, ``{"tool", "args", "granted_at", "granted_by"}``.

Functions here work on an `Agent`, an `AgentState` or a plain state dict (as a session stores it).
"""

import logging
import weakref
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...agent.state import AgentState
from ...interrupt import record_audit
from ._conditions import Condition, ConditionError, compile_conditions, match_all, normalize_trust_args

logger = logging.getLogger(__name__)

TRUSTED_TOOLS_KEY = "hitl:trusted_tools"
TRUST_KEY = "hitl:trust"


@dataclass(frozen=True)
class TrustGrant:
    """Trust in a tool: its calls run without asking, for any arguments or only when ``args`` match.

    Attributes:
        tool: The trusted tool's name.
        args: Conditions on the call's arguments (as in policy rules), or None for any arguments.
        granted_at: ISO-8601 UTC time of the grant (None for a grant recorded by Strands, which keeps no time).
        granted_by: Who granted it, when known.
    """

    tool: str
    args: dict[str, Any] | None = None
    granted_at: str | None = None
    granted_by: str | None = None
    _conditions: tuple[Condition, ...] = field(default=(), init=False, repr=False, compare=False)
    _record: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_conditions", compile_conditions(self.args))
        record = {"tool": self.tool, "args": self.args, "granted_at": self.granted_at, "granted_by": self.granted_by}
        object.__setattr__(self, "_record", record)

    def matches(self, tool_name: str, tool_input: Any) -> bool:
        """Return whether this grant covers a call of ``tool_name`` with ``tool_input``."""
        return tool_name == self.tool and (not self._conditions or match_all(self._conditions, tool_input))

    def to_dict(self) -> dict[str, Any]:
        """Return the grant as it is stored in ``agent.state``."""
        return dict(self._record)

    def describe(self) -> str:
        """Return a one-line description: ``delete_files (any arguments)`` or ``write_file where path glob /tmp/*``."""
        if not self.args:
            return f"{self.tool} (any arguments)"
        tests = []
        for name, condition in self.args.items():
            tests.append(f"{name} " + ", ".join(f"{key} {value!r}" for key, value in condition.items()))
        return f"{self.tool} where " + " and ".join(tests)


class _State:
    """`AgentState` and state dicts behind one small interface (get, set, delete)."""

    def __init__(self, target: Any) -> None:
        state = getattr(target, "state", target)
        if not isinstance(state, AgentState | MutableMapping):
            raise TypeError(
                f"expected an Agent, an AgentState or a state dict, got {type(target).__name__}; pass the agent"
            )
        self.state = state

    def get(self, key: str) -> Any:
        return self.state.get(key)

    def set(self, key: str, value: Any) -> None:
        if isinstance(self.state, AgentState):
            self.state.set(key, value)
        else:
            self.state[key] = value

    def delete(self, key: str) -> None:
        if isinstance(self.state, AgentState):
            self.state.delete(key)
        else:
            self.state.pop(key, None)

    def snapshot(self) -> dict[str, Any]:
        return {key: self.get(key) for key in (TRUSTED_TOOLS_KEY, TRUST_KEY) if self.get(key) is not None}

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        for key in (TRUSTED_TOOLS_KEY, TRUST_KEY):
            if key in snapshot:
                self.set(key, snapshot[key])
            else:
                self.delete(key)


def read_grants(target: Any) -> list[TrustGrant]:
    """Return the grants of an agent (or state), tool-wide Strands entries included; malformed entries are skipped."""
    view = _State(target)
    grants: list[TrustGrant] = []
    records = view.get(TRUST_KEY)
    if records is not None and not isinstance(records, list):
        logger.warning("key=<%s> | trust records are not a list; ignoring them", TRUST_KEY)
        records = None
    for record in records or ():
        grant = _grant_from_record(record)
        if grant is not None:
            grants.append(grant)
    names = view.get(TRUSTED_TOOLS_KEY)
    if isinstance(names, list):
        covered = {grant.tool for grant in grants if grant.args is None}
        for name in names:
            if isinstance(name, str) and name and name not in covered:
                grants.append(TrustGrant(name))
                covered.add(name)
    return grants


def _grant_from_record(record: Any) -> TrustGrant | None:
    try:
        if not isinstance(record, Mapping) or not isinstance(record.get("tool"), str) or not record["tool"]:
            raise ConditionError("not a grant")
        granted_at, granted_by = record.get("granted_at"), record.get("granted_by")
        return TrustGrant(
            record["tool"],
            record.get("args"),
            granted_at if isinstance(granted_at, str) else None,
            granted_by if isinstance(granted_by, str) else None,
        )
    except ConditionError as exc:
        logger.warning("key=<%s>, record=<%r> | skipping a malformed trust record: %s", TRUST_KEY, record, exc)
        return None


def add_grant(target: Any, tool: str, args: Any = None, granted_by: str | None = None) -> TrustGrant:
    """Record trust in ``tool`` (for any arguments, or when ``args`` match) and return the grant.

    Raises:
        ValueError: ``tool`` is empty, or ``args`` is malformed; nothing changed.
    """
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"tool={tool!r} | trust is granted to a tool by its name (a non-empty string)")
    try:
        conditions = normalize_trust_args(args)
    except ConditionError as exc:
        raise ValueError(f"tool={tool!r} | {exc}; nothing was trusted") from None
    if granted_by is not None and not isinstance(granted_by, str):
        raise ValueError(f"granted_by={granted_by!r} | must be a string naming who granted the trust")
    grant = TrustGrant(tool, conditions, datetime.now(UTC).isoformat(), granted_by)
    view = _State(target)
    records = view.get(TRUST_KEY)
    records = [record for record in records if record != grant.to_dict()] if isinstance(records, list) else []
    view.set(TRUST_KEY, [*records, grant.to_dict()])
    if conditions is None:
        names = view.get(TRUSTED_TOOLS_KEY)
        names = names if isinstance(names, list) else []
        if tool not in names:
            view.set(TRUSTED_TOOLS_KEY, [*names, tool])
    return grant


def remove_grants(target: Any, tool: str) -> list[TrustGrant]:
    """Remove every grant for ``tool`` (tool-wide and scoped) and return them; unrelated entries are kept."""
    removed = [grant for grant in read_grants(target) if grant.tool == tool]
    if not removed:
        return []
    view = _State(target)
    records = view.get(TRUST_KEY)
    if isinstance(records, list):
        kept = [record for record in records if not (isinstance(record, Mapping) and record.get("tool") == tool)]
        if kept:
            view.set(TRUST_KEY, kept)
        else:
            view.delete(TRUST_KEY)
    names = view.get(TRUSTED_TOOLS_KEY)
    if isinstance(names, list):
        kept_names = [name for name in names if name != tool]
        if kept_names:
            view.set(TRUSTED_TOOLS_KEY, kept_names)
        else:
            view.delete(TRUSTED_TOOLS_KEY)
    return removed


def snapshot(target: Any) -> dict[str, Any]:
    """Return the trust entries of ``target``'s state, to put them back with `restore` if a later step fails."""
    return _State(target).snapshot()


def restore(target: Any, saved: Mapping[str, Any]) -> None:
    """Put back trust entries saved by `snapshot`."""
    _State(target).restore(saved)


# Compiled grants per agent, reused while its AgentState object and version are unchanged. The cache holds the
# AgentState itself, so the identity test cannot be fooled by a new state object at a recycled address.
_CACHE: "weakref.WeakKeyDictionary[Any, tuple[AgentState, int, tuple[TrustGrant, ...]]]" = weakref.WeakKeyDictionary()


def find_grant(agent: Any, tool_name: str, tool_input: Any) -> TrustGrant | None:
    """Return the first grant of ``agent`` covering the call, or None."""
    state = agent.state
    cached = _CACHE.get(agent)
    if cached is None or cached[0] is not state or cached[1] != state.version:
        grants = tuple(read_grants(state))
        try:
            _CACHE[agent] = (state, state.version, grants)
        except TypeError:  # an agent type that cannot be weakly referenced: do not cache
            pass
    else:
        grants = cached[2]
    for grant in grants:
        if grant.matches(tool_name, tool_input):
            return grant
    return None


def is_agent(target: Any) -> bool:
    """Whether ``target`` is an agent (with an audit trail and maybe a session), not a bare state."""
    return hasattr(target, "_interrupt_state") and hasattr(target, "state")


def persist(target: Any, saved: dict[str, Any]) -> None:
    """Persist a trust change of an agent with a session manager; put the state back if that fails."""
    if not is_agent(target):
        return
    manager = getattr(target, "session_manager", None)
    if manager is None:
        return
    try:
        manager.sync_agent(target)
    except BaseException:
        restore(target, saved)
        raise


def audit_change(name: str, target: Any, event: str, details: dict[str, Any]) -> None:
    """Record a grant or revocation in an agent's audit trail, and persist it if the agent has a session."""
    if not is_agent(target):
        return
    record_audit(target, event, name=name, **details)
    manager = getattr(target, "session_manager", None)
    if manager is not None:
        try:
            manager.sync_agent(target)
        except Exception as exc:  # the change itself is saved; the entry is written with the next invocation
            logger.warning("event=<%s> | audit entry not persisted yet: %s", event, exc)
