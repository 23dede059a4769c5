"""Sessions are POSIX-only: elsewhere, importing them is a clear error, and agents without sessions still work."""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

# A platform without POSIX advisory locks, as Windows is: the fcntl module cannot be imported.
WITHOUT_FCNTL = "import sys; sys.modules['fcntl'] = None\n"


def run(program: str) -> subprocess.CompletedProcess[str]:
    code = WITHOUT_FCNTL + textwrap.dedent(program)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_importing_sessions_without_posix_locks_names_the_platform_and_what_to_do():
    done = run(
        """
        from strandslike.types.exceptions import UnsupportedPlatformError
        try:
            import strandslike.session.file_session_manager
        except UnsupportedPlatformError as exc:
            assert isinstance(exc, ImportError)
            print(exc)
        """
    )
    assert done.returncode == 0, done.stderr
    message = done.stdout.strip()
    assert message.startswith("strandslike's sessions need POSIX file locking (fcntl.flock)")
    assert f"this platform ({sys.platform})" in message
    assert "run on Linux and macOS. On Windows, use WSL." in message


def test_agents_without_sessions_work_there():
    done = run(
        """
        from strandslike import Agent
        from strandslike.models import ScriptedModel, text
        print(Agent(model=ScriptedModel([text("hello")]))("hi"), end="")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"


def test_the_command_line_says_so_instead_of_a_traceback():
    done = run("from strandslike.__main__ import main; sys.exit(main(['sessions', 'list']))")
    assert done.returncode == 2
    assert done.stderr.startswith("error: strandslike's sessions need POSIX file locking")
    assert "Traceback" not in done.stderr


def test_pyproject_declares_posix_only():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    classifiers = pyproject["project"]["classifiers"]
    assert "Operating System :: POSIX" in classifiers
    assert "Operating System :: MacOS" in classifiers
    assert not any("Windows" in classifier or "OS Independent" in classifier for classifier in classifiers)
