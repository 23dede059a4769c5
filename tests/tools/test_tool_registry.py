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


def test_plain_function_is_skipped_with_a_warning_as_in_strands(caplog: pytest.LogCaptureFixture):
    registry = ToolRegistry()
    assert registry.process_tools([alpha, plain_function]) == ["alpha"]
    assert registry.tool_names == ["alpha"]
    assert "unrecognized tool specification" in caplog.text


def test_other_objects_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture):
    registry = ToolRegistry()
    assert registry.process_tools([42, EchoTool]) == []
    assert caplog.text.count("unrecognized tool specification") == 2


def test_a_failed_load_registers_nothing():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match=r"Failed to load tool no_such_module_xyz: .*not a valid tool string"):
        registry.process_tools([alpha, "no_such_module_xyz"])
    assert len(registry) == 0


def test_same_name_replaces_a_hot_reloadable_tool_as_in_strands():
    registry = ToolRegistry()
    assert registry.process_tools([beta, alpha, alpha_again]) == ["beta", "alpha", "alpha"]
    assert registry["alpha"] is alpha_again
    registry.register_tool(alpha)
    assert registry["alpha"] is alpha


def test_duplicate_names_of_tools_without_hot_reload_register_nothing():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="Tool name 'echo' already exists") as caught:
        registry.process_tools([beta, EchoTool(), EchoTool()])
    assert isinstance(caught.value.__cause__, ToolNameConflictError)
    assert "rename one with @tool(name=...)" in str(caught.value)
    assert len(registry) == 0
    registry.register_tool(EchoTool())
    with pytest.raises(ToolNameConflictError):
        registry.register_tool(EchoTool())


def test_names_differing_by_dash_or_underscore_are_refused():
    registry = ToolRegistry()
    registry.register_tool(EchoTool("my_tool"))
    with pytest.raises(ValueError, match="already exists as 'my_tool'"):
        registry.register_tool(EchoTool("my-tool"))


def test_registering_the_same_tool_again_is_a_no_op():
    registry = ToolRegistry()
    registry.register_tool(alpha)
    specs = registry.get_all_tool_specs()
    assert registry.process_tools([alpha, alpha]) == ["alpha", "alpha"]  # Strands lists each registration
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
