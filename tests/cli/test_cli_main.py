"""One parser tree: --help, --version, the program name, descriptions, a missing extra, a replayed resume."""

import argparse
import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import deleted, make_session, run_cli

import strandslike
from strandslike.__main__ import main
from strandslike.cli import build_parser, program_name

COMMANDS = ["demo", "serve", "resume", "sessions"]


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def every_parser(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(path or "(top)", parser)]
    for name, child in subparsers(parser).items():
        found += every_parser(child, f"{path} {name}".strip())
    return found


def test_help_lists_every_command_serve_included(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m strandslike [-h] [--version] COMMAND ...")
    for command in COMMANDS:
        assert f"\n    {command} " in out
    assert "exit codes:" in out


def test_version_is_the_package_metadata(capsys):
    assert strandslike.__version__ == importlib.metadata.version("strandslike")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"strandslike {strandslike.__version__}\n"


def test_the_version_is_written_once_and_pyproject_reads_it():
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'path = "strandslike/_version.py"' in pyproject


def test_every_command_has_a_description_and_terminal_friendly_help():
    for path, parser in every_parser(build_parser("strandslike")):
        assert parser.description, f"{path} has no description"
        text = parser.format_help()
        assert "`" not in text, f"{path} --help has reST markup:\n{text}"
        assert ":class:" not in text
        assert ":func:" not in text
        for line in text.splitlines():
            assert len(line) <= 100, f"{path} --help has a long line: {line!r}"
    names = {path for path, _ in every_parser(build_parser("strandslike"))}
    assert {"demo", "serve", "resume", "sessions list", "sessions import-strands", "sessions audit"} <= names


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        ("/usr/local/bin/strandslike", "strandslike"),
        ("strandslike.exe", "strandslike"),
        ("/x/strandslike/__main__.py", "python -m strandslike"),
        ("/x/pytest", "python -m strandslike"),
    ],
)
def test_the_program_name_follows_how_it_was_started(argv0, expected):
    assert program_name(argv0) == expected


def test_the_console_script_names_itself_strandslike(tmp_path: Path):
    script = Path(sys.executable).with_name("strandslike")
    assert script.exists(), "the strandslike console script is not installed in this environment"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: strandslike [-h] [--version] COMMAND ...")
    done = subprocess.run([str(script), "resume", "--help"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: strandslike resume ")
    done = subprocess.run([str(script), "demo", "--storage-dir", str(tmp_path), "--stop-at-prompt"], **_quiet())
    assert "  strandslike resume --agent strandslike._demo:session_agent" in done.stdout


def test_python_dash_m_names_itself_python_dash_m_strandslike():
    done = run_cli("sessions", "--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m strandslike sessions ")
    assert run_cli("--version").stdout == f"strandslike {strandslike.__version__}\n"


def _quiet() -> dict[str, object]:
    return {"capture_output": True, "text": True, "check": True, "stdin": subprocess.DEVNULL}


def test_an_unknown_command_is_a_usage_error(capsys):
    assert main(["fly"]) == 2
    assert "invalid choice: 'fly'" in capsys.readouterr().err
    assert main([]) == 2


def test_serve_without_the_agui_extra_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if the agui extra were not installed
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: python -m strandslike serve needs the AG-UI extra, which is not installed (missing: uvicorn). "
        "Install it with: pip install 'strandslike[agui]'\n"
    )


def test_serve_without_the_agui_extra_in_a_child_process():
    program = (
        "import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None\n"
        "from strandslike.__main__ import main; sys.exit(main(['serve'], prog='strandslike'))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 2
    assert "strandslike serve needs the AG-UI extra" in done.stderr
    assert "pip install 'strandslike[agui]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_second_identical_resume_says_it_was_a_replay_and_runs_nothing(tmp_path: Path, capsys):
    storage = tmp_path / "store"
    [interrupt] = make_session(storage, "work").interrupts
    args = ["resume", "--agent", "cli_support:build", "--storage-dir", str(storage), "work"]
    args += ["--response", f'{interrupt.id}="y"']

    assert main(args) == 0
    first = capsys.readouterr().out
    assert "replay" not in first
    assert deleted(storage) == ["a.txt", "b.txt"]

    assert main(args) == 0
    second = capsys.readouterr().out.splitlines()
    assert second[:2] == [
        "These answers were already applied and the agent went on: this was a replay, nothing ran again",
        "(no tool, no model call). The agent's last message is below.",
    ]
    assert second[2:] == ["stop reason: end_turn", "message: Done."]
    assert deleted(storage) == ["a.txt", "b.txt"]  # the tool did not run twice

    assert main([*args, "--json"]) == 0
    assert '"replayed": true' in capsys.readouterr().out


def test_registering_a_command_is_one_line_per_module():
    """Other modules add commands with ``module.add_parser(subparsers, storage)``; sessions returns its group."""
    source = (Path(strandslike.__file__).parent / "cli" / "__init__.py").read_text()
    for line in (
        "demo.add_parser(commands, storage)",
        "serve.add_parser(commands, storage)",
        "resume.add_parser(commands, storage)",
        "session_commands = sessions.add_parser(commands, storage)",
        "import_strands.add_parser(session_commands, storage)",
    ):
        assert line in source


def test_the_console_script_entry_point_is_main():
    [script] = [ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == "strandslike"]
    assert script.value == "strandslike.__main__:main"
    assert os.fspath(Path(sys.executable).with_name("strandslike")).endswith("strandslike")
