"""Stream batches of items produced by a blocking iterator in a worker thread into async code.

boto3's event streams are blocking. Handing every event to the event loop on its own (a queue put plus a loop
wake-up per event, as Strands does) costs a system call per token; here the worker hands over whole batches (the
events decoded from one read of the socket), appends them to a buffer and wakes the loop only when the consumer is
waiting, and the consumer takes everything buffered at once.
"""

import asyncio
import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any

import anyio

_DONE = object()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def iterate_in_thread(
    produce: Callable[[threading.Event], Iterator[list[Any]]], *, name: str = "strandslike-stream"
) -> AsyncGenerator[Any, None]:
    """Run ``produce(stop)`` in a worker thread and yield the items of the lists it yields, as soon as asked.

    ``produce`` yields batches (lists of items); it must check ``stop`` between batches and return once it is set
    (it is set when the consumer stops early or fails). An exception raised by ``produce`` is raised here, after
    the items before it.
    """
    stop = threading.Event()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another anyio backend (trio): collect in a worker thread, then yield (not incremental)
        batches = await anyio.to_thread.run_sync(lambda: list(produce(stop)))
        for batch in batches:
            for item in batch:
                yield item
        return

    buffer: deque[Any] = deque()
    lock = threading.Lock()
    waiter: list[asyncio.Future[None] | None] = [None]

    def wake(future: "asyncio.Future[None]") -> None:
        if not future.done():
            future.set_result(None)

    def push(item: Any) -> None:  # a batch, a _Failure or _DONE
        with lock:
            buffer.append(item)
            future, waiter[0] = waiter[0], None
        if future is not None:
            loop.call_soon_threadsafe(wake, future)

    def work() -> None:
        try:
            for batch in produce(stop):
                push(batch)
                if stop.is_set():
                    break
        except BaseException as exc:  # handed to the consumer, which re-raises it in its own task
            push(_Failure(exc))
        finally:
            push(_DONE)

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while True:
            with lock:
                if buffer:
                    entries = list(buffer)
                    buffer.clear()
                    future = None
                else:
                    entries = []
                    future = waiter[0] = loop.create_future()
            if future is not None:
                await future
                continue
            for entry in entries:
                if entry is _DONE:
                    return
                if isinstance(entry, _Failure):
                    raise entry.error
                for item in entry:
                    yield item
    finally:
        # The worker notices at its next batch and closes its stream itself: closing a botocore stream from
        # another thread while it reads is not safe, and waiting here could block on a stalled connection.
        stop.set()
