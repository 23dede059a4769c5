"""Exception types.

Names mirrored from Strands keep Strands' spelling (``...Exception``); new errors end in ``Error`` and derive
from `StrandslikeError` plus the closest builtin, so ported ``except`` clauses keep catching them.
"""

import reprlib
from typing import Any

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 60, 60, 60


def safe_repr(value: Any) -> str:
    """Return a short repr of any value, even one too deep or too large for `repr` (used in error messages)."""
    try:
        return _REPR.repr(value)
    except Exception:  # a huge int, a hostile __repr__: say what it is instead
        return f"<{type(value).__name__}>"


class StrandslikeError(Exception):
    """Base class of every error strandslike defines itself.

    Attributes:
        code: A stable, machine-readable name of the error (``"INVALID_ID"``, ``"UNKNOWN_INTERRUPT_ID"``, ...) for
            agents, orchestrators and clients to act on; messages may change, codes do not.
    """

    code: str = "STRANDSLIKE_ERROR"


class EventLoopException(Exception):
    """An exception raised inside the event loop, with the request state at the time (Strands name)."""

    def __init__(self, original_exception: Exception, request_state: Any = None) -> None:
        self.original_exception = original_exception
        self.request_state = request_state if request_state is not None else {}
        super().__init__(str(original_exception))


class MaxTokensReachedException(Exception):
    """The model stopped because it reached its output-token limit (Strands name)."""


class ContextWindowOverflowException(Exception):
    """The conversation no longer fits the model's context window (Strands name)."""


class ModelThrottledException(Exception):
    """The model provider throttled the request (Strands name)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class StructuredOutputException(Exception):
    """The model did not produce valid structured output (Strands name)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class StructuredOutputValidationError(StrandslikeError, StructuredOutputException):
    """The model's structured output failed validation more times than allowed."""

    code = "STRUCTURED_OUTPUT_INVALID"

    def __init__(self, output_model: str, attempts: int, detail: str) -> None:
        self.output_model = output_model
        self.attempts = attempts
        super().__init__(
            f"The model's structured output failed validation against {output_model} {attempts} time"
            f"{'' if attempts == 1 else 's'} in a row, so the run was stopped. Last error: {detail}. The conversation "
            "keeps every attempt; make the output model easier to fill (describe its fields), use a stronger model, "
            "or invoke the agent again to let it retry."
        )


class ProviderNotInstalledError(StrandslikeError, ImportError):
    """A model provider's SDK is not installed."""

    code = "PROVIDER_NOT_INSTALLED"

    def __init__(self, provider: str, package: str, extra: str) -> None:
        self.provider = provider
        self.package = package
        self.extra = extra
        super().__init__(
            f"{provider} needs the {package!r} package, which is not installed. "
            f"Install it with: pip install 'strandslike[{extra}]'",
            name=package,
        )


class ConcurrencyException(Exception):
    """The agent is already running an invocation (Strands name)."""


class IdempotencyAbortedError(Exception):
    """An invocation waited on a duplicate ``idempotency_token`` whose invocation ended without a result (Strands)."""


class SessionException(Exception):
    """A session could not be read or written (Strands name)."""


class ToolProviderException(Exception):
    """A tool provider failed to load or clean up its tools (Strands name)."""


class ModelNotConfiguredError(StrandslikeError, ValueError):
    """The agent was invoked without a model."""

    code = "MODEL_NOT_CONFIGURED"

    def __init__(self) -> None:
        super().__init__(
            "This agent has no model, and strandslike never picks one that would call the network. "
            "Pass one: Agent(model=YourProvider(...)) for a real LLM, or "
            "Agent(model=ScriptedModel([...])) from strandslike.models for tests and demos."
        )


class NotJSONSerializableError(StrandslikeError, TypeError, ValueError):
    """A value that must be persisted is not JSON-serializable (a `TypeError`, and a `ValueError` as in Strands)."""

    code = "NOT_JSON_SERIALIZABLE"

    def __init__(self, what: str, value: Any, detail: str) -> None:
        self.what = what
        self.value = value
        self.detail = detail
        super().__init__(
            f"{what} must be JSON-serializable so it can be persisted and sent to clients, "
            f"but {safe_repr(value)} is not ({detail}). Use dicts with string keys, lists, valid Unicode strings, "
            "finite numbers, booleans and None. Nothing was changed."
        )


class ToolNameConflictError(StrandslikeError, ValueError):
    """Two tools given to one agent share a name."""

    code = "TOOL_NAME_CONFLICT"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"Tool name '{name}' already exists. Cannot register tools with exact same name. Tool names must be "
            "unique within an agent; rename one with @tool(name=...)."
        )


class SessionConflictError(StrandslikeError, SessionException):
    """Another writer holds or changed the session since this agent loaded it."""

    code = "SESSION_CONFLICT"

    def __init__(self, session_id: str, agent_id: str, detail: str) -> None:
        self.session_id = session_id
        self.agent_id = agent_id
        self.detail = detail
        super().__init__(
            f"session_id=<{session_id}>, agent_id=<{agent_id}> | {detail}. Nothing was written and no tool ran; "
            "build a fresh Agent for this session (it reloads the latest state) and retry."
        )


class SessionCorruptError(StrandslikeError, SessionException):
    """A session file cannot be read: corrupt, foreign, or from an unknown format."""

    code = "SESSION_CORRUPT"

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        super().__init__(f"{path}: {detail}")


class InvalidIdError(StrandslikeError, ValueError):
    """A session, agent, orchestrator or thread id is refused (see `strandslike._identifier`); nothing was written.

    Attributes:
        kind: What the id names (``"session"``, ``"agent"``, ...).
        problem: Why it was refused.
    """

    code = "INVALID_ID"

    def __init__(self, kind: str, value: object, problem: str) -> None:
        self.kind = kind
        self.problem = problem
        super().__init__(
            f"{kind}_id={safe_repr(value)} | {problem}. Use letters, digits, '-', '_' or '.' "
            "(at most 128 bytes). Nothing was written."
        )


class InvalidStorageDirError(StrandslikeError, ValueError):
    """A file store's ``storage_dir`` is not a directory path (a database DSN, say); nothing was created.

    Attributes:
        storage_dir: The value given.
    """

    code = "INVALID_STORAGE_DIR"

    def __init__(self, storage_dir: object, problem: str) -> None:
        self.storage_dir = storage_dir
        super().__init__(f"storage_dir={safe_repr(storage_dir)} | {problem}. Nothing was created.")


class InvalidPromptError(StrandslikeError, TypeError, ValueError):
    """An agent's input is neither a valid prompt nor storable; nothing was appended and nothing ran.

    A `TypeError` and a `ValueError`: Strands raises either for invalid input, depending on the shape.
    """

    code = "INVALID_PROMPT"


class InvalidInterruptError(StrandslikeError, TypeError, ValueError):
    """A hook or tool raised an interrupt with invalid details (name, message, kind, schema); nothing was recorded."""

    code = "INVALID_INTERRUPT"


class InvalidStateKeyError(StrandslikeError, ValueError):
    """An `agent.state` key is not a non-empty string of valid Unicode (a `ValueError`, as in Strands)."""

    code = "INVALID_STATE_KEY"


class MissingExtraError(StrandslikeError, ImportError):
    """A feature needs an optional dependency that is not installed.

    Attributes:
        extra: The extra that installs it, e.g. ``"agui"`` for ``pip install 'strandslike[agui]'``.
    """

    code = "MISSING_EXTRA"

    def __init__(self, feature: str, extra: str, missing: str | None) -> None:
        self.extra = extra
        super().__init__(
            f"{feature} needs the {missing or extra!r} package, which is not installed. Install the {extra!r} "
            f"extra: pip install 'strandslike[{extra}]'",
            name=missing,
        )


class UnsupportedPlatformError(StrandslikeError, ImportError):
    """A feature relies on operating-system services this platform does not offer."""

    code = "UNSUPPORTED_PLATFORM"


class UnclaimedSessionWarning(StrandslikeError, UserWarning):
    """A session manager was built over a repository that cannot claim sessions (a custom Strands repository)."""

    code = "UNCLAIMED_SESSION"

    def __init__(self, repository: str, session_id: str) -> None:
        self.repository = repository
        self.session_id = session_id
        super().__init__(
            f"{repository} does not implement the durable log contract (its supports_claims is False), so session "
            f"{session_id!r} is persisted through Strands' record API only: two processes can resume it at the same "
            "time and both run an approved tool, a restore can mix two versions of the session, and a crash while a "
            "tool runs cannot be told apart from a tool that never started. One process per session is safe. To run "
            "more, use FileSessionManager, InMemorySessionRepository, or a repository that implements read_log, "
            "claim_log, append_log, release_log, list_logs and list_sessions (subclass "
            "strandslike.session.LogSessionRepository and check it with strandslike.testing.session_conformance)."
        )


class InvalidAgentStateError(StrandslikeError, TypeError, ValueError):
    """An agent's initial state is neither an `AgentState` nor a dict (a `ValueError`, as in Strands)."""

    code = "INVALID_AGENT_STATE"

    def __init__(self, state: Any) -> None:
        self.state = state
        super().__init__(
            f"state must be an AgentState object or a dict, got {type(state).__name__}. "
            "Pass Agent(state={...}) with JSON-serializable values, or an AgentState."
        )


class SessionStorageError(StrandslikeError, SessionException):
    """A session file could not be written (permissions, a full disk, a file where a directory belongs)."""

    code = "SESSION_STORAGE"

    def __init__(self, path: str, error: OSError) -> None:
        self.path = path
        self.error = error
        super().__init__(
            f"{path}: cannot be written ({error.strerror or error}). Check that the storage directory exists and "
            "is writable by this user; the session was left as it was."
        )
