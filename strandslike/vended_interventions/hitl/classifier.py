"""The LLM risk classifier of `HumanInTheLoop`: a model decides whether a tool call needs a human.

The built-in classifier asks a model (``LLMClassifierConfig.model``, else the agent's ``aux_model`` if it has
one, else the agent's model) through a small inner `Agent` with structured output ``_RiskDecision(requires_approval,
reason)``, as Strands does. It works with any `Model`, `ScriptedModel` included: script the classifier's turn as
``structured_output_call(_RiskDecision, ...)`` or ``tool_call("_RiskDecision", requires_approval=True,
reason="...")``. Any failure (no model, no decision, an error) makes `HumanInTheLoop` ask a human: the classifier
fails closed.
"""

import inspect
import json
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ...hooks.events import BeforeToolCallEvent
from ...models.model import Model

logger = logging.getLogger(__name__)


@dataclass
class ClassifierResult:
    """A classifier's decision.

    Attributes:
        requires_human_in_the_loop: Whether a human must approve the call.
        reason: A short reason, shown in the approval prompt.
    """

    requires_human_in_the_loop: bool
    reason: str | None = field(default=None)


@runtime_checkable
class HumanInTheLoopClassifier(Protocol):
    """A callable (sync or async) deciding whether a tool call needs a human's approval."""

    def __call__(self, event: BeforeToolCallEvent, **kwargs: Any) -> ClassifierResult | Awaitable[ClassifierResult]:
        """Return (or resolve to) a `ClassifierResult` for the call of ``event``."""
        ...


@dataclass
class LLMClassifierConfig:
    """Settings of the built-in LLM risk classifier.

    Attributes:
        system_prompt: The risk criteria (default: a general-purpose prompt).
        model: The model to ask; default the agent's ``aux_model`` if it has one, else its model.
    """

    system_prompt: str | None = field(default=None)
    model: Model | None = field(default=None)


DEFAULT_SYSTEM_PROMPT = """\
You review the tool calls of an AI agent and decide, for each one, whether a human must approve it before it runs.

Ask for approval when the call:
- deletes or overwrites data, or does anything that cannot be undone;
- changes shared or production systems, permissions or configuration;
- reads or sends credentials, secrets, personal or financial data;
- reaches the outside world: sends messages or e-mail, posts, pays, calls external services;
- affects many records, users or systems at once.

Do not ask when the call only reads data that is not sensitive, works on local or temporary resources, is easy to
undo, or touches a single resource of no importance.

Judge this call with these arguments: what is the worst it could do? If you are unsure, ask for approval.
Answer by calling the _RiskDecision tool, with a reason of at most ten words (a person reads it in a prompt)."""


class _RiskDecision(BaseModel):
    """Whether a tool call requires human approval."""

    requires_approval: bool = Field(description="Whether this tool call requires human approval before executing")
    reason: str = Field(description="Brief reason (under 10 words) why approval is or is not required")


async def classify(classifier: HumanInTheLoopClassifier, event: BeforeToolCallEvent) -> ClassifierResult:
    """Run the classifier; any failure or malformed result means a human must approve (fail closed)."""
    tool_name = event.tool_use["name"]
    try:
        raw: Any = classifier(event)
        if inspect.isawaitable(raw):
            raw = await raw
    except Exception as error:
        logger.warning("tool=<%s> | classifier failed, defaulting to approval required", tool_name, exc_info=error)
        return ClassifierResult(requires_human_in_the_loop=True)
    if not isinstance(raw, ClassifierResult):
        logger.warning("tool=<%s> | classifier returned malformed result, defaulting to approval required", tool_name)
        return ClassifierResult(requires_human_in_the_loop=True)
    decision: Any = raw.requires_human_in_the_loop  # a dataclass does not check its field types
    if not isinstance(decision, bool):
        logger.warning(
            "tool=<%s> | classifier returned a non-boolean decision (%r), defaulting to approval required",
            tool_name,
            decision,
        )
        return ClassifierResult(requires_human_in_the_loop=True)
    return raw


def _create_llm_risk_classifier(config: LLMClassifierConfig | None = None) -> HumanInTheLoopClassifier:
    """Return the built-in classifier, configured by ``config``."""
    system_prompt = (config.system_prompt if config else None) or DEFAULT_SYSTEM_PROMPT
    configured_model = config.model if config else None

    async def classifier(event: BeforeToolCallEvent, **kwargs: Any) -> ClassifierResult:
        model = configured_model or getattr(event.agent, "aux_model", None) or event.agent.model
        if model is None:
            raise ValueError(
                "LLM risk classifier has no model: pass one in LLMClassifierConfig(model=...), or give the agent a "
                "model"
            )
        tool_use = event.tool_use
        prompt = (
            "Should this tool call require human approval?\n\n"
            f"Tool: {tool_use['name']}\n"
            f"Input: {json.dumps(tool_use['input'], indent=2, default=str)}"
        )
        decision = await _ask_model(model, system_prompt, prompt)
        return ClassifierResult(requires_human_in_the_loop=decision.requires_approval, reason=decision.reason)

    return classifier


async def _ask_model(model: Model, system_prompt: str, prompt: str) -> _RiskDecision:
    from ...agent.agent import Agent

    inner = Agent(model=model, system_prompt=system_prompt, callback_handler=None)
    result = await inner.invoke_async(prompt, structured_output_model=_RiskDecision)
    decision = result.structured_output
    if not isinstance(decision, _RiskDecision):
        raise ValueError(f"LLM risk classifier produced no structured output (stop_reason={result.stop_reason!r})")
    return decision


__all__ = ["ClassifierResult", "HumanInTheLoopClassifier", "LLMClassifierConfig"]
