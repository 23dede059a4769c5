"""The README's approval, plugin and intervention examples run as written (issue 11).

Every ``python`` block of README.md that uses `HumanInTheLoop`, `ApprovalPolicy`, a `Plugin` or an
`InterventionHandler`, or that implements an approval with a hook, is executed in a fresh namespace; blocks marked
``<!-- readme-test: skip (...) -->`` are left out.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
MARKERS = ("HumanInTheLoop", "ApprovalPolicy", "InterventionHandler", "Plugin", "event.interrupt(")
BLOCK = re.compile(r"(?P<skip><!-- readme-test: skip[^>]*-->\n)?```python\n(?P<code>.*?)```", re.S)


def blocks() -> list[tuple[int, str]]:
    text = README.read_text()
    found = []
    for match in BLOCK.finditer(text):
        if match.group("skip") or not any(marker in match.group("code") for marker in MARKERS):
            continue
        if re.search(r"^def test_", match.group("code"), re.MULTILINE):
            continue  # a test file (the pytest plugin's example): tests/test_readme.py runs it under pytest
        found.append((text.count("\n", 0, match.start("code")) + 1, match.group("code")))
    return found


def test_the_readme_has_approval_examples():
    assert len(blocks()) >= 6


@pytest.mark.parametrize(("line", "code"), blocks(), ids=[f"README.md:{line}" for line, _ in blocks()])
def test_readme_example_runs_as_written(line, code):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, f"README.md:{line}", "exec"), {"__name__": f"readme_{line}"})
    assert output.getvalue(), "every example prints what it shows"


def test_the_readme_approves_with_the_public_classes():
    """No example writes its own approval hook: the one block raising an interrupt from a hook is the Strands
    guide's pattern in "Hooks", which points to HumanInTheLoop."""
    text = README.read_text()
    codes = [match.group("code") for match in BLOCK.finditer(text)]
    assert not [code for code in codes if "ApprovalHook" in code or "HookProvider)" in code]
    [by_hand] = [code for code in codes if "event.interrupt(" in code]
    hooks = text[text.index("\n## Hooks\n") : text.index("\n## Interrupts\n")]
    assert by_hand in hooks
    assert "For approvals, use `HumanInTheLoop`" in hooks
