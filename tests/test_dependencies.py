"""``pip install strandslike`` (no extras) is enough for the core, the demo and the command line.

The test environment has every extra installed, so an import of a package that is not a declared dependency would
go unnoticed here and fail for users. A child process blocks every third-party module that the core requirements
(and what they require) do not provide, then runs the README's first command's demo.
"""

import importlib.metadata
import re
import subprocess
import sys
import textwrap


def _closure(requirement_names: list[str]) -> set[str]:
    seen: set[str] = set()
    pending = list(requirement_names)
    while pending:
        name = re.split(r"[\s<>=!~;\[(]", pending.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if not name or name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        pending += [req for req in requires if "extra ==" not in req]
    return seen


def test_the_core_needs_only_the_declared_dependencies():
    core = [req for req in importlib.metadata.distribution("strandslike").requires or [] if "extra ==" not in req]
    allowed = _closure(core) | {"strandslike"}
    blocked = sorted(
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if not any(dist.lower().replace("_", "-") in allowed for dist in dists) and module.isidentifier()
    )
    program = textwrap.dedent(
        f"""
        import sys
        from importlib.abc import MetaPathFinder

        BLOCKED = set({blocked!r})

        class NotInstalled(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (not a core dependency)", name=name)
                return None

        sys.meta_path.insert(0, NotInstalled())
        import strandslike
        import strandslike.cli
        import strandslike.session
        import strandslike.testing
        import strandslike.telemetry
        from strandslike.__main__ import main
        sys.exit(main(["demo", "--yes"]))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Files left: none."
    assert "opentelemetry" in blocked  # the check really hides the extras
    assert "uvicorn" in blocked
