"""Crash safety: a child process writing a session is killed with SIGKILL at random moments.

After each kill a fresh agent restores the session: the stored history must be a prefix of the intended one
(computed by running the same script once, uninterrupted, in this process), no record may be half-read, the
agent state must match the history, and the restored agent must accept a new invocation, after which the log
is clean again. A second family of trials stops on an interrupt: once the child printed ``PAUSED`` (after
``invoke`` returned), the interrupt must survive the kill. Approved tools killed mid-run are in
`test_session_crash_approvals.py`.

Kills are placed by the child's progress, not by the clock alone: the child prints a line after each prompt (or
tool call), and a trial kills it a random fraction of one step after a randomly chosen line. Timing the kill
from a reference run measured earlier made the trials depend on the machine's load at two different moments
(under load the reference ran slow, the children fast, and most kills came after the end).

``STRANDSLIKE_CRASH_TRIALS`` (default 50) sets the number of random kills; ``STRANDSLIKE_CRASH_SEED`` replays a
failing run (the seed is printed, and named in every failure).
"""

import copy
import json
import os
import random
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from session_workers import (
    PAUSE_PROMPT,
    SESSION_ID,
    build_agent,
    child_argv,
    long_script,
    pause_script,
    read_line,
    run_long,
    tool_runs,
)

from strandslike.models import text
from strandslike.session import FileSessionManager
from strandslike.types.content import Message

CRASH_TRIALS = int(os.environ.get("STRANDSLIKE_CRASH_TRIALS", "50"))
PAUSE_TRIALS = max(10, CRASH_TRIALS // 5)
SEED = int(os.environ.get("STRANDSLIKE_CRASH_SEED") or random.SystemRandom().randrange(2**32))
PROMPTS, TOOLS_PER_PROMPT = 30, 10  # 300 tool turns (every third a batch of two), 30 final answers
BIG_TRIALS = max(10, CRASH_TRIALS // 5)
# Large answers written through a slow disk (short writes with pauses): kills often tear the last record.
BIG_PROMPTS, BIG_ANSWER, SLOW_DISK = 6, 100_000, {"chunk": 4096, "pause": 0.001}
NOTES = 30
PATHS = ["old/a.txt", "old/b.txt"]
WORKERS = 3


@dataclass
class Reference:
    """The intended conversation, from one uninterrupted run of the same script in this process."""

    messages: list[Message]
    seconds: float
    interrupt_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def stored_messages(storage: Path) -> list[Message]:
    reader = FileSessionManager(SESSION_ID, storage_dir=storage)
    reader.read_agent(SESSION_ID, "default")
    messages = [m.to_message() for m in reader.list_messages(SESSION_ID, "default")]
    reader.close()
    return messages


def log_file(storage: Path) -> Path:
    return storage / f"session_{SESSION_ID}" / "agents" / "agent_default" / "agent.jsonl"


def reference_run(storage: Path, prompts: int, answer_size: int = 0) -> Reference:
    agent, _ = build_agent(storage, long_script(prompts, TOOLS_PER_PROMPT, answer_size), storage / "tools.log")
    started = time.perf_counter()
    run_long(agent, prompts, TOOLS_PER_PROMPT)
    seconds = time.perf_counter() - started
    return Reference(
        copy.deepcopy(stored_messages(storage)), seconds, extra={"answer_size": answer_size, "prompts": prompts}
    )


@pytest.fixture(scope="module")
def long_reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return reference_run(tmp_path_factory.mktemp("long_reference"), PROMPTS)


@pytest.fixture(scope="module")
def big_reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    reference = reference_run(tmp_path_factory.mktemp("big_reference"), BIG_PROMPTS, BIG_ANSWER)
    reference.extra["slow_disk"] = SLOW_DISK
    # One child runs to the end on the slow disk: it must write the same history, and it times the run.
    storage = tmp_path_factory.mktemp("big_child")
    argv = long_child_argv(storage, reference)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None
        assert read_line(child.stdout, timeout=30) == "START"
        started = time.perf_counter()
        progress = [read_line(child.stdout, timeout=60) for _ in range(BIG_PROMPTS + 1)]
        assert progress == [*(f"P {n}" for n in range(BIG_PROMPTS)), "DONE"]
        reference.seconds = time.perf_counter() - started
        child.communicate(timeout=30)
    assert stored_messages(storage) == reference.messages
    return reference


@pytest.fixture(scope="module")
def pause_reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    storage = tmp_path_factory.mktemp("pause_reference")
    agent, _ = build_agent(storage, pause_script(NOTES, PATHS), storage / "tools.log")
    started = time.perf_counter()
    result = agent(PAUSE_PROMPT)
    seconds = time.perf_counter() - started
    assert result.stop_reason == "interrupt"
    return Reference(copy.deepcopy(stored_messages(storage)), seconds, result.interrupts[0].id)


@dataclass
class KillPlan:
    """When to kill a child: ``wait`` seconds after it prints the ``after``-th progress line (0: right after START).

    A child that prints a line starting with one of ``stops`` before that is killed at once.
    """

    after: int
    wait: float
    progress: str = "P"
    stops: tuple[str, ...] = ("DONE", "PAUSED ")

    def __str__(self) -> str:
        return f"{self.wait:.4f}s after progress line {self.after}"


@dataclass
class Kill:
    """What one trial's child printed and where the kill landed."""

    lines: list[str]
    delay: KillPlan
    torn: bool
    size: int


def run_and_kill(argv: list[str], storage: Path, plan: KillPlan) -> Kill:
    """Start a child, wait for START, then kill it as ``plan`` says."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            first = read_line(child.stdout, timeout=30)
            assert first == "START", first + child.stderr.read().decode()
            lines: list[str] = []
            seen = 0
            while seen < plan.after:
                line = read_line(child.stdout, timeout=30)
                lines.append(line)
                if line.startswith(plan.stops):
                    break
                if line.startswith(plan.progress):
                    seen += 1
            if not lines or not lines[-1].startswith(plan.stops):
                time.sleep(plan.wait)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            lines += child.stdout.read().decode().splitlines()
            errors = child.stderr.read().decode()
            assert child.returncode in (0, -signal.SIGKILL), errors
            assert "Traceback" not in errors, errors
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    raw = log_file(storage).read_bytes()
    return Kill(lines, plan, bool(raw) and not raw.endswith(b"\n"), len(raw))


def check_log_is_clean(storage: Path) -> list[dict[str, Any]]:
    raw = log_file(storage).read_bytes()
    assert raw.endswith(b"\n"), "the log does not end with a complete record after a new invocation"
    records = [json.loads(line) for line in raw.decode().splitlines()]  # every line is valid JSON
    assert records[0]["k"] == "h"
    indices = [record["i"] for record in records if record["k"] == "m"]
    assert indices == list(range(len(indices))), f"message indices are not consecutive: {indices}"
    return records


def check_pairs(messages: list[Message]) -> None:
    """Every tool use is answered by the next message, and every tool result answers the previous one."""
    for index, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if uses and index + 1 < len(messages):
            following = messages[index + 1]
            results = [b["toolResult"]["toolUseId"] for b in following["content"] if "toolResult" in b]
            assert following["role"] == "user"
            assert results == uses, f"message {index + 1} answers {results}, not {uses}"
        results = [b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b]
        if results:
            previous = messages[index - 1] if index else {"content": []}
            assert results == [b["toolUse"]["toolUseId"] for b in previous["content"] if "toolUse" in b]


def tool_results(message: Message) -> int:
    return sum(1 for block in message["content"] if "toolResult" in block)


def verify_long(storage: Path, reference: Reference) -> str:
    stored = stored_messages(storage)
    assert stored == reference.messages[: len(stored)], "the stored history is not a prefix of the intended one"

    restored, model = build_agent(storage, [text("Recovered.")], storage / "after.log")
    assert not restored._interrupt_state.activated
    removed = restored.conversation_manager.removed_message_count
    assert restored.messages == stored[removed:], "the restored window is not the stored history's tail"
    if restored.messages:
        assert restored.messages[0]["role"] == "user"
        assert tool_results(restored.messages[0]) == 0, "the restored window starts with orphan tool results"

    # agent.state is recorded with each tool-result message, so it lags the history by at most that message.
    total = sum(tool_results(m) for m in stored)
    last = next((tool_results(m) for m in reversed(stored) if tool_results(m)), 0)
    assert (restored.state.get("tools_run") or 0) in {total, total - last}

    result = restored("After the crash, say something")
    assert result.stop_reason == "end_turn"
    assert model.calls == 1
    check_pairs(model.requests[0].messages)
    check_log_is_clean(storage)
    after = stored_messages(storage)
    assert after[: len(stored)] == stored
    assert after[-1] == {"role": "assistant", "content": [{"text": "Recovered."}]}
    assert after[-2]["content"][-1] == {"text": "After the crash, say something"}
    assert len(after) == len(stored) + 2
    if stored and stored[-1]["role"] == "assistant" and any("toolUse" in b for b in stored[-1]["content"]):
        return "dangling tool use"
    if len(stored) == len(reference.messages):
        return "finished"
    return "mid-run"


def trial_failure(kind: str, number: int, kill: Kill | None, exc: BaseException) -> AssertionError:
    where = "" if kill is None else f", killed {kill.delay}, torn tail {kill.torn}, output {kill.lines}"
    return AssertionError(
        f"{kind} crash trial {number} failed (STRANDSLIKE_CRASH_SEED={SEED}{where}): {type(exc).__name__}: {exc}"
    )


def long_child_argv(storage: Path, reference: Reference) -> list[str]:
    return child_argv(
        "crash_run",
        storage_dir=str(storage),
        log=str(storage / "tools.log"),
        prompts=reference.extra["prompts"],
        tools_per_prompt=TOOLS_PER_PROMPT,
        answer_size=reference.extra["answer_size"],
        slow_disk=reference.extra.get("slow_disk"),
    )


def long_trial(root: Path, number: int, reference: Reference) -> tuple[str, bool]:
    storage = root / f"long_{number}"
    rng = random.Random(SEED * 10_007 + number + 1_000_003 * bool(reference.extra["answer_size"]))
    argv = long_child_argv(storage, reference)
    kill = None
    try:
        prompts = reference.extra["prompts"]
        # Kill during a random prompt: a random fraction of one prompt's time after the previous one ended.
        plan = KillPlan(rng.randrange(prompts), rng.uniform(0, 1.2 * reference.seconds / prompts))
        kill = run_and_kill(argv, storage, plan)
        return verify_long(storage, reference), kill.torn
    except Exception as exc:
        raise trial_failure("long", number, kill, exc) from exc


@pytest.mark.timeout(600)  # dozens of child processes; a loaded machine may need minutes
def test_sigkill_at_random_moments_leaves_a_restorable_prefix(tmp_path: Path, long_reference: Reference) -> None:
    print(f"STRANDSLIKE_CRASH_SEED={SEED}: {CRASH_TRIALS} kills in a {long_reference.seconds:.2f}s run")
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        outcomes = list(pool.map(lambda n: long_trial(tmp_path, n, long_reference), range(CRASH_TRIALS)))
    kinds = [kind for kind, _ in outcomes]
    summary = {kind: kinds.count(kind) for kind in set(kinds)}
    torn = sum(1 for _, was_torn in outcomes if was_torn)
    print(f"outcomes: {summary}; torn last record in {torn} trials")
    assert kinds.count("finished") <= CRASH_TRIALS // 2, f"most kills came too late to test anything: {summary}"


@pytest.mark.timeout(600)  # dozens of child processes; a loaded machine may need minutes
def test_sigkill_during_large_writes_tears_records_that_restore_ignores(
    tmp_path: Path, big_reference: Reference
) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda n: long_trial(tmp_path, n, big_reference), range(BIG_TRIALS)))
    kinds = [kind for kind, _ in outcomes]
    torn = sum(1 for _, was_torn in outcomes if was_torn)
    summary = {k: kinds.count(k) for k in set(kinds)}
    print(
        f"STRANDSLIKE_CRASH_SEED={SEED}: {big_reference.seconds:.2f}s run; "
        f"large writes on a slow disk {summary}, torn last record {torn} times"
    )
    assert torn >= 1, "no kill tore a record: the slow disk no longer slows the log writer"


def verify_pause(storage: Path, reference: Reference, kill: Kill) -> str:
    paused_lines = [line for line in kill.lines if line.startswith("PAUSED ")]
    stored = stored_messages(storage)
    assert stored == reference.messages[: len(stored)], "the stored history is not a prefix of the intended one"
    log = storage / "tools.log"
    restored, model = build_agent(storage, [text("Deleted.")], log)
    state = restored._interrupt_state
    if paused_lines:
        printed = json.loads(paused_lines[0].removeprefix("PAUSED "))
        assert printed["stop_reason"] == "interrupt"
        assert [i["id"] for i in printed["interrupts"]] == [reference.interrupt_id]
        assert state.activated, "an interrupt returned to the caller was lost"
        assert stored == reference.messages
    if state.activated:
        assert [i.id for i in state.unanswered()] == [reference.interrupt_id]
        result = restored([{"interruptResponse": {"interruptId": reference.interrupt_id, "response": "y"}}])
        assert result.stop_reason == "end_turn"
        assert [run["input"] for run in tool_runs(log) if run["tool"] == "delete_files"] == [PATHS]
        outcome = "paused"
    else:
        result = restored("After the crash, say something")
        assert result.stop_reason == "end_turn"
        assert not any(run["tool"] == "delete_files" for run in tool_runs(log))
        outcome = "mid-run"
    assert model.calls == 1
    check_pairs(model.requests[0].messages)
    check_log_is_clean(storage)
    return outcome


def pause_trial(root: Path, number: int, reference: Reference) -> str:
    storage = root / f"pause_{number}"
    rng = random.Random(SEED * 10_009 + number)
    argv = child_argv("crash_pause", storage_dir=str(storage), log=str(storage / "tools.log"), notes=NOTES, paths=PATHS)
    immediate = number % 2 == 0  # even trials: kill the moment PAUSED is read; odd ones: at a random moment
    steps = NOTES + 1  # a progress line per tool call, then PAUSED
    if immediate:
        plan = KillPlan(steps + 1, 0.0, progress="T")
    else:
        plan = KillPlan(rng.randrange(steps + 1), rng.uniform(0, 1.2 * reference.seconds / steps), progress="T")
    kill = None
    try:
        kill = run_and_kill(argv, storage, plan)
        if immediate:
            assert kill.lines[-1].startswith("PAUSED "), kill.lines
        return verify_pause(storage, reference, kill)
    except Exception as exc:
        raise trial_failure("pause", number, kill, exc) from exc


@pytest.mark.timeout(600)  # dozens of child processes; a loaded machine may need minutes
def test_an_interrupt_returned_to_the_caller_survives_sigkill(tmp_path: Path, pause_reference: Reference) -> None:
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        outcomes = list(pool.map(lambda n: pause_trial(tmp_path, n, pause_reference), range(PAUSE_TRIALS)))
    summary = {kind: outcomes.count(kind) for kind in set(outcomes)}
    print(f"STRANDSLIKE_CRASH_SEED={SEED}: pause trials {summary}")
    assert summary.get("paused", 0) >= PAUSE_TRIALS // 2  # every immediate kill restores the interrupt
