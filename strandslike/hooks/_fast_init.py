"""A constructor for sealed event dataclasses that stores fields without going through ``__setattr__``."""

import dataclasses
from typing import Any

_NO_VALUE: Any = object()


def fast_init(cls: type) -> None:
    """Give dataclass ``cls`` an ``__init__`` equivalent to the generated one, minus the per-field ``__setattr__``.

    The generated constructor of a sealed event assigns each field through the event's Python-level
    ``__setattr__``; this one writes the instance ``__dict__`` directly and then seals it, as ``__post_init__``
    would. Only classes without ``__slots__``, ``InitVar`` or ``kw_only`` fields, whose ``__post_init__`` is the
    base class's sealing one, are supported (every built-in event).

    Args:
        cls: A dataclass whose instances keep their fields in ``__dict__``.

    Raises:
        TypeError: ``cls`` is not such a dataclass.
    """
    fields = [f for f in dataclasses.fields(cls) if f.init]
    if any(f.kw_only for f in fields) or "__slots__" in vars(cls):
        raise TypeError(f"{cls.__name__}: fast_init supports plain positional dataclass fields only")
    namespace: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    params, body = ["self"], ["d = self.__dict__"]
    for f in fields:
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_NO_VALUE")
            body.append(f"if {f.name} is _NO_VALUE: {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"d[{f.name!r}] = {f.name}")
    body.append("d['_sealed'] = True")
    source = f"def __init__({', '.join(params)}):\n" + "\n".join(f"    {line}" for line in body)
    exec(source, namespace)  # the same technique dataclasses uses to build __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = vars(cls)["__init__"].__doc__
    cls.__init__ = init  # type: ignore[misc]
