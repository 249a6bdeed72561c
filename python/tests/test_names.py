"""Tool names as their definitions give them (`get-current-weather`, `github.create_issue`):
registered, called by their Python alias from call text and by their own name from a
`Function`, answered under their own name, natively and sandboxed; a name no provider allows,
or two names Python text cannot tell apart, refused with a message naming them."""

import pytest

from fexpr import Function, FunctionExpression, FunctionTool, ToolManager


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def create(title: str) -> str:
    """Open an issue."""
    return f"opened {title}"


@pytest.fixture(scope="module")
def manager() -> ToolManager:
    return ToolManager(
        tools=[
            FunctionTool(weather, name="get-current-weather"),
            FunctionTool(create, name="github.create_issue"),
        ]
    )


@pytest.mark.parametrize("sandboxed", [False, True])
def test_python_text_reaches_a_tool_by_its_alias(manager, sandboxed):
    run = manager.execute_func_expr_via_sandbox if sandboxed else manager.execute_func_expr
    out = run(FunctionExpression(action='get_current_weather(city="Paris")'))
    assert out.error is None, out.error
    assert out.output == "sunny in Paris"
    assert out.name == "get-current-weather"
    out = run(FunctionExpression(action='github.create_issue(title="x")'))
    assert (out.output, out.name) == ("opened x", "github.create_issue")


def test_a_function_calls_a_tool_by_its_own_name(manager):
    out = manager.execute_func(Function(name="get-current-weather", kwargs={"city": "Oslo"}))
    assert out.error is None, out.error
    assert (out.output, out.name) == ("sunny in Oslo", "get-current-weather")


def test_names_no_provider_allows_or_python_cannot_tell_apart_are_refused():
    with pytest.raises(ValueError, match=r"the tool name `bad name!` is not allowed"):
        ToolManager(tools=[FunctionTool(weather, name="bad name!")])
    with pytest.raises(
        ValueError, match=r"the tools `get-weather` and `get_weather` are both called `get_weather`"
    ):
        ToolManager(
            tools=[FunctionTool(weather, name="get-weather"), FunctionTool(create, name="get_weather")]
        )
