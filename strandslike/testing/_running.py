"""Answering interrupts and running an agent (or a Graph, or a Swarm) until it finishes, for tests."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..interrupt import Interrupt, InterruptAnswerContent
from ..types.exceptions import StrandslikeError

_UNSET: Any = object()


class StillInterruptedError(StrandslikeError, RuntimeError):
    """`run_until_done` answered interrupts ``max_rounds`` times and the run is still interrupted."""

    code = "STILL_INTERRUPTED"

    def __init__(self, rounds: int, interrupts: Iterable[Interrupt]) -> None:
        names = ", ".join(f"{interrupt.name} ({interrupt.id})" for interrupt in interrupts)
        super().__init__(
            f"The run was still interrupted after {rounds} rounds of answers; it now waits on: {names}. An answer "
            "that makes the agent ask again (a denial a hook re-asks about, a tool that interrupts in a loop) never "
            "ends: answer differently, or raise max_rounds if the run really needs more."
        )


def pending_interrupts(result: Any) -> list[Interrupt]:
    """Return the interrupts an agent's or orchestrator's result waits on (none if it finished)."""
    stop_reason = getattr(result, "stop_reason", None)
    status = getattr(getattr(result, "status", None), "value", None)
    if stop_reason == "interrupt" or status == "interrupted":
        return list(getattr(result, "interrupts", None) or ())
    return []


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and "interruptResponse" in value


def answer_all(
    pending: Any,
    answer: Any = _UNSET,
    *,
    by_name: Mapping[str, Any] | None = None,
) -> list[InterruptAnswerContent]:
    """Build the resume that answers every pending interrupt.

    ```python
    paused = agent("delete the old files")
    done = agent(answer_all(paused, "y"))
    done = agent(answer_all(paused, lambda interrupt: interrupt.cancel()))  # any resume action
    done = agent(answer_all(paused, by_name={"approval": "y", "otp": "123456"}))
    ```

    Args:
        pending: An `AgentResult` or `MultiAgentResult` that stopped on interrupts, or the interrupts themselves.
        answer: The answer to give every interrupt, or a function called with each `Interrupt` that returns its
            answer or a whole resume block (``interrupt.respond(...)``, ``interrupt.restart(...)``,
            ``interrupt.cancel()``).
        by_name: Answers (or such functions) by interrupt name, for runs that raise different interrupts; names
            not listed fall back to ``answer``.

    Returns:
        One ``interruptResponse`` block per pending interrupt, in the order they were raised.

    Raises:
        ValueError: An interrupt has no answer: its name is not in ``by_name`` and no ``answer`` was given.
    """
    interrupts = pending_interrupts(pending) if not isinstance(pending, Iterable) else list(pending)
    blocks: list[InterruptAnswerContent] = []
    for interrupt in interrupts:
        given = by_name[interrupt.name] if by_name is not None and interrupt.name in by_name else answer
        if given is _UNSET:
            known = ", ".join(sorted(by_name or {})) or "none"
            raise ValueError(
                f"No answer for interrupt {interrupt.name!r} ({interrupt.id}): pass answer=... for every interrupt, "
                f"or add {interrupt.name!r} to by_name (it answers: {known})."
            )
        value = given(interrupt) if callable(given) else given
        blocks.append(value if _is_block(value) else interrupt.resume(value))
    return blocks


def run_until_done(
    target: Any,
    prompt: Any,
    answer: Any = _UNSET,
    *,
    by_name: Mapping[str, Any] | None = None,
    max_rounds: int = 10,
    **kwargs: Any,
) -> Any:
    """Invoke an agent, a Graph or a Swarm and answer its interrupts until it finishes; return the final result.

    ```python
    result = run_until_done(agent, "delete the old files", "y")
    assert result.stop_reason == "end_turn"
    ```

    Args:
        target: What to invoke: anything called as ``target(prompt)`` returning an `AgentResult` or a
            `MultiAgentResult`.
        prompt: The first prompt (or task).
        answer: How to answer each round's interrupts (see `answer_all`).
        by_name: Answers by interrupt name (see `answer_all`).
        max_rounds: How many rounds of answers to give before giving up.
        **kwargs: Passed to every invocation (e.g. ``invocation_state=...``).

    Raises:
        StillInterruptedError: The run is still interrupted after ``max_rounds`` rounds.
        ValueError: The run was interrupted and no answer applies to one of its interrupts.
    """
    result = target(prompt, **kwargs)
    for _ in range(max_rounds):
        if not pending_interrupts(result):
            return result
        result = target(answer_all(result, answer, by_name=by_name), **kwargs)
    _check_done(result, max_rounds)
    return result


async def run_until_done_async(
    target: Any,
    prompt: Any,
    answer: Any = _UNSET,
    *,
    by_name: Mapping[str, Any] | None = None,
    max_rounds: int = 10,
    **kwargs: Any,
) -> Any:
    """Async twin of `run_until_done`, through ``target.invoke_async``."""
    invoke: Callable[..., Any] = target.invoke_async
    result = await invoke(prompt, **kwargs)
    for _ in range(max_rounds):
        if not pending_interrupts(result):
            return result
        result = await invoke(answer_all(result, answer, by_name=by_name), **kwargs)
    _check_done(result, max_rounds)
    return result


def _check_done(result: Any, rounds: int) -> None:
    waiting = pending_interrupts(result)
    if waiting:
        raise StillInterruptedError(rounds, waiting)


__all__ = ["StillInterruptedError", "answer_all", "pending_interrupts", "run_until_done", "run_until_done_async"]
