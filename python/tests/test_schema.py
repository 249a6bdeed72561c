"""Tool schemas from type hints and docstrings, as the model sees them."""

import enum
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any, Dict, List, Literal, NamedTuple, Optional, Set, Tuple, TypedDict, Union

import numpy as np
import pytest

from fexpr import FunctionDefinition, FunctionTool, ToolManager


def params(fn):
    return FunctionTool(fn).definition.func_parameters


def props(fn):
    return params(fn)["properties"]


def test_scalars_none_and_any():
    def f(a: int, b: float, c: str, d: bool, e: None, g: Any, h):
        pass

    assert props(f) == {
        "a": {"type": "integer"},
        "b": {"type": "number"},
        "c": {"type": "string"},
        "d": {"type": "boolean"},
        "e": {"type": "null"},
        "g": {},
        "h": {},
    }
    assert params(f)["required"] == ["a", "b", "c", "d", "e", "g", "h"]


def test_collections():
    def f(
        a: list[int],
        b: List[str],
        c: dict[str, float],
        d: Dict[str, List[int]],
        e: tuple[int, str],
        g: tuple[int, ...],
        h: set[int],
        i: list,
        j: dict,
        k: tuple,
    ):
        pass

    assert props(f) == {
        "a": {"type": "array", "items": {"type": "integer"}},
        "b": {"type": "array", "items": {"type": "string"}},
        "c": {"type": "object", "additionalProperties": {"type": "number"}},
        "d": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}},
        "e": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
        "g": {"type": "array", "items": {"type": "integer"}},
        "h": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        "i": {"type": "array"},
        "j": {"type": "object"},
        "k": {"type": "array"},
    }


def test_optional_union_and_pipe_union():
    def f(a: Optional[int] = None, b: Union[int, str] = 1, c: "int | None" = None):
        pass

    p = props(f)
    assert p["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert p["b"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 1}
    if sys.version_info >= (3, 10):
        assert p["c"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert params(f)["required"] == []


class Color(enum.Enum):
    """A primary color."""

    RED = "red"
    GREEN = "green"


def test_literal_and_enum():
    def f(unit: Literal["celsius", "fahrenheit"], color: Color, n: Literal[1, 2]):
        pass

    p = props(f)
    assert p["unit"] == {"type": "string", "enum": ["celsius", "fahrenheit"]}
    assert p["color"] == {"type": "string", "enum": ["red", "green"], "title": "Color", "description": "A primary color."}
    assert p["n"] == {"type": "integer", "enum": [1, 2]}
    sig = ToolManager(tools=[f]).python_definitions[0]
    assert sig == "def f(unit: Literal['celsius', 'fahrenheit'], color: Literal['red', 'green'], n: Literal[1, 2])"


@dataclass
class Point:
    """A point in the plane.

    Attributes:
        x: Horizontal coordinate.
        y: Vertical coordinate.
    """

    x: int
    y: int = 0


@dataclass
class Segment:
    start: Point
    end: Point
    label: str = field(default="", metadata={"description": "What the segment is called."})


def test_dataclasses_are_records_under_defs():
    def f(s: Segment, points: list[Point]):
        pass

    p = params(f)
    assert p["properties"] == {
        "s": {"$ref": "#/$defs/Segment"},
        "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
    }
    assert p["$defs"]["Point"] == {
        "type": "object",
        "title": "Point",
        "properties": {
            "x": {"type": "integer", "description": "Horizontal coordinate."},
            "y": {"type": "integer", "description": "Vertical coordinate.", "default": 0},
        },
        "required": ["x"],
        "additionalProperties": False,
        "description": "A point in the plane.",
    }
    segment = p["$defs"]["Segment"]
    # No docstring: the signature dataclasses write is not a description.
    assert "description" not in segment
    assert segment["properties"]["label"] == {
        "type": "string",
        "description": "What the segment is called.",
        "default": "",
    }
    assert ToolManager(tools=[f]).python_definitions == ["def f(s: Segment, points: list[Point])"]


@dataclass
class Tree:
    value: int
    children: "list[Tree]" = field(default_factory=list)


def test_recursive_dataclasses_refer_to_themselves():
    def f(t: Tree):
        pass

    p = params(f)
    assert p["$defs"]["Tree"]["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
        "default": [],
    }


class Movie(TypedDict):
    title: str
    year: int


class Pair(NamedTuple):
    left: int
    right: int = 0


def test_typeddict_and_namedtuple():
    def f(m: Movie, p: Pair):
        pass

    defs = params(f)["$defs"]
    assert defs["Movie"]["properties"] == {"title": {"type": "string"}, "year": {"type": "integer"}}
    assert defs["Movie"]["required"] == ["title", "year"]
    assert defs["Pair"]["properties"] == {"left": {"type": "integer"}, "right": {"type": "integer", "default": 0}}
    assert defs["Pair"]["required"] == ["left"]


def test_pydantic_models():
    pydantic = pytest.importorskip("pydantic")

    class User(pydantic.BaseModel):
        """A user."""

        name: str = pydantic.Field(description="The user's name.")
        age: int = 0

    def f(u: User):
        pass

    defs = params(f)["$defs"]
    assert defs["User"] == {
        "type": "object",
        "title": "User",
        "properties": {
            "name": {"type": "string", "description": "The user's name."},
            "age": {"type": "integer", "default": 0},
        },
        "required": ["name"],
        "additionalProperties": False,
        "description": "A user.",
    }


def test_numpy_arrays():
    def f(arr: np.ndarray, typed: "np.typing.NDArray[np.float64]" = None):
        pass

    assert props(f)["arr"] == {"type": "array", "format": "ndarray", "items": {}}
    assert ToolManager(tools=[f]).python_definitions[0].startswith("def f(arr: ndarray")


def test_annotated_descriptions():
    def f(a: Annotated[int, "The first number."]):
        pass

    assert props(f)["a"] == {"type": "integer", "description": "The first number."}


def google(city: str, days: int = 3) -> str:
    """Get the weather forecast.

    Looks the city up first.

    Args:
        city: The city and country, e.g. Paris, France.
        days (int): How many days to forecast,
            at most 10.

    Returns:
        The forecast.
    """
    return city


def numpy_style(city: str, days: int = 3) -> str:
    """Get the weather forecast.

    Parameters
    ----------
    city : str
        The city and country.
    days : int
        How many days.

    Returns
    -------
    str
        The forecast.
    """
    return city


def test_google_docstrings():
    d = FunctionTool(google).definition
    assert d.func_desc == "google(city: str, days: int = 3) -> str\nGet the weather forecast.\n\nLooks the city up first."
    assert d.func_parameters["properties"] == {
        "city": {"type": "string", "description": "The city and country, e.g. Paris, France."},
        "days": {"type": "integer", "description": "How many days to forecast,\nat most 10.", "default": 3},
    }
    assert d.func_parameters["required"] == ["city"]


def test_numpy_docstrings():
    d = FunctionTool(numpy_style).definition
    assert d.func_desc.endswith("\nGet the weather forecast.")
    assert d.func_parameters["properties"]["city"]["description"] == "The city and country."
    assert d.func_parameters["properties"]["days"]["description"] == "How many days."


def test_the_adalflow_definition_shape():
    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    tool = FunctionTool(multiply)
    assert tool.definition == FunctionDefinition(
        func_name="multiply",
        func_desc="multiply(a: int, b: int) -> int\nMultiply two numbers.",
        func_parameters={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    )
    assert not tool.is_async
    assert "func_name: multiply" in tool.definition.to_yaml()


def test_defaults_without_a_json_form_leave_the_parameter_optional():
    sentinel = object()

    def f(a: int, b: object = sentinel):
        return b is sentinel

    p = params(f)
    assert p["required"] == ["a"] and p["properties"]["b"] == {}
    assert ToolManager(tools=[f]).execute_func_expr("f(a=1)").output is True


def test_varargs_are_not_offered_and_keyword_only_parameters_are():
    def f(a: int, *rest: int, b: int = 2, **extra: Any):
        return (a, rest, b, extra)

    assert list(props(f)) == ["a", "b"]
    out = ToolManager(tools=[f]).execute_func_expr("f(1, b=5)")
    assert out.output == (1, (), 5, {})


class Counter:
    """A component: its state stays on the instance."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.total = 0

    def bump(self, times: int = 1) -> int:
        """Bump the counter.

        Args:
            times: How many steps.
        """
        self.total += self.step * times
        return self.total

    async def abump(self, times: int = 1) -> int:
        """Bump the counter, asynchronously."""
        self.total += self.step * times
        return self.total


def test_bound_methods_are_tools_without_self():
    counter = Counter(step=2)
    tool = FunctionTool(counter.bump)
    assert tool.definition.func_desc == "bump(times: int = 1) -> int\nBump the counter."
    assert tool.definition.func_parameters["properties"] == {
        "times": {"type": "integer", "description": "How many steps.", "default": 1}
    }
    assert FunctionTool(counter.abump).is_async


def test_names_and_descriptions_can_be_given():
    tool = FunctionTool(lambda q: q, name="echo", description="Echo the query.")
    assert tool.definition.func_name == "echo"
    assert tool.definition.func_desc == "echo(q: Any)\nEcho the query."


def test_definitions_for_providers(manager):
    openai = manager.openai_tools()
    assert openai[1] == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
    anthropic = manager.anthropic_tools()
    assert anthropic[1]["name"] == "add" and anthropic[1]["input_schema"]["required"] == ["a", "b"]
    assert [d.func_name for d in manager.function_definitions] == [
        "multiply", "add", "divide", "search", "numpy_sum", "add_points",
    ]
    assert manager.yaml_definitions[1].startswith("func_name: add\n")
    assert '"func_name": "add"' in manager.json_definitions[1]


def test_two_classes_with_one_name_are_refused():
    def make():
        @dataclass
        class Point:
            z: int

        return Point

    Other = make()

    def f(p: Point, q: Other):
        pass

    with pytest.raises(TypeError, match="two record types are named 'Point'"):
        FunctionTool(f)
