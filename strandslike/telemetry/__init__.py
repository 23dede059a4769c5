"""Telemetry: operator logs and OpenTelemetry traces.

**Logs.** Every module logs to ``logging.getLogger(__name__)`` (so everything is under the ``strandslike``
logger) in the form ``key=<value>, key=<value> | what happened``. Nothing is printed unless the application
configures logging (the package logger has a ``NullHandler``). INFO: interrupts raised and answered, retries
asked by hooks. WARNING: resumes refused (with their code), tool failures (with the traceback), repaired tool
uses, refused concurrent sessions, failed model calls that are retried. For example::

    import logging
    logging.basicConfig(level=logging.INFO)  # or: logging.getLogger("strandslike").setLevel(logging.INFO)

**Traces.** ``enable_tracing()`` (or ``STRANDSLIKE_TRACING=1`` in the environment) records OpenTelemetry spans
following the GenAI semantic conventions; see `strandslike.telemetry.spans` for what each span carries. It needs
the ``otel`` extra (``pip install 'strandslike[otel]'``) and is off by default, at no cost.
"""

from .spans import TracingConfigError, disable_tracing, enable_tracing, tracing_enabled

__all__ = ["TracingConfigError", "disable_tracing", "enable_tracing", "tracing_enabled"]
