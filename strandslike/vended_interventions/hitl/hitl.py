"""`HumanInTheLoop`: an intervention handler that asks a human before tool calls, with policy, trust and audit.

Strands 1.62's handler, with its constructor and behaviour (``allowed_tools`` with ``"*"`` and ``"!tool"``,
``enable_trust``, ``evaluate``, ``evaluate_trust``, ``ask``, ``classifier``), plus:

- ``policy``: an `ApprovalPolicy` (or the path of a policy file) deciding by rule which calls run, which are
  refused and which are asked about;
- trust that can be scoped to arguments, is kept in ``agent.state`` (so a session remembers it), and can be
  listed and revoked (`grant_trust`, `list_trust`, `revoke_trust`, and ``python -m strandslike sessions trust``);
- every decision in ``agent.interrupt_audit``, with the rule or the person that decided;
- ``ask_timeout``: an inline ``ask`` that does not answer in time falls back to interrupt and resume;
- interrupts that carry a ``message``, a ``response_schema`` and ``metadata`` (tool, input, options) so a UI can
  render approve / deny / trust / edit, and that accept approve-with-edits (``Interrupt.restart(input=...)``).

How a call is decided, first match wins:

1. a policy rule that matches the call and says ``deny``: refuse;
2. the call was asked about already (the run is resuming): the answer decides;
3. a policy rule that matches the call: ``allow`` runs it (unless the tool is negated in ``allowed_tools``),
   ``ask`` asks (unless a trust grant covers the call);
4. ``!tool`` in ``allowed_tools``: ask (such a tool can never be trusted);
5. a trust grant covering the call: run;
6. ``"*"`` or the tool's name in ``allowed_tools``: run;
7. the policy's ``default`` when it is ``allow`` or ``deny``;
8. the classifier, if any: run or ask, as it says;
9. ask.

Each outcome is recorded in the audit trail as a ``decision`` entry: ``allowed`` (by a rule, the policy default,
``allowed_tools`` or the classifier), ``trusted``, ``approved``, ``edited``, ``denied`` (by a rule, the default or
a person) or ``timed_out``, with ``decided_by`` naming who.
"""

import json
import logging
from collections.abc import Callable
from os import PathLike
from typing import Any, ClassVar, Literal, NamedTuple

from ...hooks.events import BeforeToolCallEvent
from ...interrupt import find_interrupt, record_audit
from ...interventions.actions import Confirm, Deny, InterventionAction, Proceed
from ...interventions.handler import InterventionHandler
from . import _trust
from ._answers import (
    answer_reason,
    answered_by,
    is_approval,
    is_trust_response,
    response_schema,
    response_type,
    trust_scope,
)
from ._ask import AskCallback, EvaluateCallback, call_ask, create_stdio_ask, describe_ask, timed_out
from ._trust import TrustGrant
from .classifier import HumanInTheLoopClassifier, LLMClassifierConfig, _create_llm_risk_classifier, classify
from .policy import ApprovalPolicy, PolicyRule

logger = logging.getLogger(__name__)

_HUMAN = "human"


class _Verdict(NamedTuple):
    """How a call is handled before anyone is asked (a tuple: built on every tool call)."""

    kind: Literal["allow", "deny", "ask"]
    decided_by: str | None = None
    rule: PolicyRule | None = None
    reason: str | None = None
    grant: TrustGrant | None = None


_ASK = _Verdict("ask")
_CLASSIFY = _Verdict("ask", "classifier")  # a marker: the classifier decides (compared by identity)
_ALLOWED_TOOLS = _Verdict("allow", "allowed_tools")
_DEFAULT_ALLOW = _Verdict("allow", "policy:default")
_DEFAULT_DENY = _Verdict("deny", "policy:default")
_PROCEED = Proceed()  # actions are immutable: one instance serves every call


class HumanInTheLoop(InterventionHandler):
    """Ask a human before tool calls; by default every call, through an interrupt the caller answers.

    Example:
        ```python
        from strandslike import Agent
        from strandslike.vended_interventions.hitl import ApprovalPolicy, HumanInTheLoop

        agent = Agent(model=model, tools=[read_file, delete_files], interventions=[HumanInTheLoop()])
        agent = Agent(model=model, tools=tools, interventions=[HumanInTheLoop(allowed_tools=["read_file"])])
        agent = Agent(model=model, tools=tools, interventions=[HumanInTheLoop(allowed_tools=["*", "!delete_files"])])
        agent = Agent(model=model, tools=tools, interventions=[HumanInTheLoop(ask="stdio", enable_trust=True)])
        agent = Agent(
            model=model,
            tools=tools,
            interventions=[HumanInTheLoop(policy=ApprovalPolicy.from_file("approvals.toml"), enable_trust=True)],
        )
        ```
    """

    name: ClassVar[str] = "strands:human-in-the-loop"

    def __init__(
        self,
        *,
        allowed_tools: list[str] | None = None,
        classifier: bool | LLMClassifierConfig | HumanInTheLoopClassifier | None = None,
        enable_trust: bool = False,
        evaluate_trust: EvaluateCallback | None = None,
        evaluate: EvaluateCallback | None = None,
        ask: AskCallback | Literal["stdio"] | None = None,
        policy: ApprovalPolicy | str | PathLike[str] | None = None,
        ask_timeout: float | None = None,
    ) -> None:
        """Configure the handler.

        Args:
            allowed_tools: Tools that run without approval; ``"*"`` for all, ``"!name"`` to exclude a tool from
                ``"*"`` (it always asks and can never be trusted).
            classifier: For tools not otherwise decided: ``True`` for the built-in LLM risk classifier, an
                `LLMClassifierConfig`, or your own (sync or async) callable returning a `ClassifierResult`.
            enable_trust: Let a trust answer (``"t"``/``"trust"``, or ``{"decision": "trust"}``) approve the call and
                remember the tool in ``agent.state``, so it is not asked about again.
            evaluate_trust: Decides whether an answer is a trust answer (default: the above).
            evaluate: Decides whether an answer approves (default: ``True``, ``"y"``, ``"yes"`` or
                ``{"decision": "approve"}``). With a custom ``evaluate`` or ``evaluate_trust`` the interrupt
                publishes no response schema, since any answer may be meaningful to it.
            ask: How to reach the human. None (default): interrupt and resume. ``"stdio"``: a terminal prompt.
                A callable ``ask(prompt)`` (sync or async) returning the answer; None from it denies.
            policy: An `ApprovalPolicy`, or the path of a ``.toml``/``.json`` policy file.
            ask_timeout: Seconds to wait for ``ask``; past them the run pauses on an interrupt instead (the
                timeout is audited). A sync ``ask`` then runs in a worker thread.

        Raises:
            ValueError: ``allowed_tools`` is a single string, ``ask_timeout`` is not positive or is given without
                ``ask``, or ``ask`` is an unknown string.
            TypeError: An argument has the wrong type.
            ApprovalPolicyError: The policy file is malformed.
        """
        if isinstance(allowed_tools, str):
            raise ValueError("allowed_tools must be a list of tool names, not a single string")
        if allowed_tools is not None and not all(isinstance(item, str) and item for item in allowed_tools):
            raise TypeError(f"allowed_tools must be a list of tool names, got {allowed_tools!r}")
        if isinstance(ask, str) and ask != "stdio":
            raise ValueError(f"ask={ask!r} | use 'stdio', a callable ask(prompt), or None for interrupt and resume")
        if ask is not None and not isinstance(ask, str) and not callable(ask):
            raise TypeError(f"ask must be 'stdio', a callable or None, got {type(ask).__name__}")
        for label, callback in (("evaluate", evaluate), ("evaluate_trust", evaluate_trust)):
            if callback is not None and not callable(callback):
                raise TypeError(f"{label} must be a callable taking the answer, got {type(callback).__name__}")
        if ask_timeout is not None:
            if isinstance(ask_timeout, bool) or not isinstance(ask_timeout, int | float) or not ask_timeout > 0:
                raise ValueError(f"ask_timeout={ask_timeout!r} | must be a positive number of seconds")
            if ask is None:
                raise ValueError(
                    "ask_timeout needs an inline ask (ask='stdio' or a callable); without one, "
                    "the handler always interrupts and the caller answers whenever it can"
                )
        self._allowed_tools = set(allowed_tools or [])
        self._negated = {name[1:] for name in self._allowed_tools if name.startswith("!")}
        self._classifier = self._resolve_classifier(classifier)
        if self._classifier is not None and "*" in self._allowed_tools:
            logger.warning("classifier has no effect when allowed_tools contains '*' — all tools are already allowed")
        self._enable_trust = enable_trust
        self._custom_evaluation = evaluate is not None or evaluate_trust is not None
        self._evaluate_trust: Callable[[Any], bool] = evaluate_trust or is_trust_response
        self._evaluate: Callable[[Any], bool] = evaluate or is_approval
        self._ask: AskCallback | None = create_stdio_ask(enable_trust) if ask == "stdio" else ask
        self._asker = describe_ask(self._ask) if self._ask is not None else _HUMAN
        self._ask_timeout = float(ask_timeout) if ask_timeout is not None else None
        self._policy = self._resolve_policy(policy)
        # Verdicts of the policy's rule decisions, by id: the policy keeps the decisions alive as long as it lives.
        self._rule_verdicts: dict[int, _Verdict] = {}

    @property
    def policy(self) -> ApprovalPolicy | None:
        """The approval policy, if any."""
        return self._policy

    # -- deciding -------------------------------------------------------------------------------------------------

    async def before_tool_call(self, event: BeforeToolCallEvent, **kwargs: Any) -> InterventionAction:
        """Run, refuse, or ask about the tool call (see the module docstring for the order of the checks).

        Returns:
            `Proceed` when the call may run, `Deny` when a rule (or a silent ``ask``) refuses it, otherwise a
            `Confirm` that asks (inline, with ``ask``) or pauses on an interrupt.
        """
        verdict = self._decide(event)
        if verdict is _CLASSIFY and self._classifier is not None:
            verdict = await _classified(self._classifier, event)
        if verdict.kind == "allow":
            grant = verdict.grant
            self._audit(
                event,
                "trusted" if grant is not None else "allowed",
                verdict.decided_by,
                rule=verdict.rule,
                reason=verdict.reason,
                trust=grant._record if grant is not None else None,  # read-only here: the entry copies it
            )
            return _PROCEED
        tool_name = event.tool_use["name"]
        if verdict.kind == "deny":
            by = f'rule "{verdict.rule.name}"' if verdict.rule is not None else "the approval policy's default"
            message = f'Tool "{tool_name}" denied by {by}' + (f": {verdict.reason}" if verdict.reason else "")
            self._audit(event, "denied", verdict.decided_by, rule=verdict.rule, reason=verdict.reason)
            return Deny(reason=message)
        return await self._ask_human(event, verdict)

    def _decide(self, event: BeforeToolCallEvent) -> _Verdict:
        """Decide without asking anyone; `_CLASSIFY` when the classifier must be consulted."""
        tool_use = event.tool_use
        tool_name = tool_use["name"]
        tool_input = tool_use["input"]
        negated = tool_name in self._negated
        ruling = self._policy.evaluate(tool_name, tool_input) if self._policy is not None else None
        rule = ruling.rule if ruling is not None else None
        if rule is not None and rule.action == "deny":
            return self._rule_verdict(rule, ruling)
        if find_interrupt(event, self.name) is not None:
            # This very call was asked about already (the run is resuming): its answer decides, not a trust grant
            # another call of the batch obtained meanwhile, nor the classifier.
            return _Verdict("ask", rule=rule, reason=rule.reason if rule is not None else None)
        if rule is not None and rule.action == "allow" and not negated:
            return self._rule_verdict(rule, ruling)
        if not negated:
            grant = _trust.find_grant(event.agent, tool_name, tool_input)
            if grant is not None:
                return _Verdict("allow", f"trust:{grant.tool}", rule, grant=grant)
        if rule is not None or negated:
            return _Verdict("ask", rule=rule, reason=rule.reason if rule is not None else None)
        if "*" in self._allowed_tools or tool_name in self._allowed_tools:
            return _ALLOWED_TOOLS
        if ruling is not None and ruling.action != "ask":
            return _DEFAULT_ALLOW if ruling.action == "allow" else _DEFAULT_DENY
        if self._classifier is not None:
            return _CLASSIFY
        return _ASK

    def _rule_verdict(self, rule: PolicyRule, ruling: Any) -> _Verdict:
        """Return the verdict of a rule's decision, built once per rule (rules and decisions are immutable)."""
        verdict = self._rule_verdicts.get(id(ruling))
        if verdict is None:
            verdict = _Verdict(rule.action, f"rule:{rule.name}", rule, rule.reason)
            self._rule_verdicts[id(ruling)] = verdict
        return verdict

    # -- asking ---------------------------------------------------------------------------------------------------

    async def _ask_human(self, event: BeforeToolCallEvent, verdict: _Verdict) -> InterventionAction:
        tool_name = event.tool_use["name"]
        trustable = self._enable_trust and tool_name not in self._negated
        reason = f" — {verdict.reason}" if verdict.reason else ""
        prompt = f'Approve "{tool_name}"{reason}?\n  Input: {json.dumps(event.tool_use["input"], default=str)}'
        timed_out_after: float | None = None
        if self._ask is not None and find_interrupt(event, self.name) is None:
            response = await call_ask(self._ask, prompt, self._ask_timeout)
            if timed_out(response):
                timed_out_after = self._ask_timeout
                self._audit(
                    event, "timed_out", self._asker, rule=verdict.rule, reason=f"no answer in {timed_out_after}s"
                )
            elif response is None:
                # A dismissed dialog: deny rather than fall back to an interrupt an inline caller cannot answer.
                self._audit(event, "denied", self._asker, rule=verdict.rule, reason="the ask callback gave no answer")
                return Deny(reason=f'Tool "{tool_name}" denied: approval callback returned no response.')
            else:
                evaluate = self._evaluator(event, verdict, trustable, default_by=self._asker)
                if trustable and self._evaluate_trust(response):
                    evaluate(response)  # trusts the tool and audits the approval
                    return _PROCEED
                return Confirm(prompt=prompt, response=response, evaluate=evaluate)
        return Confirm(
            prompt=prompt,
            evaluate=self._evaluator(event, verdict, trustable, default_by=_HUMAN),
            message=prompt,
            response_type=self._response_type(event, trustable),
            allow_edits=True,
            metadata=self._metadata(event, verdict, trustable, timed_out_after),
        )

    def _evaluator(
        self, event: BeforeToolCallEvent, verdict: _Verdict, trustable: bool, *, default_by: str
    ) -> Callable[[Any], bool]:
        def evaluate(answer: Any) -> bool:
            interrupt = find_interrupt(event, self.name)
            restarted = interrupt is not None and interrupt.action == "restart"
            edited = restarted and interrupt is not None and interrupt.edited_input is not None
            # A restart approves by itself; who restarted, and why, may come in its metadata instead of an answer.
            context = interrupt.restart_metadata if restarted and interrupt is not None else None
            by = answered_by(answer) or answered_by(context) or default_by
            note = answer_reason(answer) or answer_reason(context)
            if restarted:  # approve with edits (or a plain re-run): the human asked for the call to run
                approved = True
                trust = trustable and _safe(self._evaluate_trust, answer)
            else:
                trust = trustable and _safe(self._evaluate_trust, answer)
                approved = trust or _safe(self._evaluate, answer)
                if not approved and isinstance(answer, dict) and "editedArgs" in answer and not note:
                    note = "edits must be sent as a restart: interrupt.restart(input=...)"
            trust_record = None
            if trust:
                try:
                    grant = _trust.add_grant(event.agent, event.tool_use["name"], trust_scope(answer), by)
                    trust_record = grant.to_dict()
                except ValueError as exc:  # a scope a custom evaluate_trust accepted without checking
                    note = f"approved, but not trusted: {exc}"
            decision = "edited" if approved and edited else "approved" if approved else "denied"
            self._audit(
                event,
                decision,
                by,
                interrupt_id=interrupt.id if interrupt is not None else None,
                rule=verdict.rule,
                reason=note,
                trust=trust_record,
            )
            return approved

        return evaluate

    def _response_type(self, event: BeforeToolCallEvent, trustable: bool) -> Any:
        if self._custom_evaluation:
            return None  # a custom evaluate may accept any answer: publish no schema that would refuse some
        tool = event.selected_tool
        tool_schema = None
        if tool is not None:
            spec = tool.tool_spec.get("inputSchema", {})
            candidate = spec.get("json", spec) if isinstance(spec, dict) else None
            tool_schema = candidate if isinstance(candidate, dict) else None
        return response_type(response_schema(tool_schema, trustable))

    def _metadata(
        self, event: BeforeToolCallEvent, verdict: _Verdict, trustable: bool, timed_out_after: float | None
    ) -> dict[str, Any]:
        options = ["approve", "deny", "trust", "edit"] if trustable else ["approve", "deny", "edit"]
        tool_use = event.tool_use
        metadata: dict[str, Any] = {"tool": tool_use["name"], "input": tool_use["input"], "options": options}
        if verdict.rule is not None:
            metadata["rule"] = verdict.rule.name
        if verdict.reason:
            metadata["risk"] = verdict.reason
        if timed_out_after is not None:
            metadata["ask_timed_out_after"] = timed_out_after
        return metadata

    def _audit(
        self,
        event: BeforeToolCallEvent,
        decision: str,
        decided_by: str | None,
        *,
        interrupt_id: str | None = None,
        rule: PolicyRule | None = None,
        reason: str | None = None,
        trust: dict[str, Any] | None = None,
    ) -> None:
        tool_use = event.tool_use
        if not reason and trust is not None:  # every trusted call, built in one call
            record_audit(
                event.agent,
                "decision",
                name=self.name,
                interrupt_id=interrupt_id,
                decision=decision,
                tool=tool_use["name"],
                tool_use_id=tool_use["toolUseId"],
                input=tool_use["input"],
                decided_by=decided_by,
                rule=rule.name if rule is not None else None,
                trust=trust,
            )
            return
        if not reason and trust is None:  # the common entry (every allowed call), built in one call
            record_audit(
                event.agent,
                "decision",
                name=self.name,
                interrupt_id=interrupt_id,
                decision=decision,
                tool=tool_use["name"],
                tool_use_id=tool_use["toolUseId"],
                input=tool_use["input"],
                decided_by=decided_by,
                rule=rule.name if rule is not None else None,
            )
            return
        details: dict[str, Any] = {
            "decision": decision,
            "tool": tool_use["name"],
            "tool_use_id": tool_use["toolUseId"],
            "input": tool_use["input"],
            "decided_by": decided_by,
            "rule": rule.name if rule is not None else None,
        }
        if reason:
            details["reason"] = reason
        if trust is not None:
            details["trust"] = trust
        record_audit(event.agent, "decision", name=self.name, interrupt_id=interrupt_id, **details)

    # -- trust ----------------------------------------------------------------------------------------------------

    @classmethod
    def grant_trust(cls, agent: Any, tool: str, args: Any = None, *, by: str | None = None) -> TrustGrant:
        """Trust ``tool``, for any arguments or only when its arguments match ``args``; return the grant.

        ``args`` maps argument names to conditions as in policy rules (``{"path": {"glob": "/tmp/*"}}``); a string
        stands for a glob and a number or boolean for that exact value. On an `Agent` the grant is audited and,
        if the agent has a session manager, persisted at once (``agent.state`` is part of the session).

        Args:
            agent: An `Agent` (or its `AgentState`, or a stored state dict).
            tool: The tool's name.
            args: Conditions on the arguments, or None for any arguments.
            by: Who grants it, for the audit trail.

        Raises:
            ValueError: ``tool`` is empty or ``args`` is malformed; nothing changed.
            SessionException: Persisting failed (e.g. `SessionConflictError`); nothing changed.
        """
        saved = _trust.snapshot(agent)
        grant = _trust.add_grant(agent, tool, args, by)
        _trust.persist(agent, saved)
        _trust.audit_change(cls.name, agent, "trust_granted", grant.to_dict())
        return grant

    @classmethod
    def list_trust(cls, agent: Any) -> list[TrustGrant]:
        """Return the trust grants of ``agent`` (an `Agent`, its `AgentState`, or a stored state dict)."""
        return _trust.read_grants(agent)

    @classmethod
    def revoke_trust(cls, agent: Any, tool: str, *, by: str | None = None) -> list[TrustGrant]:
        """Revoke every trust grant for ``tool`` (for any arguments and scoped ones); return what was revoked.

        On an `Agent` the revocation is audited and, with a session manager, persisted at once.

        Raises:
            SessionException: Persisting failed (e.g. `SessionConflictError`); nothing changed.
        """
        saved = _trust.snapshot(agent)
        removed = _trust.remove_grants(agent, tool)
        if removed:
            _trust.persist(agent, saved)
            _trust.audit_change(cls.name, agent, "trust_revoked", {"tool": tool, "revoked": len(removed), "by": by})
        return removed

    # -- construction helpers -------------------------------------------------------------------------------------

    @staticmethod
    def _resolve_classifier(
        classifier: bool | LLMClassifierConfig | HumanInTheLoopClassifier | None,
    ) -> HumanInTheLoopClassifier | None:
        if classifier is None or classifier is False:
            return None
        if classifier is True:
            return _create_llm_risk_classifier()
        if isinstance(classifier, LLMClassifierConfig):
            return _create_llm_risk_classifier(classifier)
        if not callable(classifier):
            raise TypeError(
                f"classifier must be True, an LLMClassifierConfig or a callable, got {type(classifier).__name__}"
            )
        return classifier

    @staticmethod
    def _resolve_policy(policy: ApprovalPolicy | str | PathLike[str] | None) -> ApprovalPolicy | None:
        if policy is None or isinstance(policy, ApprovalPolicy):
            return policy
        if isinstance(policy, str | PathLike):
            return ApprovalPolicy.from_file(policy)
        raise TypeError(f"policy must be an ApprovalPolicy or a policy file path, got {type(policy).__name__}")


async def _classified(classifier: HumanInTheLoopClassifier, event: BeforeToolCallEvent) -> _Verdict:
    result = await classify(classifier, event)
    if not result.requires_human_in_the_loop:
        return _Verdict("allow", "classifier", reason=result.reason)
    return _Verdict("ask", reason=result.reason)


def _safe(check: Callable[[Any], bool], answer: Any) -> bool:
    return bool(check(answer))
