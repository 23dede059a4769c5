"""`ApprovalPolicy`: which tool calls run freely, which are refused, and which a human must approve, as data.

A policy is a ``default`` action and an ordered list of rules; the first rule that matches a tool call decides
(``allow``, ``deny`` or ``ask``), and the default decides when none matches. Rules match a tool by name (exactly,
or with a shell-style pattern such as ``read_*``) and, optionally, its arguments (see `_conditions`: ``glob``,
``min``, ``max``, ``in``). Policies are plain data: built in code, or loaded from a TOML or JSON file, and never
evaluated as code.

Example policy file (``approvals.toml``)::

    default = "ask"

    [[rules]]
    name = "reads are safe"
    tool = "read_*"
    action = "allow"

    [[rules]]
    name = "small refunds"
    tool = "refund"
    action = "allow"
    args = { amount = { max = 100 } }

    [[rules]]
    name = "never touch /etc"
    tool = "delete_files"
    action = "deny"
    args = { paths = { glob = "/etc/*" } }
    reason = "system files are off limits"

The same in JSON: ``{"default": "ask", "rules": [{"name": "reads are safe", "tool": "read_*", "action":
"allow"}, ...]}``.
"""

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ...types.exceptions import StrandslikeError
from ._conditions import _MISSING, Condition, ConditionError, compile_conditions, match_all

PolicyAction: TypeAlias = Literal["allow", "deny", "ask"]
ACTIONS: tuple[str, ...] = ("allow", "deny", "ask")
_RULE_KEYS = ("name", "tool", "action", "args", "reason")
_TOP_KEYS = ("default", "rules")
_GLOB_CHARS = re.compile(r"[*?\[]")
_CANDIDATE_CACHE_LIMIT = 4096


class ApprovalPolicyError(StrandslikeError, ValueError):
    """A policy (or a policy file) is malformed; the message names the file and the rule.

    Attributes:
        source: The file (or ``"<code>"``) the policy came from.
        rule_index: The 1-based position of the offending rule, if a rule is at fault.
        rule_name: Its name, when it has one.
    """

    def __init__(
        self, problem: str, *, source: str = "<code>", rule_index: int | None = None, rule_name: str | None = None
    ) -> None:
        self.problem = problem
        self.source = source
        self.rule_index = rule_index
        self.rule_name = rule_name
        where = source
        if rule_index is not None:
            where += f": rule {rule_index}" + (f" ({rule_name!r})" if rule_name else "")
        elif rule_name:
            where += f": rule {rule_name!r}"
        super().__init__(f"{where}: {problem}. Nothing was loaded; fix the policy and load it again.")


@dataclass(frozen=True)
class PolicyRule:
    """One rule of an `ApprovalPolicy`.

    Attributes:
        name: Unique name, recorded in the audit trail when the rule decides.
        tool: The tool's name, or a shell-style pattern (``read_*``, ``*``).
        action: ``"allow"`` (run without asking), ``"deny"`` (refuse; the model is told why) or ``"ask"``.
        args: Optional conditions on the call's arguments: argument name → ``{glob=...}`` | ``{min=N}`` |
            ``{max=N}`` | ``{in=[...]}``; all must hold for the rule to match.
        reason: Optional explanation, shown to the model on a denial and to the human on a question.
    """

    name: str
    tool: str
    action: PolicyAction
    args: Mapping[str, Any] | None = None
    reason: str | None = None
    _tool_pattern: "re.Pattern[str] | None" = field(default=None, init=False, repr=False, compare=False)
    _conditions: tuple[Condition, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            self._compile()
        except ConditionError as exc:
            name = self.name if isinstance(self.name, str) and self.name else None
            raise ApprovalPolicyError(str(exc), rule_name=name) from None

    def _compile(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConditionError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.tool, str) or not self.tool:
            raise ConditionError(f"tool must be a tool name or pattern, got {self.tool!r}")
        if self.action not in ACTIONS:
            raise ConditionError(f"action must be one of {', '.join(ACTIONS)}, got {self.action!r}")
        if self.reason is not None and not isinstance(self.reason, str):
            raise ConditionError(f"reason must be a string, got {self.reason!r}")
        conditions = compile_conditions(self.args)
        pattern = re.compile(translate(self.tool)) if _GLOB_CHARS.search(self.tool) else None
        object.__setattr__(self, "args", None if self.args is None else dict(self.args))
        object.__setattr__(self, "_tool_pattern", pattern)
        object.__setattr__(self, "_conditions", conditions)

    def matches_tool(self, tool_name: str) -> bool:
        """Return whether the rule names ``tool_name`` (exactly or by pattern)."""
        if self._tool_pattern is None:
            return tool_name == self.tool
        return self._tool_pattern.match(tool_name) is not None

    def matches(self, tool_name: str, tool_input: Any) -> bool:
        """Return whether the rule applies to a call of ``tool_name`` with ``tool_input``."""
        return self.matches_tool(tool_name) and match_all(self._conditions, tool_input)

    def to_dict(self) -> dict[str, Any]:
        """Return the rule as it is written in a policy file."""
        data: dict[str, Any] = {"name": self.name, "tool": self.tool, "action": self.action}
        if self.args is not None:
            data["args"] = dict(self.args)
        if self.reason is not None:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class PolicyDecision:
    """What a policy decided for one tool call.

    Attributes:
        action: ``"allow"``, ``"deny"`` or ``"ask"``.
        rule: The rule that decided, or None when the default did.
    """

    action: PolicyAction
    rule: PolicyRule | None = None

    @property
    def decided_by(self) -> str:
        """``"rule:<name>"``, or ``"policy:default"``; how the audit trail names who decided."""
        return f"rule:{self.rule.name}" if self.rule is not None else "policy:default"


class ApprovalPolicy:
    """An ordered list of `PolicyRule` and a default action; the first matching rule decides.

    Example:
        ```python
        policy = ApprovalPolicy(
            default="ask",
            rules=[
                PolicyRule(name="reads", tool="read_*", action="allow"),
                PolicyRule(name="small refunds", tool="refund", action="allow", args={"amount": {"max": 100}}),
            ],
        )
        agent = Agent(model=model, tools=[read_file, refund], interventions=[HumanInTheLoop(policy=policy)])
        ```
    """

    def __init__(self, rules: Sequence[PolicyRule | Mapping[str, Any]] = (), default: PolicyAction = "ask") -> None:
        """Build a policy from rules (`PolicyRule` objects or rule tables as in a file).

        Raises:
            ApprovalPolicyError: A rule is malformed, two rules share a name, or ``default`` is unknown.
        """
        self._init(rules, default, "<code>")

    def _init(self, rules: Any, default: Any, source: str) -> None:
        if default not in ACTIONS:
            raise ApprovalPolicyError(f"default must be one of {', '.join(ACTIONS)}, got {default!r}", source=source)
        if isinstance(rules, str | bytes | Mapping) or not isinstance(rules, Sequence):
            raise ApprovalPolicyError(f"rules must be a list of rule tables, got {type(rules).__name__}", source=source)
        built: list[PolicyRule] = []
        names: dict[str, int] = {}
        for index, raw in enumerate(rules, start=1):
            rule = _build_rule(raw, index, source)
            if rule.name in names:
                raise ApprovalPolicyError(
                    f"the name is already used by rule {names[rule.name]}; rule names must be unique",
                    source=source,
                    rule_index=index,
                    rule_name=rule.name,
                )
            names[rule.name] = index
            built.append(rule)
        self.default: PolicyAction = default
        self.rules: tuple[PolicyRule, ...] = tuple(built)
        self.source = source
        self._default_decision = PolicyDecision(default)
        self._decisions = [(rule, PolicyDecision(rule.action, rule)) for rule in self.rules]
        # Per tool name, each rule naming it, in order: (the name of its only condition's top-level argument, or
        # None; that condition's test; all its conditions; its decision). Decisions are immutable.
        self._candidates: dict[str, tuple[_Candidate, ...]] = {}

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> "ApprovalPolicy":
        """Build a policy from its data: ``{"default": ..., "rules": [...]}``.

        Raises:
            ApprovalPolicyError: The data is not a policy; the message names the source and the rule.
        """
        if not isinstance(data, Mapping):
            raise ApprovalPolicyError(f"a policy must be a table (object), got {type(data).__name__}", source=source)
        unknown = [key for key in data if key not in _TOP_KEYS]
        if unknown:
            raise ApprovalPolicyError(
                f"unknown top-level key(s) {', '.join(repr(k) for k in unknown)}; a policy has only "
                "'default' and 'rules'",
                source=source,
            )
        policy = cls.__new__(cls)
        policy._init(data.get("rules", []), data.get("default", "ask"), source)
        return policy

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> "ApprovalPolicy":
        """Load a policy from a ``.toml`` or ``.json`` file (chosen by suffix).

        Raises:
            ApprovalPolicyError: The suffix is neither, the file is not valid TOML/JSON, or the policy is malformed.
            OSError: The file cannot be read (``FileNotFoundError`` names it).
        """
        file = Path(path)
        source = str(file)
        suffix = file.suffix.lower()
        if suffix not in (".toml", ".json"):
            raise ApprovalPolicyError(
                f"unknown policy file type {file.suffix or '(no suffix)'!r}; name it .toml or .json", source=source
            )
        raw = file.read_bytes()
        try:
            text = raw.decode("utf-8")
            data = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
        except UnicodeDecodeError as exc:
            raise ApprovalPolicyError(f"is not UTF-8 text ({exc.reason})", source=source) from None
        except tomllib.TOMLDecodeError as exc:
            raise ApprovalPolicyError(f"is not valid TOML ({exc})", source=source) from None
        except json.JSONDecodeError as exc:
            raise ApprovalPolicyError(
                f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", source=source
            ) from None
        return cls.from_dict(data, source=source)

    def evaluate(self, tool_name: str, tool_input: Any) -> PolicyDecision:
        """Return the decision for a call of ``tool_name`` with ``tool_input``: the first matching rule's, or default.

        The rules naming a tool are found once per tool name and kept, so a call checks only those rules' arguments.
        """
        candidates = self._candidates.get(tool_name)
        if candidates is None:
            candidates = tuple(
                _candidate(rule, decision) for rule, decision in self._decisions if rule.matches_tool(tool_name)
            )
            if len(self._candidates) < _CANDIDATE_CACHE_LIMIT:
                self._candidates[tool_name] = candidates
        get = tool_input.get if type(tool_input) is dict else None
        for argument, matcher, conditions, decision in candidates:
            if not conditions:
                return decision
            if argument is not None and get is not None:
                # The usual rule, one condition on one top-level argument: tested here without a helper call.
                value = get(argument, _MISSING)
                if value is not _MISSING and matcher(value):
                    return decision
            elif match_all(conditions, tool_input):
                return decision
        return self._default_decision

    def to_dict(self) -> dict[str, Any]:
        """Return the policy as it is written in a file (``json.dumps`` it to save it as JSON)."""
        return {"default": self.default, "rules": [rule.to_dict() for rule in self.rules]}

    def __repr__(self) -> str:
        return f"ApprovalPolicy(default={self.default!r}, rules={len(self.rules)}, source={self.source!r})"


_Candidate = tuple[str | None, Any, tuple[Condition, ...], PolicyDecision]


def _candidate(rule: PolicyRule, decision: PolicyDecision) -> _Candidate:
    conditions = rule._conditions
    if len(conditions) == 1 and len(conditions[0][0]) == 1:
        (argument,), matcher = conditions[0]
        return argument, matcher, conditions, decision
    return None, None, conditions, decision


def _build_rule(raw: Any, index: int, source: str) -> PolicyRule:
    if isinstance(raw, PolicyRule):
        return raw
    name = raw.get("name") if isinstance(raw, Mapping) else None
    label = name if isinstance(name, str) and name else None
    if not isinstance(raw, Mapping):
        raise ApprovalPolicyError(
            f"a rule must be a table with name, tool and action, got {type(raw).__name__}",
            source=source,
            rule_index=index,
        )
    unknown = [key for key in raw if key not in _RULE_KEYS]
    missing = [key for key in ("name", "tool", "action") if key not in raw]
    if unknown:
        problem = f"unknown key(s) {', '.join(repr(k) for k in unknown)}; a rule has {', '.join(_RULE_KEYS)}"
        raise ApprovalPolicyError(problem, source=source, rule_index=index, rule_name=label)
    if missing:
        raise ApprovalPolicyError(f"missing {', '.join(missing)}", source=source, rule_index=index, rule_name=label)
    try:
        return PolicyRule(raw["name"], raw["tool"], raw["action"], raw.get("args"), raw.get("reason"))
    except ApprovalPolicyError as exc:
        raise ApprovalPolicyError(exc.problem, source=source, rule_index=index, rule_name=label) from None


__all__ = ["ACTIONS", "ApprovalPolicy", "ApprovalPolicyError", "PolicyAction", "PolicyDecision", "PolicyRule"]
