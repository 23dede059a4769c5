"""The only bridge from blocking calls into the async core."""

import contextvars
import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def run_sync(async_fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Run an async function to completion from blocking code, with or without a running event loop.

    Args:
        async_fn: The coroutine function to run.
        *args: Its positional arguments.
        **kwargs: Its keyword arguments.
    """
    call = functools.partial(async_fn, *args, **kwargs)

    async def main() -> T:
        return await call()

    # Imported on first use, not with strandslike: asyncio is the largest part of anyio's start-up.
    import asyncio

    import anyio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # the common case: no loop in this thread
        return anyio.run(main)
    # A loop already runs here (a notebook, an async handler): use a fresh loop in one worker thread.
    from concurrent.futures import ThreadPoolExecutor

    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(lambda: context.run(lambda: anyio.run(main)))
        return future.result()
