"""What `Agent.__init__` makes of its ``model`` and ``retry_strategy`` arguments."""

from typing import Any

from ..models.model import Model
from ._retry import ModelRetryStrategy


class _DefaultRetryStrategy:
    """Marks an omitted ``retry_strategy`` (None means "no retries", so it cannot be the default)."""

    def __repr__(self) -> str:
        return "<default ModelRetryStrategy>"


DEFAULT_RETRY_STRATEGY: Any = _DefaultRetryStrategy()


def resolve_model(model: Any) -> Model | None:
    """Return the agent's model: a `Model`, a duck-typed provider, or a `BedrockModel` for a model id string.

    Raises:
        TypeError: ``model`` is none of these.
    """
    if model is None or isinstance(model, Model):
        return model
    if isinstance(model, str):
        if not model.strip():
            raise TypeError(
                "model='' is not a model id. Pass a Bedrock model id such as "
                "'us.anthropic.claude-sonnet-4-20250514-v1:0', or a Model instance."
            )
        from ..models.bedrock import BedrockModel  # boto3 is imported only when the model is used

        return BedrockModel(model_id=model)
    if callable(getattr(model, "stream", None)):
        return model  # type: ignore[no-any-return]  # a duck-typed provider with Strands' stream() signature
    raise TypeError(
        f"model must be a strandslike.models.Model, a Bedrock model id string, or None; got {type(model).__name__}"
    )


def resolve_retry_strategy(retry_strategy: Any) -> ModelRetryStrategy:
    """Return the strategy to register: the default one, the caller's, or one that never retries (None).

    Raises:
        ValueError: ``retry_strategy`` is not a `ModelRetryStrategy` (Strands' error and message).
    """
    if isinstance(retry_strategy, _DefaultRetryStrategy):
        return ModelRetryStrategy()
    if retry_strategy is None:
        return ModelRetryStrategy(max_attempts=1)
    if not isinstance(retry_strategy, ModelRetryStrategy):
        raise ValueError("retry_strategy must be an instance of ModelRetryStrategy")
    return retry_strategy
