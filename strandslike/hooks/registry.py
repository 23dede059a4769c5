"""The hook registry: Strands' registration and ordering API on top of a pluggy ``PluginManager``.

pluggy supplies registration, plugin objects with ``@hookimpl`` methods, entry-point discovery and the
plugin bookkeeping. It neither sorts by a numeric order nor awaits coroutines, and it dispatches by hook name,
so the registry computes the call order itself (by ``order``, then registration; reversed within an ``order``
group for After* events), dispatches by the exact event class, and awaits whatever a callback returns that is
awaitable (async functions and objects with an ``async __call__`` alike).
"""

import functools
import inspect
import itertools
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

import pluggy

from ..interrupt import Interrupt, InterruptException
from ..types.interrupt import RUNNING_HOOK, _Interruptible
from . import events as _events
from ._type_inference import infer_event_types
from .events import AgentInitializedEvent, BaseHookEvent

PROJECT = "strandslike"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

TEvent = TypeVar("TEvent", bound=BaseHookEvent)


class HookOrder:
    """Named ``order`` values; callbacks with a lower order run first, for every event."""

    SDK_FIRST: float = -100
    INTERVENTION_OUTPUT: float = -90
    DEFAULT: float = 0
    MODEL_ROUTING: float = 50
    INTERVENTION_INPUT: float = 90
    SDK_LAST: float = 100


class HookCallback(Protocol[TEvent]):  # type: ignore[misc]
    """A callable that receives one event; it may be a coroutine function."""

    def __call__(self, event: TEvent, /) -> Awaitable[None] | None:
        """Handle the event."""


@runtime_checkable
class HookProvider(Protocol):
    """An object that registers a related set of callbacks."""

    def register_hooks(self, registry: "HookRegistry", **kwargs: Any) -> None:
        """Register this provider's callbacks on ``registry``."""


def hook_name(event_type: type[BaseHookEvent]) -> str:
    """Return the pluggy hook name of an event class: its name in snake_case, without ``Event``."""
    name = event_type.__name__.removesuffix("Event") or event_type.__name__
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


_DEFAULT_DIRECTION = BaseHookEvent.should_reverse_callbacks

BUILTIN_EVENTS: tuple[type[BaseHookEvent], ...] = tuple(
    cls
    for cls in vars(_events).values()
    if isinstance(cls, type) and issubclass(cls, BaseHookEvent) and cls not in (BaseHookEvent, _events.HookEvent)
)
_BUILTIN_NAMES: dict[str, type[BaseHookEvent]] = {hook_name(cls): cls for cls in BUILTIN_EVENTS}


class _CallbackPlugin:
    """Adapts one Strands-style callback into a pluggy plugin; subclasses name the hookimpl after the event."""

    __slots__ = ("callback", "order", "seq")
    hook_attr: str = ""  # the attribute holding the hookimpl (set by each subclass)

    def __dir__(self) -> list[str]:
        # pluggy looks for hookimpls among dir(plugin); an adapter has one (see _PluginManager).
        return [self.hook_attr]

    def __init__(self, callback: Callable[..., Any], order: float, seq: int) -> None:
        self.callback = callback
        self.order = order
        self.seq = seq


_PLUGIN_CLASSES: dict[str, type[_CallbackPlugin]] = {}


def _callback_plugin_class(name: str) -> type[_CallbackPlugin]:
    cls = _PLUGIN_CLASSES.get(name)
    if cls is None:

        def impl(self: _CallbackPlugin, event: Any) -> Any:
            return self.callback(event)

        cls = type(f"_Callback_{name}", (_CallbackPlugin,), {"__slots__": (), name: hookimpl(impl), "hook_attr": name})
        _PLUGIN_CLASSES[name] = cls
    return cls


class _Specs:
    """A namespace holding one hookspec ``name(event)`` per event, for ``add_hookspecs``.

    pluggy reads every name in ``dir()`` of a namespace; this one lists only its specs (a module would add its own
    attributes to read, for every registry).
    """

    def __init__(self, names: Iterable[str]) -> None:
        self._names = list(names)
        for name in self._names:

            def spec(event: Any) -> None:
                """Receive one event."""

            setattr(self, name, hookspec(spec))

    def __dir__(self) -> list[str]:
        return list(self._names)


def _spec_module(names: Iterable[str]) -> _Specs:
    """Build the namespace of the hookspecs of ``names``."""
    return _Specs(names)


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, told where a callback adapter's one hookimpl is.

    Registering a plugin makes pluggy read every attribute of it with ``inspect.getattr_static`` to find its
    hookimpls; for the adapters of Strands-style callbacks, which have exactly one, that was most of the cost of
    building an agent (a new agent per request, in a server). Other plugins are inspected as pluggy does.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if isinstance(plugin, _CallbackPlugin) and name != type(plugin).hook_attr:
            return None
        return super().parse_hookimpl_opts(plugin, name)


class HookRegistry:
    """Registers hook callbacks and dispatches events to them in Strands 1.62's order."""

    def __init__(self) -> None:
        self._pm: pluggy.PluginManager = _PluginManager(PROJECT)
        self._hook_names: dict[type[BaseHookEvent], str] = {}
        self._seq = itertools.count()
        self._plugin_seq: dict[int, int] = {}
        self._ordered: dict[type[BaseHookEvent], tuple[Callable[[Any], Any], ...]] = {}
        # Hook names with at least one implementation: dispatching an event nobody listens to stays O(1), also the
        # first time (a new agent per request would otherwise pay for sorting every event's empty hook list).
        self._active: set[str] = set()
        # The hookspecs of the built-in events are added when a pluggy-style plugin may need them (a plugin, entry
        # points, or the plugin manager handed out); a callback adds the spec of its own event. Parsing all of them
        # for every registry was a tenth of the cost of a request in a server that builds an agent per request.
        self._builtin_specs = False
        # Call orders of event classes that decide their direction per instance (a Strands-style subclass
        # overriding `should_reverse_callbacks`), by (class, reversed).
        self._by_direction: dict[tuple[type[BaseHookEvent], bool], tuple[Callable[[Any], Any], ...]] = {}
        # Strands-style callbacks are kept here, (order, seq, callback) by event class, and registered with pluggy
        # only when pluggy is involved: a pluggy-style plugin, entry points, or the plugin manager handed out (see
        # `_materialize`); None from then on. Registering one with pluggy (an adapter plugin, its hookspec, pluggy's
        # checks) cost about 50 µs; an agent registers about a dozen, and a server builds agents per request.
        self._own: dict[type[BaseHookEvent], list[tuple[float, int, Callable[[Any], Any]]]] | None = {}

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The underlying pluggy plugin manager (project name ``strandslike``), holding every callback and plugin."""
        self._materialize()
        self._ensure_builtin_specs()
        return self._pm

    def _materialize(self) -> None:
        """Register the callbacks kept so far with pluggy; from now on every registration goes through pluggy.

        Each callback keeps its order and registration number, so the call order is the same either way.
        """
        own, self._own = self._own, None
        if not own:
            return
        pending = sorted(
            (
                (seq, event_type, order, callback)
                for event_type, entries in own.items()
                for order, seq, callback in entries
            ),
            key=lambda entry: entry[0],
        )
        self._ensure_specs(own)
        for seq, event_type, order, callback in pending:
            self._register_callback(event_type, callback, order, seq)
        self._forget_order()

    def _register_callback(self, event_type: type[BaseHookEvent], callback: Any, order: float, seq: int) -> None:
        name = self._hook_names[event_type]
        self._pm.register(_callback_plugin_class(name)(callback, order, seq), name=f"callback-{seq}")
        self._active.add(name)

    def _ensure_builtin_specs(self) -> None:
        if not self._builtin_specs:
            self._builtin_specs = True
            self._ensure_specs(BUILTIN_EVENTS)

    def _ensure_specs(self, event_types: Iterable[type[BaseHookEvent]]) -> None:
        new: dict[str, type[BaseHookEvent]] = {}
        taken = set(self._hook_names.values())
        for event_type in event_types:
            if event_type in self._hook_names:
                continue
            name = hook_name(event_type)
            if name in taken or name in new or _BUILTIN_NAMES.get(name, event_type) is not event_type:
                # A user event class named like another one, or like a built-in event (whose name stays its own).
                name = f"{name}__{event_type.__module__.replace('.', '_')}_{id(event_type):x}"
            new[name] = event_type
        if new:
            self._pm.add_hookspecs(_spec_module(new))  # type: ignore[arg-type]  # pluggy reads any namespace
            for name, event_type in new.items():
                self._hook_names[event_type] = name

    def add_callback(
        self,
        event_type: type[TEvent] | list[type[TEvent]] | None,
        callback: HookCallback[TEvent],
        *,
        order: float = HookOrder.DEFAULT,
    ) -> None:
        """Register ``callback`` for one event class, a list of them, or (None) those its annotation names.

        Args:
            event_type: The event class(es); None infers them from the callback's first parameter.
            callback: A function, method or object with ``__call__``; async ones are awaited.
            order: Lower runs first; equal orders run in registration order (reversed for After* events).

        Raises:
            ValueError: The event types are invalid or cannot be inferred (Strands' messages).
        """
        event_types = self._resolve_event_types(event_type, callback)
        for resolved in event_types:
            if resolved is AgentInitializedEvent and _is_async_callable(callback):
                raise ValueError("AgentInitializedEvent can only be registered with a synchronous callback")
        own = self._own
        if own is not None:
            for resolved in event_types:
                own.setdefault(resolved, []).append((float(order), next(self._seq), callback))
        else:
            self._ensure_specs(event_types)
            for resolved in event_types:
                self._register_callback(resolved, callback, float(order), next(self._seq))
        self._forget_order()
        for resolved in event_types:
            self._callbacks(resolved)  # order now, at construction, rather than on the first dispatch

    def _resolve_event_types(self, event_type: Any, callback: Any) -> list[type[BaseHookEvent]]:
        if event_type is None:
            return list(dict.fromkeys(infer_event_types(callback)))
        if isinstance(event_type, list):
            if not event_type:
                raise ValueError("event_type list cannot be empty")
            for member in event_type:
                if not (isinstance(member, type) and issubclass(member, BaseHookEvent)):
                    raise ValueError(f"Invalid event type: {member} | must be a subclass of BaseHookEvent")
            return list(dict.fromkeys(event_type))
        if not (isinstance(event_type, type) and issubclass(event_type, BaseHookEvent)):
            raise ValueError(f"Invalid event type: {event_type} | must be a subclass of BaseHookEvent")
        return [event_type]

    def add_hook(self, hook: HookProvider, **kwargs: Any) -> None:
        """Let a provider register its callbacks."""
        hook.register_hooks(self, **kwargs)

    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register a pluggy-style plugin: an object or module with ``@hookimpl`` methods named after events.

        ``tryfirst=True`` maps to `HookOrder.SDK_FIRST` and ``trylast=True`` to `HookOrder.SDK_LAST`.

        Raises:
            ValueError: A hookimpl names no known event, or the plugin is already registered.
        """
        self._materialize()
        self._ensure_builtin_specs()
        registered = self._pm.register(plugin, name)
        if registered is None:
            return
        try:
            self._pm.check_pending()
        except pluggy.PluginValidationError as exc:
            self._pm.unregister(plugin)
            known = ", ".join(sorted(self._hook_names.values()))
            raise ValueError(f"{exc} | hookimpl names must be one of: {known}") from None
        self._plugin_seq[id(plugin)] = next(self._seq)
        self._note_hooks_of(plugin)
        self._forget_order()

    def _note_hooks_of(self, plugin: object) -> None:
        for caller in self._pm.get_hookcallers(plugin) or ():
            self._active.add(caller.name)

    def load_entry_points(self, group: str = PROJECT) -> int:
        """Register the plugins installed under an entry-point group (opt-in); return how many were loaded."""
        self._materialize()
        self._ensure_builtin_specs()
        before = set(map(id, self._pm.get_plugins()))
        count = self._pm.load_setuptools_entrypoints(group)
        for plugin in self._pm.get_plugins():
            if id(plugin) not in before and not isinstance(plugin, _CallbackPlugin):
                self._plugin_seq[id(plugin)] = next(self._seq)
                self._note_hooks_of(plugin)
        self._pm.check_pending()
        self._forget_order()
        return count

    def has_callbacks(self) -> bool:
        """Return whether any callback or plugin is registered."""
        return bool(self._own) or bool(self._pm.get_plugins())

    def get_callbacks_for(self, event: BaseHookEvent) -> list[Callable[[Any], Any]]:
        """Return the callbacks ``event`` will be dispatched to, in call order."""
        return list(self._callbacks_for(event))

    def _forget_order(self) -> None:
        self._ordered.clear()
        self._by_direction.clear()

    def _callbacks_for(self, event: BaseHookEvent) -> tuple[Callable[[Any], Any], ...]:
        """Return the callbacks of ``event`` in call order, asking the event for its direction if it decides it."""
        event_type = type(event)
        if event_type.should_reverse_callbacks is _DEFAULT_DIRECTION:  # a class attribute: `_REVERSE` decides
            return self._callbacks(event_type)
        reverse = bool(event.should_reverse_callbacks)
        cached = self._by_direction.get((event_type, reverse))
        if cached is None:
            cached = self._by_direction[(event_type, reverse)] = self._sorted(event_type, reverse)
        return cached

    def _callbacks(self, event_type: type[BaseHookEvent]) -> tuple[Callable[[Any], Any], ...]:
        """Return the callbacks registered for ``event_type``, in the call order its class attribute gives."""
        cached = self._ordered.get(event_type)
        if cached is not None:
            return cached
        ordered = self._sorted(event_type, event_type._REVERSE)
        self._ordered[event_type] = ordered
        return ordered

    def _sorted(self, event_type: type[BaseHookEvent], reverse: bool) -> tuple[Callable[[Any], Any], ...]:
        entries: list[tuple[float, int, Callable[[Any], Any]]]
        if self._own is not None:  # no pluggy-style plugin yet: the callbacks are all here
            entries = list(self._own.get(event_type, ()))
            entries.sort(key=lambda entry: (entry[0], -entry[1] if reverse else entry[1]))
            return tuple(entry[2] for entry in entries)
        name = self._hook_names.get(event_type)
        if name is None or name not in self._active:
            return ()
        entries = []
        for impl in getattr(self._pm.hook, name).get_hookimpls():
            plugin = impl.plugin
            if isinstance(plugin, _CallbackPlugin):
                entries.append((plugin.order, plugin.seq, plugin.callback))
                continue
            seq = self._plugin_seq.get(id(plugin), -1)
            order = HookOrder.SDK_FIRST if impl.tryfirst else HookOrder.SDK_LAST if impl.trylast else HookOrder.DEFAULT
            entries.append((order, seq, impl.function))
        # Ascending order; within one order, registration order (reversed for After* events).
        entries.sort(key=lambda entry: (entry[0], -entry[1] if reverse else entry[1]))
        return tuple(entry[2] for entry in entries)

    async def invoke_callbacks_async(self, event: TEvent) -> tuple[TEvent, list[Interrupt]]:
        """Dispatch ``event`` to its callbacks in order, awaiting async ones; collect interrupts.

        On an interruptible event every callback runs even after one interrupts, and all interrupts are
        returned together. A callback's exception propagates at once, noted with the event and callback.
        """
        event_type = type(event)
        if event_type.should_reverse_callbacks is _DEFAULT_DIRECTION:  # `_callbacks_for`, inlined: every event
            callbacks = self._ordered.get(event_type)
            if callbacks is None:
                callbacks = self._callbacks(event_type)
        else:
            callbacks = self._callbacks_for(event)
        if not callbacks:
            return event, []
        # This loop is the hot path of every hooked agent: nothing per callback but the call, a None check on what
        # it returned, and (on interruptible events) noting which callback runs, for the interrupt's audit trail.
        interrupts: dict[str, Interrupt] | None = None
        slots: dict[str, Any] | None = _running_slots(event)
        for callback in callbacks:
            if slots is not None:
                slots[RUNNING_HOOK] = callback
            try:
                result = callback(event)
                if result is not None and inspect.isawaitable(result):  # async defs, objects with async __call__
                    await result
            except InterruptException as exc:
                if interrupts is None:
                    interrupts = {}
                self._collect(event, callback, exc, interrupts)
            except Exception as exc:
                exc.add_note(f"raised by hook callback {_describe(callback)} on {type(event).__name__}")
                raise
            finally:
                if slots is not None:
                    slots[RUNNING_HOOK] = None
        return event, [] if interrupts is None else list(interrupts.values())

    def invoke_callbacks(self, event: TEvent) -> tuple[TEvent, list[Interrupt]]:
        """Dispatch ``event`` synchronously; every callback must be synchronous.

        Raises:
            RuntimeError: A callback returned an awaitable.
        """
        interrupts: dict[str, Interrupt] = {}
        slots: dict[str, Any] | None = _running_slots(event)
        for callback in self._callbacks_for(event):
            if slots is not None:
                slots[RUNNING_HOOK] = callback
            try:
                result = callback(event)
            except InterruptException as exc:
                self._collect(event, callback, exc, interrupts)
                continue
            except Exception as exc:
                exc.add_note(f"raised by hook callback {_describe(callback)} on {type(event).__name__}")
                raise
            finally:
                if slots is not None:
                    slots[RUNNING_HOOK] = None
            if result is not None and inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise RuntimeError(f"event=<{event!r}> | use invoke_callbacks_async to invoke async callback")
        return event, list(interrupts.values())

    @staticmethod
    def _collect(
        event: BaseHookEvent, callback: Any, exc: InterruptException, interrupts: dict[str, Interrupt]
    ) -> None:
        if not isinstance(event, _Interruptible):
            raise TypeError(
                f"hook callback {_describe(callback)} raised an interrupt on {type(event).__name__}, which is not "
                "interruptible. Interrupt from BeforeToolCallEvent, BeforeToolsEvent, BeforeModelCallEvent, "
                "BeforeNodeCallEvent or a tool."
            ) from exc
        name = exc.interrupt.name
        if name in interrupts:
            raise ValueError(f"interrupt_name=<{name}> | interrupt name used more than once")
        interrupts[name] = exc.interrupt


def _running_slots(event: Any) -> dict[str, Any] | None:
    """Return where an interruptible event keeps the callback that is running (None for other events)."""
    return event.__dict__ if isinstance(event, _Interruptible) else None


def _describe(callback: Any) -> str:
    return getattr(callback, "__qualname__", None) or repr(callback)


def _is_async_callable(obj: Any) -> bool:
    while isinstance(obj, functools.partial):
        obj = obj.func
    return inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(getattr(obj, "__call__", None))  # noqa: B004
