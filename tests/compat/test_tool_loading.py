"""Issue 12, item 3: tools loaded from file paths, module paths, modules, dicts and ./tools/ (Strands 1.62)."""

import logging
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.tools import ToolProvider
from strandslike.tools.loader import load_tool_from_string, load_tools_from_module
from strandslike.tools.registry import ToolRegistry
from strandslike.tools.tools import PythonAgentTool

DECORATED = '''
from strandslike import tool


@tool
def shout(word: str) -> str:
    """Shout a word.

    Args:
        word: The word.
    """
    return word.upper()


@tool
def whisper(word: str) -> str:
    """Whisper a word."""
    return word.lower()
'''

MODULE_BASED = """
TOOL_SPEC = {
    "name": "{name}",
    "description": "Count the characters of a text.",
    "inputSchema": {"json": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
}


def {name}(tool_use, **kwargs):
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [{"text": str(len(tool_use["input"]["text"])) + (" from agent" if "agent" in kwargs else "")}],
    }
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable package ``pkg_<n>`` with a module of @tool functions and a module-based tool."""
    name = f"pkg_{os.getpid()}_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / "lib" / name / "__init__.py", "")
    write(tmp_path / "lib" / name / "words.py", DECORATED)
    write(tmp_path / "lib" / name / "count_chars.py", MODULE_BASED.replace("{name}", "count_chars"))
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    return name


def test_a_file_path_loads_every_tool_of_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "word_tools.py", DECORATED)
    agent = Agent(model=ScriptedModel([]), tools=[str(path)])
    assert agent.tool_names == ["shout", "whisper"]
    assert all(agent.tool_registry.registry[name].is_dynamic for name in agent.tool_names)
    assert agent.tool.shout(word="hi")["content"] == [{"text": "HI"}]


def test_a_home_relative_path_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path / "mine.py", DECORATED)
    assert Agent(model=ScriptedModel([]), tools=["~/mine.py"]).tool_names == ["shout", "whisper"]


def test_module_paths_and_targeted_functions(package: str) -> None:
    assert Agent(tools=[f"{package}.words"]).tool_names == ["shout", "whisper"]
    assert Agent(tools=[f"{package}.words:whisper"]).tool_names == ["whisper"]
    with pytest.raises(ValueError, match=rf"Failed to load tool {package}.words:missing: Tool missing not found"):
        Agent(tools=[f"{package}.words:missing"])
    with pytest.raises(ValueError, match="is not a valid tool string"):
        Agent(tools=["no_such_package_anywhere.tools"])


def test_imported_modules_and_module_based_tools(package: str) -> None:
    import importlib

    words = importlib.import_module(f"{package}.words")
    counter = importlib.import_module(f"{package}.count_chars")
    agent = Agent(tools=[words, counter])
    assert agent.tool_names == ["shout", "whisper", "count_chars"]
    module_tool = agent.tool_registry.registry["count_chars"]
    assert isinstance(module_tool, PythonAgentTool)
    assert module_tool.tool_type == "python"
    assert module_tool.is_dynamic is False  # an imported module, as in Strands


async def test_a_module_based_tool_runs_with_the_invocation_state(package: str) -> None:
    model = ScriptedModel([tool_call("count_chars", text="hello"), text("done")])
    agent = Agent(model=model, tools=[f"{package}.count_chars"])
    await agent.invoke_async("count")
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "5 from agent"}]


def test_name_and_path_dicts(tmp_path: Path) -> None:
    path = str(write(tmp_path / "word_tools.py", DECORATED))
    assert Agent(tools=[{"name": "whisper", "path": path}]).tool_names == ["whisper"]
    assert Agent(tools=[{"path": path}]).tool_names == ["shout", "whisper"]
    with pytest.raises(ValueError, match=r'Tool "nope" not found in'):
        Agent(tools=[{"name": "nope", "path": path}])


def test_a_module_without_tools_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "empty_tools.py", "X = 1\n")
    with pytest.raises(ValueError, match="is not a valid module for loading tools"):
        Agent(tools=[str(path)])


def test_a_plain_function_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    def plain(x: int) -> int:
        return x

    @tool
    def decorated(x: int) -> int:
        """Decorated."""
        return x

    with caplog.at_level(logging.WARNING):
        agent = Agent(tools=[plain, decorated])
    assert agent.tool_names == ["decorated"]
    assert "unrecognized tool specification" in caplog.text


def test_a_failed_tool_list_registers_nothing(tmp_path: Path) -> None:
    registry = ToolRegistry()
    path = str(write(tmp_path / "word_tools.py", DECORATED))
    with pytest.raises(ValueError, match="Failed to load tool"):
        registry.process_tools([path, "./does/not/exist.py"])
    assert registry.tool_names == []


def test_loader_functions(tmp_path: Path, package: str) -> None:
    import importlib

    path = write(tmp_path / "loose.py", DECORATED)
    assert [t.tool_name for t in load_tool_from_string(str(path))] == ["shout", "whisper"]
    module = importlib.import_module(f"{package}.count_chars")
    (loaded,) = load_tools_from_module(module, "count_chars")
    assert loaded.tool_spec["description"] == "Count the characters of a text."


async def test_load_tools_from_directory_loads_and_reloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tools" / "words.py", DECORATED)
    write(tmp_path / "tools" / "__init__.py", "")
    assert Agent(tools=[]).tool_names == []  # only with load_tools_from_directory=True
    model = ScriptedModel([tool_call("shout", word="a"), text("1"), tool_call("shout", word="b"), text("2")])
    agent = Agent(model=model, load_tools_from_directory=True)
    assert agent.tool_names == ["shout", "whisper"]
    await agent.invoke_async("first")
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "A"}]

    # An edited file is used from the next invocation on; a new file adds its tools.
    edited = DECORATED.replace("word.upper()", "word.upper() + '!'")
    path = write(tmp_path / "tools" / "words.py", edited)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a distinct mtime on any file system
    write(tmp_path / "tools" / "count_chars.py", MODULE_BASED.replace("{name}", "count_chars"))
    await agent.invoke_async("second")
    assert agent.messages[-2]["content"][0]["toolResult"]["content"] == [{"text": "B!"}]
    assert agent.tool_names == ["shout", "whisper", "count_chars"]


def test_a_broken_file_in_the_tools_directory_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tools" / "words.py", DECORATED)
    write(tmp_path / "tools" / "broken.py", "raise RuntimeError('broken on import')\n")
    with caplog.at_level(logging.WARNING):
        agent = Agent(load_tools_from_directory=True)
    assert agent.tool_names == ["shout", "whisper"]
    assert "broken on import" in caplog.text


def test_get_all_tools_config_normalizes_specs_as_strands() -> None:
    @tool
    def f(x: int) -> int:
        """F."""
        return x

    custom = PythonAgentTool(
        "custom", {"name": "custom", "description": "C.", "inputSchema": {"properties": {"a": {}}}}, lambda t: t
    )
    registry = ToolRegistry()
    registry.process_tools([f, custom])
    config: dict[str, Any] = registry.get_all_tools_config()
    assert list(config) == ["f", "custom"]
    assert config["custom"]["inputSchema"] == {
        "json": {
            "type": "object",
            "properties": {"a": {"type": "string", "description": "Property a"}},
            "required": [],
        }
    }
    assert config["f"] == f.tool_spec
    assert registry.get_all_tool_specs() == list(config.values())


def test_registries_share_a_tools_normalized_spec_until_it_is_replaced() -> None:
    @tool
    def f(x: int) -> int:
        """F."""
        return x

    first, second = ToolRegistry(), ToolRegistry()
    first.process_tools([f])
    second.process_tools([f])
    [spec] = first.get_all_tool_specs()
    assert second.get_all_tool_specs() == [spec]
    assert second.get_all_tool_specs()[0] is spec  # normalized once for every agent holding the tool
    # get_all_tools_config hands out copies its caller may change.
    first.get_all_tools_config()["f"]["description"] = "changed"
    assert second.get_all_tool_specs()[0]["description"] == "F."
    f.tool_spec = {**f.tool_spec, "description": "G."}
    assert first.get_all_tool_specs()[0]["description"] == "G."
    assert second.get_all_tool_specs()[0]["description"] == "G."


class Provider(ToolProvider):
    """A provider of one tool, recording its consumers (as Strands' MCP client does)."""

    def __init__(self, *tools: Any) -> None:
        self.tools = list(tools)
        self.consumers: list[Any] = []
        self.removed: list[Any] = []

    async def load_tools(self, **kwargs: Any) -> list[Any]:
        return self.tools

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self.consumers.append(consumer_id)

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self.removed.append(consumer_id)


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


async def test_a_tool_provider_lends_its_tools_until_cleanup() -> None:
    provider = Provider(ping)
    # Built inside a running loop: load_tools is awaited on a worker thread's loop, as Strands' run_async does.
    agent = Agent(model=ScriptedModel([tool_call("ping"), text("done")]), tools=[provider])
    assert agent.tool_names == ["ping"]
    assert provider.consumers == [agent.tool_registry._registry_id]
    await agent.invoke_async("go")
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "pong"}]
    agent.cleanup()
    agent.cleanup()  # remove_consumer is idempotent on the provider's side; the registry just tells it again
    assert provider.removed == [agent.tool_registry._registry_id] * 2


def test_a_collected_agent_releases_its_providers() -> None:
    import gc

    provider = Provider(ping)
    agent = Agent(tools=[provider])
    consumer = agent.tool_registry._registry_id
    del agent
    gc.collect()
    assert provider.removed == [consumer]


def test_a_failed_tool_list_releases_the_providers_it_took() -> None:
    provider = Provider(ping)
    with pytest.raises(ValueError, match="Failed to load tool"):
        Agent(tools=[provider, "./no/such/tool.py"])
    assert provider.removed == provider.consumers


def test_cleanup_tells_every_provider_and_raises_the_first_failure() -> None:
    class Failing(Provider):
        def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
            raise RuntimeError("cannot close")

    failing, other = Failing(), Provider(ping)
    agent = Agent(tools=[failing, other])
    with pytest.raises(RuntimeError, match="cannot close"):
        agent.cleanup()
    assert other.removed == [agent.tool_registry._registry_id]
    failing.remove_consumer = lambda consumer_id, **kwargs: None  # type: ignore[method-assign]


def test_the_strands_tools_names_are_exported() -> None:
    import strandslike.tools as tools_package
    from strandslike.types.exceptions import ToolProviderException

    for name in (
        "InvalidToolUseNameException",
        "PythonAgentTool",
        "ToolProvider",
        "convert_pydantic_to_tool_spec",
        "normalize_schema",
        "normalize_tool_spec",
        "tool",
    ):
        assert name in tools_package.__all__
        assert getattr(tools_package, name) is not None
    assert issubclass(ToolProviderException, Exception)


def test_a_module_tools_replaced_spec_reaches_the_registry_and_a_rename_is_refused() -> None:
    custom = PythonAgentTool(
        "custom", {"name": "custom", "description": "Old.", "inputSchema": {"json": {"type": "object"}}}, lambda t: t
    )
    registry = ToolRegistry()
    registry.process_tools([custom])
    assert [spec["description"] for spec in registry.get_all_tool_specs()] == ["Old."]

    custom.tool_spec = {"name": "custom", "description": "New.", "inputSchema": {"json": {"type": "object"}}}
    assert [spec["description"] for spec in registry.get_all_tool_specs()] == ["New."]

    with pytest.raises(ValueError, match=r"^cannot change tool name via tool_spec .*'other'"):
        custom.tool_spec = {"name": "other", "description": "X.", "inputSchema": {"json": {}}}
    with pytest.raises(ValueError, match="missing 'inputSchema'"):
        custom.tool_spec = {"name": "custom", "description": "X."}  # type: ignore[typeddict-item]
    assert [spec["description"] for spec in registry.get_all_tool_specs()] == ["New."]
