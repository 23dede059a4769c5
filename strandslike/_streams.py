"""Turning a run that reports events through a callback into an async iterator of those events."""

import math
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
Emit = Callable[[dict[str, Any]], None]


async def iterate_events(
    run: Callable[[Emit], Awaitable[T]], final_event: Callable[[T], dict[str, Any]]
) -> AsyncGenerator[dict[str, Any], None]:
    """Run ``run(emit)`` in a task and yield what it emits as it happens, then ``final_event(result)``.

    The run's exception is raised here with its own type. If the consumer stops early (``break`` inside
    ``contextlib.aclosing``, or ``aclose()``), the run is cancelled and the generator closes cleanly.
    """
    import anyio  # imported on first use, not with strandslike

    send, receive = anyio.create_memory_object_stream[dict[str, Any]](math.inf)
    failure: list[Exception] = []

    async def runner() -> None:
        async with send:
            try:
                result = await run(send.send_nowait)
            except Exception as exc:
                failure.append(exc)
                return
            send.send_nowait(final_event(result))

    async with anyio.create_task_group() as group:
        group.start_soon(runner)
        with receive:
            try:
                async for event in receive:
                    yield event
            except GeneratorExit:
                # Closed early: stop the run and leave the task group normally (re-raising here would come out of
                # the task group wrapped in a BaseExceptionGroup).
                group.cancel_scope.cancel()
                return
    if failure:
        raise failure[0]
