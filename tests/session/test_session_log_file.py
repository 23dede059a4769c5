"""The file store's log: checksummed records, all-or-nothing appends, torn tails, repairs, the previous format.

The file is damaged here the way crashes and bad disks damage files: flipped bits, cuts at every offset, lost or
damaged final newlines. A damaged record must never come back as different content.
"""

import gc
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from log_lines import body_of, checksummed

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder
from strandslike.session import FileSessionManager, LogRef
from strandslike.types.exceptions import SessionConflictError, SessionCorruptError

SESSION = "s1"
REF = LogRef(SESSION, "agent", "default")


def log_path(storage: Path, agent_id: str = "default") -> Path:
    return storage / f"session_{SESSION}" / "agents" / f"agent_{agent_id}" / "agent.jsonl"


def store(storage: Path) -> FileSessionManager:
    return FileSessionManager(SESSION, storage_dir=storage)


def agent(storage: Path, turns: list[Any] | None = None, **kwargs: Any) -> Agent:
    return Agent(model=ScriptedModel(turns or []), session_manager=store(storage), **kwargs)


def conversation(storage: Path, turns: int = 3) -> list[dict[str, Any]]:
    """Write a session of ``turns`` invocations (one append each); return the log's records."""
    for number in range(turns):
        live = agent(storage, [text(f"answer {number} ü")])
        live(f"question {number}")
        live.session_manager.close()
    stored = store(storage).read_log(REF)
    assert stored is not None
    assert stored.repairs == []
    return stored.records


def append_boundaries(raw: bytes) -> list[int]:
    """Offsets just past each committed append (the end of every line that commits its batch)."""
    ends, offset = [], 0
    for line in raw.split(b"\n")[:-1]:
        offset += len(line) + 1
        if not line.endswith(b'+"}'):
            ends.append(offset)
    return ends


# -- the format ---------------------------------------------------------------------------------------------------


def test_every_line_is_a_record_with_a_checksum_and_each_append_commits_on_its_last_line(tmp_path: Path) -> None:
    records = conversation(tmp_path)
    lines = log_path(tmp_path).read_text().splitlines()
    assert [body_of(line) for line in lines] == records  # the documented format, checked independently
    assert records[0]["k"] == "h"
    assert records[0]["format"] == "strandslike-agent-log/2"
    # One append for the new agent (header + snapshot) and one per invocation after it.
    assert len(append_boundaries(log_path(tmp_path).read_bytes())) == 4


def test_a_flipped_bit_anywhere_never_restores_as_changed_content(tmp_path: Path) -> None:
    records = conversation(tmp_path, turns=2)
    path = log_path(tmp_path)
    original = path.read_bytes()
    reader = store(tmp_path)
    outcomes = {"corrupt": 0, "kept": 0}
    problems: list[tuple[str, str]] = []
    for position in range(len(original)):
        for bit in (0x01, 0x20):
            damaged = bytearray(original)
            damaged[position] ^= bit
            path.write_bytes(bytes(damaged))
            try:
                stored = reader.read_log(REF)
            except SessionCorruptError as exc:
                problems.append((exc.path, str(exc)))
                outcomes["corrupt"] += 1
                continue
            assert stored is not None
            # Only a damaged final newline can be read back, and then every record is exactly as written.
            assert position == len(original) - 1, f"byte {position} flipped by {bit:#x} was not detected"
            assert stored.records == records
            assert stored.repairs == [
                f"line {len(records)} had its final newline damaged; the record was kept and the newline is restored"
            ]
            outcomes["kept"] += 1
    assert outcomes["kept"] == 2
    assert {where for where, _ in problems} == {str(path)}
    assert all("line " in message or "is not a strandslike agent log" in message for _, message in problems)


def test_a_cut_at_every_offset_restores_exactly_the_appends_before_it(tmp_path: Path) -> None:
    conversation(tmp_path, turns=3)
    path = log_path(tmp_path)
    original = path.read_bytes()
    boundaries = append_boundaries(original)
    reader = store(tmp_path)
    full = reader.read_log(REF)
    assert full is not None
    for cut in range(len(original) + 1):
        path.write_bytes(original[:cut])
        stored = reader.read_log(REF)
        assert stored is not None
        kept_end = max([end for end in boundaries if end <= cut] + [0])
        # A last record that lost only its newline is kept.
        if cut + 1 in boundaries:
            kept_end = cut + 1
        expected = [body_of(line) for line in original[:kept_end].decode().splitlines()]
        assert stored.records == expected, f"cut at {cut}"
        assert bool(stored.repairs) == (cut != kept_end), f"cut at {cut}: {stored.repairs}"


def test_after_a_cut_the_next_invocation_cuts_the_torn_tail_and_appends_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    conversation(tmp_path, turns=2)
    path = log_path(tmp_path)
    original = path.read_bytes()
    boundaries = append_boundaries(original)
    path.write_bytes(original[: boundaries[-1] - 40])  # the last append was torn
    with caplog.at_level(logging.WARNING):
        restored = agent(tmp_path, [text("fine")])
    assert [m["content"][0]["text"] for m in restored.messages] == ["question 0", "answer 0 ü"]
    assert any("a torn record of" in message for message in caplog.messages)  # reported when restored
    assert path.read_bytes() == original[: boundaries[-1] - 40]  # restoring alone does not touch the file

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert restored("again").stop_reason == "end_turn"
    assert any("cut a torn record of" in message for message in caplog.messages)  # reported when repaired
    raw = path.read_bytes()
    assert raw.startswith(original[: boundaries[-2]])
    tail = [body_of(line) for line in raw.decode().splitlines()][-2:]
    assert [record["m"]["content"][0]["text"] for record in tail] == ["again", "fine"]
    assert store(tmp_path).read_log(REF).repairs == []


@pytest.mark.parametrize("damage", ["lost", "damaged"])
def test_a_last_record_whose_newline_is_lost_or_damaged_is_kept_and_the_newline_restored(
    tmp_path: Path, damage: str
) -> None:
    records = conversation(tmp_path, turns=1)
    path = log_path(tmp_path)
    original = path.read_bytes()
    path.write_bytes(original[:-1] + (b"" if damage == "lost" else b"X"))
    stored = store(tmp_path).read_log(REF)
    assert stored.records == records
    assert "newline" in stored.repairs[0]
    restored = agent(tmp_path, [text("second")])
    assert restored.messages[-1] == {"role": "assistant", "content": [{"text": "answer 0 ü"}]}
    restored("question 1")
    raw = path.read_bytes()
    assert raw.startswith(original)  # the newline is back where it was
    assert all(body_of(line) for line in raw.decode().splitlines())
    assert store(tmp_path).read_log(REF).repairs == []


def test_an_append_that_never_committed_is_dropped_whole(tmp_path: Path) -> None:
    records = conversation(tmp_path, turns=1)
    path = log_path(tmp_path)
    with open(path, "a", encoding="utf-8") as handle:  # a batch cut after two complete lines of three
        handle.write(checksummed({"k": "m", "i": 2, "t": "x", "m": {"role": "user", "content": []}}, more=True) + "\n")
        handle.write(checksummed({"k": "a", "e": {"event": "raised"}}, more=True) + "\n")
    stored = store(tmp_path).read_log(REF)
    assert stored.records == records
    first, last = len(records) + 1, len(records) + 2
    assert stored.repairs == [
        f"lines {first}-{last}: an append that never completed (2 records without their commit) was dropped"
    ]


def test_a_complete_line_that_fails_its_checksum_is_never_repaired(tmp_path: Path) -> None:
    conversation(tmp_path, turns=2)
    path = log_path(tmp_path)
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace("question 0", "question X")  # same length, different content
    path.write_text("\n".join(lines) + "\n")
    before = path.read_bytes()
    for _ in range(2):
        with pytest.raises(SessionCorruptError, match=r"line 3 is not a valid record \(its checksum does not match"):
            agent(tmp_path)
    assert path.read_bytes() == before


def test_a_planted_record_nested_too_deep_is_corrupt_not_a_recursion_error(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    path = log_path(tmp_path)
    deep = '{"k":"a","e":' + "[" * 200_000 + "]" * 200_000 + "}"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(checksummed({"k": "placeholder"})[:0] + deep[:-1] + ',"c":"00000000"}\n')
    with pytest.raises(SessionCorruptError):
        agent(tmp_path)


def test_records_with_valid_checksums_but_the_wrong_shape_name_their_line(tmp_path: Path) -> None:
    records = conversation(tmp_path, turns=1)
    path = log_path(tmp_path)
    for bad in (
        {"k": "ti", "u": 5, "n": "x", "key": "k", "t": "x"},
        {"k": "to", "u": "never-started", "o": "done", "r": {"content": []}, "t": "x"},
        {"k": "to", "u": "x", "o": "exploded", "t": "x"},
        {"k": "h", "format": "strandslike-agent-log/2"},
    ):
        lines = path.read_text().splitlines()[: len(records)]
        path.write_text("\n".join([*lines, checksummed(bad)]) + "\n")
        with pytest.raises(SessionCorruptError, match=f"line {len(records) + 1} is not a valid record"):
            agent(tmp_path)


# -- the format of earlier versions -------------------------------------------------------------------------------


def format_1_log(storage: Path) -> Path:
    """Write the log an earlier strandslike left: plain JSON lines, no checksums, a format-1 header."""
    path = log_path(storage)
    store(storage).close()  # the session record
    path.parent.mkdir(parents=True, mode=0o700)
    snapshot = {"agent_id": "default", "state": {"kept": True}, "conversation_manager_state": {}, "_internal_state": {}}
    lines = [
        {"k": "h", "format": "strandslike-agent-log/1", "session_id": SESSION, "agent_id": "default", "t": "t0"},
        {"k": "s", "t": "t0", "a": snapshot},
        {"k": "m", "i": 0, "t": "t1", "m": {"role": "user", "content": [{"text": "old question"}]}},
        {"k": "m", "i": 1, "t": "t1", "m": {"role": "assistant", "content": [{"text": "old answer"}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_format_1_log_is_read_and_rewritten_with_checksums_by_the_next_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = format_1_log(tmp_path)
    restored = agent(tmp_path, [text("new answer")])
    assert restored.state.get() == {"kept": True}
    assert [m["content"][0]["text"] for m in restored.messages] == ["old question", "old answer"]
    with caplog.at_level(logging.WARNING):
        restored("new question")
    assert any("rewrote the log in format 2" in message for message in caplog.messages)
    records = [body_of(line) for line in path.read_text().splitlines()]  # every line is checksummed now
    assert records[0]["format"] == "strandslike-agent-log/1"  # the records themselves are kept as they were
    assert [r["m"]["content"][0]["text"] for r in records if r["k"] == "m"] == [
        "old question",
        "old answer",
        "new question",
        "new answer",
    ]
    assert agent(tmp_path).messages == restored.messages


def test_a_format_1_log_with_a_torn_tail_and_a_stray_checksum_line(tmp_path: Path) -> None:
    path = format_1_log(tmp_path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"k":"m","i":2,"t":"t2","m":{"role":"user","content":[{"text":"torn')
    stored = store(tmp_path).read_log(REF)
    assert len(stored.records) == 4
    assert "torn record" in stored.repairs[0]
    path.write_text(path.read_text().rsplit("\n", 1)[0] + "\n" + checksummed({"k": "x"}) + "\n")
    with pytest.raises(SessionCorruptError, match="format-2 line in a format-1 log"):
        store(tmp_path).read_log(REF)


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def test_an_orchestrator_state_file_of_an_earlier_version_is_read_then_folded_into_a_log(tmp_path: Path) -> None:
    def graph() -> Any:
        builder = GraphBuilder()
        builder.add_node(Agent(model=ScriptedModel([text("one"), text("two")]), name="only"), "only")
        builder.set_entry_point("only")
        builder.set_session_manager(store(tmp_path))
        builder.set_graph_id("pipeline")
        return builder.build()

    first = graph()
    first("run once")
    first.session_manager.close()
    log = tmp_path / f"session_{SESSION}" / "multi_agents" / "multi_agent_pipeline" / "multi_agent.jsonl"
    state = body_of(log.read_text().splitlines()[-1])["s"]
    # Put the state back the way an earlier version stored it: one JSON file, no log.
    legacy = log.parent.parent / "multi_agent_pipeline.json"
    legacy.write_text(json.dumps(state))
    log.unlink()

    reader = store(tmp_path)
    assert reader.read_multi_agent(SESSION, "pipeline") == state
    assert reader.list_logs(SESSION) == [LogRef(SESSION, "multi_agent", "pipeline")]
    second = graph()
    assert second("run again").status.value == "completed"
    assert not legacy.exists()  # folded into the log by the first write
    records = [body_of(line) for line in log.read_text().splitlines()]
    assert records[1] == {"k": "ms", "t": records[1]["t"], "s": state}
    assert [record["k"] for record in records] == ["h", "ms", *["ms"] * (len(records) - 2)]


# -- claims and versions ------------------------------------------------------------------------------------------


def test_a_claim_at_a_stale_version_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    first, second = store(tmp_path), store(tmp_path)
    stale = second.read_log(REF).version
    claim = first.claim_log(REF, first.read_log(REF).version)
    with pytest.raises(SessionConflictError, match="another process is running this agent"):
        second.claim_log(REF, stale)
    first.append_log(claim, [{"k": "a", "e": {"event": "x"}}], durable=True)
    first.release_log(claim)
    first.release_log(claim)  # idempotent
    size = log_path(tmp_path).stat().st_size
    with pytest.raises(SessionConflictError, match="changed by another process"):
        second.claim_log(REF, stale)
    with pytest.raises(SessionConflictError, match="released"):
        first.append_log(claim, [{"k": "a", "e": {}}], durable=False)
    assert log_path(tmp_path).stat().st_size == size


def test_a_torn_tail_is_not_a_change_but_a_committed_append_is(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    reader = store(tmp_path)
    version = reader.read_log(REF).version
    with open(log_path(tmp_path), "ab") as handle:
        handle.write(b'{"k":"m","i":9,"torn')
    assert reader.read_log(REF).version == version
    claim = reader.claim_log(REF, version)  # the torn tail does not count as a change
    reader.release_log(claim)
    with open(log_path(tmp_path), "ab") as handle:
        handle.write(b"\n" + checksummed({"k": "a", "e": {}}).encode() + b"\n")
    with pytest.raises(SessionConflictError):
        reader.claim_log(REF, version)


def test_a_write_by_a_process_without_the_claim_voids_the_claim(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    writer = store(tmp_path)
    claim = writer.claim_log(REF, writer.read_log(REF).version)
    with open(log_path(tmp_path), "ab") as handle:  # someone ignoring the protocol
        handle.write(checksummed({"k": "a", "e": {}}).encode() + b"\n")
    size = log_path(tmp_path).stat().st_size
    with pytest.raises(SessionConflictError, match="claim was lost"):
        writer.append_log(claim, [{"k": "a", "e": {}}], durable=False)
    assert log_path(tmp_path).stat().st_size == size
    writer.release_log(claim)


def test_a_replaced_lock_file_voids_the_claim(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    writer = store(tmp_path)
    claim = writer.claim_log(REF, writer.read_log(REF).version)
    lock = log_path(tmp_path).parent / "lock"
    lock.unlink()  # another process can now lock a new file of the same name
    other = store(tmp_path)
    other_claim = other.claim_log(REF, other.read_log(REF).version)
    with pytest.raises(SessionConflictError, match="claim was lost"):
        writer.append_log(claim, [{"k": "a", "e": {}}], durable=False)
    other.release_log(other_claim)
    writer.release_log(claim)


def test_a_released_claim_is_not_kept_alive_by_a_copy_of_its_descriptor(tmp_path: Path) -> None:
    # A child forked between the claim and its release (subprocess, before exec) holds a copy of the lock's
    # descriptor; an flock lives as long as any copy, so release must unlock explicitly, not just close.
    conversation(tmp_path, turns=1)
    holder = store(tmp_path)
    claim = holder.claim_log(REF, holder.read_log(REF).version)
    lock = log_path(tmp_path).parent / "lock"
    copies = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == str(lock):
                copies.append(os.dup(int(name)))
        except OSError:
            continue
    assert copies, "the claim's lock descriptor was not found"
    try:
        holder.release_log(claim)
        again = store(tmp_path)
        again.release_log(again.claim_log(REF, again.read_log(REF).version))
    finally:
        for fd in copies:
            os.close(fd)


def test_a_child_forked_without_exec_neither_keeps_nor_releases_the_parents_claim(tmp_path: Path) -> None:
    conversation(tmp_path, turns=1)
    holder = store(tmp_path)
    version = holder.read_log(REF).version
    claim = holder.claim_log(REF, version)
    go_on, child_done = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: try to let go of what it inherited, then keep running until the parent is done
        holder.release_log(claim)  # the child's copy of the claim is void: this must not unlock the parent's
        del claim
        gc.collect()
        os.write(child_done[1], b"x")
        os.read(go_on[0], 1)
        os._exit(0)
    try:
        assert os.read(child_done[0], 1) == b"x"
        with pytest.raises(SessionConflictError, match="another process is running"):
            store(tmp_path).claim_log(REF, version)  # the parent still holds its claim
        holder.append_log(claim, [{"k": "a", "e": {}}], durable=False)  # and can still use it
        holder.release_log(claim)
        again = store(tmp_path)  # released by the parent, nothing the child holds keeps it
        again.release_log(again.claim_log(REF, again.read_log(REF).version))
    finally:
        os.write(go_on[1], b"x")
        os.waitpid(pid, 0)
        for fd in (*go_on, *child_done):
            os.close(fd)


# -- repairs are reported -----------------------------------------------------------------------------------------


def approve(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approval") != "y":
        event.cancel_tool = "no"


def test_an_interrupt_returned_to_the_caller_is_durable_even_if_the_newline_is_later_damaged(tmp_path: Path) -> None:
    paused = Agent(
        model=ScriptedModel([tool_call("noop", tool_use_id="n1")]),
        tools=[noop],
        hooks=[approve],
        session_manager=store(tmp_path),
    )
    result = paused("go")
    path = log_path(tmp_path)
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")  # the final newline of the interrupt snapshot damaged
    restored = Agent(
        model=ScriptedModel([text("done")]), tools=[noop], hooks=[approve], session_manager=store(tmp_path)
    )
    assert [i.id for i in restored._interrupt_state.unanswered()] == [result.interrupts[0].id]
    assert restored([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "y"}}]).stop_reason == (
        "end_turn"
    )


def test_a_planted_message_nested_deep_but_parseable_is_corrupt_not_a_recursion_error(tmp_path: Path) -> None:
    records = conversation(tmp_path, turns=1)
    path = log_path(tmp_path)
    deep: Any = {"text": "x"}
    for _ in range(900):  # json parses it; walking it in Python would exhaust the stack
        deep = {"n": deep}
    message = {"role": "user", "content": [deep]}
    line = checksummed({"k": "m", "i": 2, "t": "x", "m": message})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(SessionCorruptError, match=f"line {len(records) + 1} is not a valid record"):
        agent(tmp_path)


def test_bytes_anywhere_in_a_message_round_trip_even_in_a_text_block(tmp_path: Path) -> None:
    writer = agent(tmp_path, [text("seen")])
    prompt: Any = [{"text": b"raw"}, {"image": {"format": "png", "source": {"bytes": bytearray(b"\x89PNG")}}}]
    writer(prompt)
    restored = agent(tmp_path)
    assert restored.messages[0]["content"] == [
        {"text": b"raw"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}},  # a bytearray comes back as bytes
    ]
    assert restored.messages[1:] == writer.messages[1:]
