"""`@hook`: mark a plugin method as a hook callback; its event types come from its annotation.

Example:
    ```python
    class MyPlugin(Plugin):
        name = "my-plugin"

        @hook
        def on_model_call(self, event: BeforeModelCallEvent) -> None:
            print(event)
    ```
"""

from collections.abc import Callable
from typing import Any, TypeVar, overload

from ..hooks._type_inference import infer_event_types

F = TypeVar("F", bound=Callable[..., Any])


@overload
def hook(func: F, /) -> F: ...


@overload
def hook() -> Callable[[F], F]: ...


def hook(func: F | None = None) -> F | Callable[[F], F]:
    """Mark a method as a hook callback, registered when its plugin is attached to an agent or orchestrator.

    Usable as ``@hook`` or ``@hook()``. The event types are inferred from the annotation of the first parameter
    after ``self`` (a union registers the callback for each member) and stored on the function as
    ``_hook_event_types``. The method may be ``async``.

    Raises:
        ValueError: The event type cannot be inferred (no annotation, or not a hook event class).
    """

    def decorate(function: F) -> F:
        function._hook_event_types = infer_event_types(function)  # type: ignore[attr-defined]
        return function

    if func is None:
        return decorate
    return decorate(func)


__all__ = ["hook"]
