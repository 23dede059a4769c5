"""`ApprovalPolicy` as data: files (TOML, JSON), rules, argument conditions, first match, and every malformation."""

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from strandslike.vended_interventions.hitl import ApprovalPolicy, ApprovalPolicyError, PolicyRule

POLICY_TOML = textwrap.dedent(
    """
    default = "ask"

    [[rules]]
    name = "reads are safe"
    tool = "read_*"
    action = "allow"

    [[rules]]
    name = "never touch /etc"
    tool = "delete_files"
    action = "deny"
    args = { paths = { glob = "/etc/*" } }
    reason = "system files are off limits"

    [[rules]]
    name = "temp files"
    tool = "delete_files"
    action = "allow"
    args = { paths = { glob = "/tmp/*" } }

    [[rules]]
    name = "small refunds"
    tool = "refund"
    action = "allow"
    args = { amount = { min = 0, max = 100 }, currency = { in = ["EUR", "USD"] } }

    [[rules]]
    name = "no force"
    tool = "*"
    action = "deny"
    args = { "options.force" = { in = [true] } }
    """
)


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content)
    return path


@pytest.fixture
def policy(tmp_path: Path) -> ApprovalPolicy:
    return ApprovalPolicy.from_file(write(tmp_path, "approvals.toml", POLICY_TOML))


@pytest.mark.parametrize(
    ("tool", "tool_input", "action", "rule"),
    [
        ("read_file", {"path": "/etc/passwd"}, "allow", "reads are safe"),
        ("read_dir", {}, "allow", "reads are safe"),
        ("delete_files", {"paths": ["/etc/hosts"]}, "deny", "never touch /etc"),
        ("delete_files", {"paths": ["/tmp/a", "/tmp/b"]}, "allow", "temp files"),
        ("delete_files", {"paths": ["/tmp/a", "/home/b"]}, "ask", None),  # every element must match
        ("delete_files", {"paths": []}, "ask", None),  # an empty list matches nothing
        ("delete_files", {}, "ask", None),  # a missing argument matches nothing
        ("refund", {"amount": 100, "currency": "EUR"}, "allow", "small refunds"),
        ("refund", {"amount": 100.5, "currency": "EUR"}, "ask", None),
        ("refund", {"amount": -1, "currency": "EUR"}, "ask", None),
        ("refund", {"amount": 5, "currency": "GBP"}, "ask", None),
        ("refund", {"amount": True, "currency": "EUR"}, "ask", None),  # a boolean is not a number
        ("refund", {"amount": "5", "currency": "EUR"}, "ask", None),
        ("deploy", {"options": {"force": True}}, "deny", "no force"),
        ("deploy", {"options": {"force": 1}}, "ask", None),  # 1 is not true
        ("deploy", {"options": "force"}, "ask", None),
    ],
)
def test_the_first_matching_rule_decides(policy, tool, tool_input, action, rule):
    decision = policy.evaluate(tool, tool_input)
    assert decision.action == action
    assert (decision.rule.name if decision.rule else None) == rule
    assert decision.decided_by == (f"rule:{rule}" if rule else "policy:default")


def test_rule_order_matters():
    first = ApprovalPolicy(
        [
            PolicyRule("deny all deletes", "delete_*", "deny"),
            PolicyRule("allow tmp", "delete_files", "allow", {"paths": {"glob": "/tmp/*"}}),
        ]
    )
    assert first.evaluate("delete_files", {"paths": ["/tmp/x"]}).rule.name == "deny all deletes"  # type: ignore[union-attr]
    second = ApprovalPolicy(list(reversed(first.rules)))
    assert second.evaluate("delete_files", {"paths": ["/tmp/x"]}).action == "allow"


def test_the_default_applies_when_no_rule_matches():
    assert ApprovalPolicy(default="deny").evaluate("x", {}).action == "deny"
    assert ApprovalPolicy.from_dict({}).evaluate("x", {}).action == "ask"


def test_json_policies_and_round_trips(tmp_path, policy):
    path = write(tmp_path, "approvals.json", json.dumps(policy.to_dict()))
    loaded = ApprovalPolicy.from_file(path)
    assert loaded.to_dict() == policy.to_dict()
    assert loaded.rules == policy.rules
    assert loaded.source == str(path)


def test_in_matches_numbers_by_value_and_lists_of_values():
    policy = ApprovalPolicy([PolicyRule("ids", "t", "allow", {"n": {"in": [1, 2]}, "tags": {"in": ["a", "b"]}})])
    assert policy.evaluate("t", {"n": 1.0, "tags": ["a", "b"]}).action == "allow"
    assert policy.evaluate("t", {"n": 3, "tags": ["a"]}).action == "ask"
    assert policy.evaluate("t", {"n": 1, "tags": ["a", "c"]}).action == "ask"


def test_glob_is_case_sensitive_and_star_crosses_slashes():
    policy = ApprovalPolicy([PolicyRule("tmp", "t", "allow", {"p": {"glob": "/tmp/*.txt"}})])
    assert policy.evaluate("t", {"p": "/tmp/a/b.txt"}).action == "allow"
    assert policy.evaluate("t", {"p": "/tmp/A.TXT"}).action == "ask"


def test_a_policy_never_evaluates_code(tmp_path):
    # Values that look like code are matched as text; nothing is imported, called or formatted.
    path = write(
        tmp_path,
        "p.toml",
        '[[rules]]\nname = "x"\ntool = "__import__(\'os\').system(\'exit 1\')"\naction = "allow"\n'
        'args = { cmd = { glob = "{__import__}" } }\n',
    )
    policy = ApprovalPolicy.from_file(path)
    assert policy.evaluate("__import__('os').system('exit 1')", {"cmd": "{__import__}"}).action == "allow"


def bad(tmp_path: Path, body: str, suffix: str = ".toml") -> str:
    with pytest.raises(ApprovalPolicyError) as caught:
        ApprovalPolicy.from_file(write(tmp_path, f"p{suffix}", body))
    assert isinstance(caught.value, ValueError)
    return str(caught.value)


RULE = '[[rules]]\nname = "ok"\ntool = "a"\naction = "allow"\n'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            RULE
            + '[[rules]]\nname = "refunds"\ntool = "refund"\naction = "allow"\nargs = { amount = { maximum = 1 } }\n',
            "rule 2 ('refunds'): args.amount: unknown condition 'maximum'; use one of glob, min, max, in",
        ),
        (RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "permit"\n', "rule 2 ('r'): action must be one of"),
        (RULE + '[[rules]]\nname = "r"\ntool = "t"\n', "rule 2 ('r'): missing action"),
        (RULE + '[[rules]]\ntool = "t"\naction = "allow"\n', "rule 2: missing name"),
        (RULE + '[[rules]]\nname = "r"\ntool = ""\naction = "allow"\n', "rule 2 ('r'): tool must be"),
        (RULE + RULE, "rule 2 ('ok'): the name is already used by rule 1"),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\narg = {}\n',
            "rule 2 ('r'): unknown key(s) 'arg'",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = { min = 5, max = 1 } }\n',
            "args.n: min (5.0) is greater than max (1.0)",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = { min = "5" } }\n',
            "args.n: min must be a finite number",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = { min = nan } }\n',
            "args.n: min must be a finite number",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = { glob = "a", in = ["a"] } }\n',
            "args.n: glob cannot be combined",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = { in = [] } }\n',
            "args.n: in must be a non-empty list",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = "x" }\n',
            "args.n: a condition must be a table",
        ),
        (
            RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = { n = {} }\n',
            "args.n: a condition must be a table",
        ),
        (RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nargs = ["n"]\n', "args must be a table"),
        (RULE + '[[rules]]\nname = "r"\ntool = "t"\naction = "allow"\nreason = 3\n', "reason must be a string"),
        ('default = "maybe"\n', "default must be one of allow, deny, ask"),
        ('rules = "all"\n', "rules must be a list"),
        ("version = 2\n", "unknown top-level key(s) 'version'"),
        ("rules = [1]\n", "rule 1: a rule must be a table"),
        ("[[rules]\n", "is not valid TOML"),
    ],
)
def test_malformed_policy_files_name_the_rule_and_the_problem(tmp_path, body, expected):
    message = bad(tmp_path, body)
    assert expected in message
    assert message.startswith(str(tmp_path / "p.toml"))
    assert message.endswith("Nothing was loaded; fix the policy and load it again.")


def test_malformed_json_and_unknown_suffixes(tmp_path):
    assert "is not valid JSON (Expecting value at line 1, column 1)" in bad(tmp_path, "nope", ".json")
    assert "a policy must be a table" in bad(tmp_path, "[1, 2]", ".json")
    assert "name it .toml or .json" in bad(tmp_path, "x: 1", ".yaml")
    path = tmp_path / "binary.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ApprovalPolicyError, match="is not UTF-8 text"):
        ApprovalPolicy.from_file(path)
    with pytest.raises(FileNotFoundError):
        ApprovalPolicy.from_file(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: PolicyRule("r", "t", "nope"), "<code>: rule 'r': action must be one of"),  # type: ignore[arg-type]
        (lambda: PolicyRule("", "t", "allow"), "name must be a non-empty string"),
        (lambda: PolicyRule("r", "t", "allow", {"x": {"glob": 3}}), "args.x: glob must be a non-empty string"),
        (lambda: ApprovalPolicy([{"name": "r"}]), "rule 1 ('r'): missing tool, action"),
        (lambda: ApprovalPolicy("rules"), "rules must be a list"),  # type: ignore[arg-type]
        (lambda: ApprovalPolicy(default="never"), "default must be one of"),  # type: ignore[arg-type]
    ],
)
def test_policies_built_in_code_are_checked_the_same_way(make: Any, expected: str):
    with pytest.raises(ApprovalPolicyError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_rules_are_immutable_and_args_copied():
    args = {"n": {"max": 1}}
    rule = PolicyRule("r", "t", "allow", args)
    args["m"] = {"max": 2}
    assert rule.args == {"n": {"max": 1}}
    with pytest.raises(AttributeError):
        rule.action = "deny"  # type: ignore[misc]
