"""The durable log contract as a pytest suite: run it on any session store (Redis, DynamoDB, S3, PostgreSQL, ...).

`SessionRepository`'s docstring states the rules a store must keep for the exactly-once promise to hold
(``strandslike/session/session_repository.py``); this module checks every one of them, and the session
manager's behaviour built on them, against your store. Subclass `SessionRepositoryContract` in a test module
and give it a ``repository`` fixture that returns a fresh, empty store; pytest then runs every ``test_*`` method
for it::

    # tests/test_redis_store.py
    import pytest
    from strandslike.testing.session_conformance import SessionRepositoryContract

    class TestRedisStore(SessionRepositoryContract):
        @pytest.fixture
        def repository(self, redis_url):
            return RedisSessionRepository(redis_url, prefix=new_prefix())

        def open_again(self, repository):
            # Another handle on the same storage, as a second process would open it (default: the same object).
            return RedisSessionRepository(repository.url, prefix=repository.prefix)

        def child_store(self, repository):
            # "module:function" and a JSON argument that build the same store in a child process; enables the
            # test that a claim dies with its holder (default None: skipped).
            return "tests.test_redis_store:open_store", {"url": repository.url, "prefix": repository.prefix}

        def damage(self, repository, ref):
            # Damage a stored record in place (default: the test is skipped).
            ...

A store that passes can be handed to ``RepositorySessionManager(session_id, store)``: it then keeps every
guarantee `FileSessionManager` keeps (see ``docs/exactly-once.md``). strandslike runs this suite on
`InMemorySessionRepository`, `FileSessionManager` and `PostgresSessionRepository` in its own tests
(``tests/session/test_session_postgres_conformance.py`` is a complete example for a networked store).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from typing import Any

try:
    import pytest
except ImportError as exc:  # pragma: no cover - only without pytest
    raise ImportError("strandslike.testing.session_conformance needs pytest: pip install pytest") from exc

from ..agent.agent import Agent
from ..hooks.events import BeforeToolCallEvent
from ..models.scripted import ScriptedModel, text, tool_call
from ..session.repository_session_manager import RepositorySessionManager
from ..session.session_repository import LogRef, SessionRepository
from ..tools.decorator import tool
from ..types.exceptions import SessionConflictError, SessionCorruptError
from ..types.session import Session, SessionType

__all__ = ["SessionRepositoryContract"]

_CHILD = """
import json, sys, time
sys.path[:0] = json.loads(sys.argv[1])
import importlib
module, _, function = sys.argv[2].partition(":")
store = getattr(importlib.import_module(module), function)(json.loads(sys.argv[3]))
from strandslike.session.session_repository import LogRef
ref = LogRef(*json.loads(sys.argv[4]))
stored = store.read_log(ref)
claim = store.claim_log(ref, None if stored is None else stored.version)
print("CLAIMED", flush=True)
time.sleep(120)
"""


def _session(repository: SessionRepository) -> str:
    session_id = f"conformance-{uuid.uuid4().hex[:12]}"
    repository.create_session(Session(session_id, SessionType.AGENT))
    return session_id


def _agent_ref(session_id: str, owner: str = "default") -> LogRef:
    return LogRef(session_id, "agent", owner)


def _append(repository: SessionRepository, ref: LogRef, records: list[dict[str, Any]], durable: bool = False) -> str:
    """Append under a claim of the log's current version; return the new version."""
    stored = repository.read_log(ref)
    claim = repository.claim_log(ref, None if stored is None else stored.version)
    try:
        repository.append_log(claim, records, durable=durable)
        assert claim.version is not None
        return claim.version
    finally:
        repository.release_log(claim)


def _records(count: int, start: int = 0, kind: str = "x") -> list[dict[str, Any]]:
    return [{"k": kind, "n": start + index, "text": f"record {start + index} ✓ ü \u2028"} for index in range(count)]


class _Died(BaseException):
    """Stands for the death of the process inside a tool body."""


class SessionRepositoryContract:
    """The rules of `SessionRepository`'s durable log contract, as tests; subclass it with a ``repository`` fixture."""

    # -- what a subclass provides ---------------------------------------------------------------------------------

    @pytest.fixture
    def repository(self) -> SessionRepository:
        """Return a fresh, empty store (override this fixture)."""
        raise NotImplementedError("define a `repository` fixture returning a fresh, empty store")

    def open_again(self, repository: SessionRepository) -> SessionRepository:
        """Return another handle on the same storage, as another process would open it (default: the same)."""
        return repository

    def child_store(self, repository: SessionRepository) -> tuple[str, Any] | None:
        """Return ``("module:function", json_argument)`` building the same store in a child process, or None."""
        return None

    def damage(self, repository: SessionRepository, ref: LogRef) -> bool:
        """Damage one stored record of ``ref`` in place (not the last one); return False if the store cannot."""
        return False

    # -- records and reads ----------------------------------------------------------------------------------------

    def test_a_log_that_was_never_written_reads_as_none(self, repository: SessionRepository) -> None:
        """A store supports claims, and a log nobody appended to reads as None."""
        session_id = _session(repository)
        assert repository.supports_claims is True
        assert repository.read_log(_agent_ref(session_id)) is None
        assert repository.read_log(LogRef(session_id, "multi_agent", "default")) is None

    @pytest.mark.parametrize("kind", ["agent", "multi_agent"])
    def test_records_read_back_equal_and_in_append_order(self, repository: SessionRepository, kind: str) -> None:
        """Every accepted record reads back equal, in append order, for both log kinds."""
        session_id = _session(repository)
        ref = LogRef(session_id, kind, "owner")  # type: ignore[arg-type]
        varied: list[dict[str, Any]] = [
            {"k": "h", "format": "test"},
            {"k": "v", "nested": {"list": [1, 2.5, None, True, False, "", {}], "deep": [[[[{"a": "b"}]]]]}},
            {"k": "v", "unicode": "日本語 ü \u2028 \u202e emoji 🙂", "escapes": 'quote " backslash \\ newline \n'},
            {"k": "v", "big": "x" * 200_000, "int": 10**30, "negative": -7, "float": 1e-300},
            {"k": "v", "c": "a member named like a checksum", "k2": "another"},
        ]
        _append(repository, ref, varied[:2])
        _append(repository, ref, varied[2:])
        _append(repository, ref, _records(3))
        stored = repository.read_log(ref)
        assert stored is not None
        assert stored.records == varied + _records(3)
        again = self.open_again(repository).read_log(ref)
        assert again is not None
        assert again.records == stored.records

    def test_every_append_changes_the_version_and_only_appends_do(self, repository: SessionRepository) -> None:
        """Versions change with every append and only then."""
        ref = _agent_ref(_session(repository))
        versions = [_append(repository, ref, _records(1, n)) for n in range(4)]
        assert len(set(versions)) == 4
        first = repository.read_log(ref)
        second = self.open_again(repository).read_log(ref)
        assert first is not None
        assert second is not None
        assert first.version == second.version == versions[-1]

    def test_an_append_of_no_records_changes_nothing(self, repository: SessionRepository) -> None:
        """Appending no records changes neither the records nor the version."""
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(2))
        claim = repository.claim_log(ref, version)
        try:
            repository.append_log(claim, [], durable=True)
            assert claim.version == version
        finally:
            repository.release_log(claim)
        stored = repository.read_log(ref)
        assert stored is not None
        assert (stored.records, stored.version) == (_records(2), version)

    def test_a_read_is_one_consistent_snapshot_while_another_handle_appends(
        self, repository: SessionRepository
    ) -> None:
        """A read holds whole appends only, even while another handle appends."""
        ref = _agent_ref(_session(repository))
        _append(repository, ref, _records(3, 0))
        writer = self.open_again(repository)
        stop = threading.Event()
        problems: list[str] = []

        def write() -> None:
            stored = writer.read_log(ref)
            assert stored is not None
            claim = writer.claim_log(ref, stored.version)
            try:
                for batch in range(1, 60):
                    writer.append_log(claim, _records(3, 3 * batch), durable=False)
            finally:
                writer.release_log(claim)
                stop.set()

        thread = threading.Thread(target=write)
        thread.start()
        reads = 0
        while not stop.is_set() or reads < 3:
            stored = repository.read_log(ref)
            reads += 1
            assert stored is not None
            if len(stored.records) % 3 or stored.records != _records(len(stored.records)):
                problems.append(f"a read returned {len(stored.records)} records: not whole appends in order")
        thread.join(timeout=60)
        assert not thread.is_alive()
        assert problems == []
        final = repository.read_log(ref)
        assert final is not None
        assert final.records == _records(180)

    def test_an_append_is_all_or_nothing_when_a_record_cannot_be_stored(self, repository: SessionRepository) -> None:
        """An append with a record that cannot be stored writes none of its records."""
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(2))
        claim = repository.claim_log(ref, version)
        try:
            with pytest.raises((TypeError, ValueError)):
                repository.append_log(claim, [*_records(2, 2), {"k": "x", "bad": {1, 2}}], durable=True)
        finally:
            repository.release_log(claim)
        stored = repository.read_log(ref)
        assert stored is not None
        assert stored.records == _records(2)

    # -- claims ---------------------------------------------------------------------------------------------------

    def test_a_new_log_is_claimed_at_version_none_and_created_by_its_first_append(
        self, repository: SessionRepository
    ) -> None:
        """A missing log is claimed at version None; a claim alone creates nothing."""
        ref = _agent_ref(_session(repository))
        claim = repository.claim_log(ref, None)
        try:
            assert repository.read_log(ref) is None  # a claim alone creates nothing
            repository.append_log(claim, _records(1), durable=True)
        finally:
            repository.release_log(claim)
        with pytest.raises(SessionConflictError):
            repository.claim_log(ref, None)  # the log exists now

    def test_a_claim_is_exclusive_and_a_second_claimant_fails_at_once(self, repository: SessionRepository) -> None:
        """A second claim fails with SessionConflictError at once, never waiting."""
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(1))
        other = self.open_again(repository)
        claim = repository.claim_log(ref, version)
        outcome: list[BaseException | str] = []

        def contend() -> None:
            try:
                other.claim_log(ref, version)
                outcome.append("claimed")
            except BaseException as exc:
                outcome.append(exc)

        try:
            thread = threading.Thread(target=contend)
            thread.start()
            thread.join(timeout=30)
            assert not thread.is_alive(), "claim_log waited for the holder; it must fail at once"
            [result] = outcome
            assert isinstance(result, SessionConflictError)
            with pytest.raises(SessionConflictError):
                repository.claim_log(ref, version)  # not re-entrant either
        finally:
            repository.release_log(claim)

    def test_a_claim_at_a_stale_version_conflicts_and_writes_nothing(self, repository: SessionRepository) -> None:
        """A claim at a version the log has moved past conflicts."""
        ref = _agent_ref(_session(repository))
        stale = _append(repository, ref, _records(1))
        _append(self.open_again(repository), ref, _records(1, 1))
        with pytest.raises(SessionConflictError):
            repository.claim_log(ref, stale)
        stored = repository.read_log(ref)
        assert stored is not None
        assert stored.records == _records(2)

    def test_release_lets_the_next_claim_in_and_is_idempotent(self, repository: SessionRepository) -> None:
        """Releasing frees the log for the next claim; releasing twice is harmless."""
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(1))
        claim = repository.claim_log(ref, version)
        repository.release_log(claim)
        repository.release_log(claim)
        again = self.open_again(repository).claim_log(ref, version)
        self.open_again(repository).release_log(again)

    def test_an_append_under_a_released_claim_conflicts_and_writes_nothing(self, repository: SessionRepository) -> None:
        """A released claim cannot append, even once someone else claimed the log."""
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(1))
        claim = repository.claim_log(ref, version)
        repository.release_log(claim)
        other = self.open_again(repository)
        second = other.claim_log(ref, version)
        try:
            with pytest.raises(SessionConflictError):
                repository.append_log(claim, _records(1, 1), durable=True)
            other.append_log(second, _records(1, 5), durable=False)
        finally:
            other.release_log(second)
        stored = repository.read_log(ref)
        assert stored is not None
        assert stored.records == [*_records(1), *_records(1, 5)]

    def test_a_claim_follows_its_own_appends(self, repository: SessionRepository) -> None:
        """After each append the claim's version is the log's version."""
        ref = _agent_ref(_session(repository))
        claim = repository.claim_log(ref, None)
        try:
            for batch in range(3):
                repository.append_log(claim, _records(2, 2 * batch), durable=batch == 1)
                stored = self.open_again(repository).read_log(ref)
                assert stored is not None
                assert (stored.records, stored.version) == (_records(2 * batch + 2), claim.version)
        finally:
            repository.release_log(claim)
        # The version the holder ended at is the one the next claimant must name.
        again = repository.claim_log(ref, claim.version)
        repository.release_log(again)

    def test_claims_and_versions_are_per_log(self, repository: SessionRepository) -> None:
        """Claims on different agents and orchestrators never block each other."""
        session_id = _session(repository)
        refs = [_agent_ref(session_id, "a"), _agent_ref(session_id, "b"), LogRef(session_id, "multi_agent", "a")]
        claims = [repository.claim_log(ref, None) for ref in refs]  # none blocks another
        try:
            for number, (ref, claim) in enumerate(zip(refs, claims, strict=True)):
                repository.append_log(claim, _records(1, number, kind=ref.kind), durable=False)
        finally:
            for claim in claims:
                repository.release_log(claim)
        for number, ref in enumerate(refs):
            stored = repository.read_log(ref)
            assert stored is not None
            assert stored.records == _records(1, number, kind=ref.kind)

    def test_a_claim_dies_with_the_process_holding_it(self, repository: SessionRepository) -> None:
        """A killed holder does not lock the log forever."""
        builder = self.child_store(repository)
        if builder is None:
            pytest.skip("the store is not shared between processes (no child_store)")
        ref = _agent_ref(_session(repository))
        version = _append(repository, ref, _records(1))
        spec, argument = builder
        argv = [
            sys.executable,
            "-c",
            _CHILD,
            json.dumps(sys.path),
            spec,
            json.dumps(argument),
            json.dumps([ref.session_id, ref.kind, ref.owner_id]),
        ]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            try:
                assert child.stdout is not None
                line = child.stdout.readline().decode().strip()
                assert line == "CLAIMED", line + (child.stderr.read().decode() if child.stderr else "")
                with pytest.raises(SessionConflictError):
                    repository.claim_log(ref, version)
                os.kill(child.pid, signal.SIGKILL)
                child.wait(timeout=30)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
        claim = repository.claim_log(ref, version)  # the holder is dead: the claim is free again
        repository.release_log(claim)

    # -- listing --------------------------------------------------------------------------------------------------

    def test_logs_and_sessions_are_listed_in_order(self, repository: SessionRepository) -> None:
        """list_logs gives agents then orchestrators, each by owner id; list_sessions is sorted."""
        session_id = _session(repository)
        for ref in (
            LogRef(session_id, "multi_agent", "graph"),
            _agent_ref(session_id, "zeta"),
            LogRef(session_id, "multi_agent", "swarm"),
            _agent_ref(session_id, "alpha"),
        ):
            _append(repository, ref, _records(1))
        assert repository.list_logs(session_id) == [
            _agent_ref(session_id, "alpha"),
            _agent_ref(session_id, "zeta"),
            LogRef(session_id, "multi_agent", "graph"),
            LogRef(session_id, "multi_agent", "swarm"),
        ]
        other = _session(repository)
        assert repository.list_logs(other) == []
        listed = self.open_again(repository).list_sessions()
        assert listed == sorted(listed)
        assert {session_id, other} <= set(listed)

    # -- integrity ------------------------------------------------------------------------------------------------

    def test_a_damaged_record_is_never_returned_as_good(self, repository: SessionRepository) -> None:
        """A record damaged at rest is reported (or dropped and said so), never returned changed."""
        ref = _agent_ref(_session(repository))
        for batch in range(3):
            _append(repository, ref, _records(2, 2 * batch))
        if not self.damage(repository, ref):
            pytest.skip("the store offers no way to damage a record (damage() returned False)")
        try:
            stored = repository.read_log(ref)
        except SessionCorruptError:
            return
        assert stored is not None
        assert stored.records == _records(6), "a damaged record was returned with different content"

    # -- the session manager on the store -------------------------------------------------------------------------

    def test_a_fresh_manager_restores_exactly_what_was_persisted(self, repository: SessionRepository) -> None:
        """A manager over the store restores what another persisted, and claims per invocation."""
        session_id = f"manager-{uuid.uuid4().hex[:12]}"

        @tool
        def lookup(key: str) -> str:
            """Look a key up.

            Args:
                key: The key.
            """
            return f"value of {key}"

        def approve(event: BeforeToolCallEvent) -> None:
            if event.interrupt("approval", reason={"key": event.tool_use["input"]["key"]}) != "y":
                event.cancel_tool = "denied"

        writer = Agent(
            model=ScriptedModel([text("first"), tool_call("lookup", tool_use_id="l1", key="k")]),
            tools=[lookup],
            hooks=[approve],
            state={"counter": 1},
            session_manager=RepositorySessionManager(session_id, repository),
        )
        writer("hello")
        writer.state.set("counter", 2)
        paused = writer("look k up")
        assert paused.stop_reason == "interrupt"

        reader = Agent(
            model=ScriptedModel([text("value found")]),
            tools=[lookup],
            hooks=[approve],
            session_manager=RepositorySessionManager(session_id, self.open_again(repository)),
        )
        assert reader.messages == writer.messages
        assert reader.state.get() == {"counter": 2}
        assert reader._interrupt_state.to_dict() == writer._interrupt_state.to_dict()
        assert reader.interrupt_audit == writer.interrupt_audit
        assert paused.interrupts
        answer: Any = [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}]
        result = reader(answer)
        assert result.stop_reason == "end_turn"
        with pytest.raises(SessionConflictError):  # the first agent is stale now
            writer(answer)

    def test_an_intent_without_an_outcome_is_reported_not_run_again(self, repository: SessionRepository) -> None:
        """A tool that started and never ended is reported as unknown, not run again."""
        session_id = f"intent-{uuid.uuid4().hex[:12]}"
        runs: list[str] = []

        @tool
        def pay(amount: int) -> str:
            """Pay.

            Args:
                amount: How much.
            """
            runs.append("pay")
            if len(runs) == 1:
                raise _Died  # the process dies inside the tool body
            return "paid"

        crashed = Agent(
            model=ScriptedModel([tool_call("pay", tool_use_id="p1", amount=3)]),
            tools=[pay],
            session_manager=RepositorySessionManager(session_id, repository),
        )
        with pytest.raises(_Died):
            crashed("pay 3")
        crashed.session_manager.close()

        restored = Agent(
            model=ScriptedModel([text("Not sure it went through.")]),
            tools=[pay],
            session_manager=RepositorySessionManager(session_id, self.open_again(repository)),
        )
        unfinished = restored.tool_journal.unfinished()
        assert [(attempt.tool_use_id, attempt.name, attempt.outcome) for attempt in unfinished] == [
            ("p1", "pay", "started")
        ]
        assert restored(None).stop_reason == "end_turn"
        assert runs == ["pay"]
        result = restored.messages[-2]["content"][0]["toolResult"]
        assert result["status"] == "error"
        assert unfinished[0].idempotency_key in result["content"][0]["text"]
        assert [entry["event"] for entry in restored.interrupt_audit] == ["tool_outcome_unknown"]
