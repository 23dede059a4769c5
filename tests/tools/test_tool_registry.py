import json
import pathlib
from typing import Any

import pytest

from strandslike.tools import AgentTool, ToolRegistry, tool
from strandslike.types.exceptions import ToolNameConflictError
from strandslike.types.tools import ToolGenerator, ToolSpec, ToolUse


@tool
def alpha(x: int) -> int:
    """Alpha."""
    return x


@tool
def beta(y: str) -> str:
    """Beta."""
    return y


@tool(name="alpha")
def alpha_again(z: int) -> int:
    """Another tool called alpha."""
    return z


class EchoTool(AgentTool):
    def __init__(self, name: str = "echo") -> None:
        self._name = name

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": self._name, "description": "Echo.", "inputSchema": {"json": {"type": "object"}}}

    @property
    def tool_type(self) -> str:
        return "custom"

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        yield {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "echo"}]}


def plain_function(x: int) -> int:
    return x


def test_process_tools_registers_nested_lists_in_order():
    registry = ToolRegistry()
    echo = EchoTool()
    names = registry.process_tools([alpha, [beta, (echo,)]])
    assert names == ["alpha", "beta", "echo"]
    assert registry.tool_names == ["alpha", "beta", "echo"]
    assert registry.registry == {"alpha": alpha, "beta": beta, "echo": echo}
    assert len(registry) == 3
    assert "beta" in registry
    assert "gamma" not in registry
    assert registry["echo"] is echo
    assert registry.get("alpha") is alpha
    assert registry.get("gamma") is None
    with pytest.raises(KeyError):
        registry["gamma"]


def test_bound_method_tools_register():
    class Toolbox:
        @tool
        def lookup(self, key: str) -> str:
            """Look up."""
            return key

    registry = ToolRegistry()
    assert registry.process_tools([Toolbox().lookup]) == ["lookup"]


def test_plain_function_is_rejected_with_a_fix():
    registry = ToolRegistry()
    with pytest.raises(TypeError, match=r"plain_function.*@tool.*AgentTool"):
        registry.process_tools([alpha, plain_function])
    assert len(registry) == 0


@pytest.mark.parametrize("source", ["./tools/weather.py", pathlib.Path("tools.py"), json, {"name": "x", "path": "y"}])
def test_paths_modules_and_dicts_are_not_supported(source: Any):
    with pytest.raises(TypeError, match=r"not supported.*Import the @tool-decorated functions"):
        ToolRegistry().process_tools([source])


def test_other_objects_are_rejected():
    with pytest.raises(TypeError, match=r"42 \(a int\).*@tool"):
        ToolRegistry().process_tools([42])
    with pytest.raises(TypeError, match=r"class EchoTool.*pass an instance"):
        ToolRegistry().process_tools([EchoTool])


def test_a_lone_string_instead_of_a_list_is_rejected():
    with pytest.raises(TypeError, match="not supported"):
        ToolRegistry().process_tools("weather.py")


def test_duplicate_names_in_one_call_register_nothing():
    registry = ToolRegistry()
    with pytest.raises(ToolNameConflictError) as caught:
        registry.process_tools([beta, alpha, alpha_again])
    assert caught.value.name == "alpha"
    assert "rename one with @tool(name=...)" in str(caught.value)
    assert len(registry) == 0


def test_duplicate_of_an_already_registered_tool():
    registry = ToolRegistry()
    registry.process_tools([alpha])
    with pytest.raises(ToolNameConflictError):
        registry.register_tool(alpha_again)
    assert registry["alpha"] is alpha


def test_registering_the_same_tool_again_is_a_no_op():
    registry = ToolRegistry()
    registry.register_tool(alpha)
    specs = registry.get_all_tool_specs()
    assert registry.process_tools([alpha, alpha]) == ["alpha"]
    assert registry.tool_names == ["alpha"]
    assert registry.get_all_tool_specs() is specs


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 65, "ünïcode"])
def test_invalid_names_are_rejected(name: str):
    with pytest.raises(ValueError, match="1 to 64 characters"):
        ToolRegistry().register_tool(EchoTool(name))


@pytest.mark.parametrize("name", ["a", "snake_case", "kebab-case", "Digits123", "x" * 64])
def test_valid_names_are_accepted(name: str):
    registry = ToolRegistry()
    registry.register_tool(EchoTool(name))
    assert registry.tool_names == [name]


def test_tool_specs_are_cached_until_registration():
    registry = ToolRegistry()
    registry.process_tools([alpha])
    first = registry.get_all_tool_specs()
    assert first == [alpha.tool_spec]
    assert registry.get_all_tool_specs() is first
    registry.register_tool(beta)
    second = registry.get_all_tool_specs()
    assert second is not first
    assert [spec["name"] for spec in second] == ["alpha", "beta"]


def test_tool_specs_follow_a_replaced_spec():
    @tool
    def gamma(x: int) -> int:
        """Gamma."""
        return x

    registry = ToolRegistry()
    registry.register_tool(gamma)
    before = registry.get_all_tool_specs()
    gamma.tool_spec = {**gamma.tool_spec, "description": "Better."}
    after = registry.get_all_tool_specs()
    assert after is not before
    assert after[0]["description"] == "Better."
