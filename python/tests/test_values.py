"""Values round-trip as Python users expect: the tool gets instances of its parameter types, the
caller gets the object the tool returned, the model sees fexpr's form of it."""

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, TypedDict

import numpy as np
import pytest

from fexpr import ErrorKind, Function, Limits, ToolManager, ToolOutput


@dataclass
class Point:
    x: int
    y: int


@dataclass
class Segment:
    start: Point
    end: Point
    tags: list[str] = field(default_factory=list)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Movie(TypedDict):
    title: str
    year: int


class Pair(NamedTuple):
    left: int
    right: int


def run(fn, text, **context):
    return ToolManager(tools=[fn], additional_context=context).execute_func_expr(text)


def received(fn, text, **context):
    """What the tool received, by returning its arguments."""
    out = run(fn, text, **context)
    assert out.error is None, out
    return out.output


def test_a_dataclass_argument_arrives_as_the_dataclass():
    def length(s: Segment) -> Any:
        return s

    s = received(length, "length(s=Segment(start=Point(x=1, y=2), end={'x': 3, 'y': 4}))", Segment=Segment, Point=Point)
    assert s == Segment(Point(1, 2), Point(3, 4), [])
    assert type(s.start) is Point and type(s.end) is Point


def test_a_dict_becomes_the_dataclass_and_bad_fields_are_type_errors():
    def f(p: Point) -> Any:
        return p

    assert received(f, "f(p={'x': 1, 'y': 2})") == Point(1, 2)
    out = run(f, "f(p={'x': 1, 'z': 2})")
    assert out.error.kind == ErrorKind.Type and "no field `z`" in out.error.message
    out = run(f, "f(p={'x': 1})")
    assert out.error.kind == ErrorKind.Type and "missing field `y`" in out.error.message


def test_a_dataclass_that_refuses_its_fields_is_an_error_of_the_call():
    @dataclass
    class Positive:
        n: int

        def __post_init__(self):
            if self.n <= 0:
                raise ValueError("n must be positive")

    def f(p: Positive) -> int:
        return p.n

    assert run(f, "f(p=Positive(n=3))", Positive=Positive).output == 3
    out = run(f, "f(p={'n': -1})")
    assert out.error.kind == ErrorKind.Type
    assert "ValueError: n must be positive" in out.error.message


def test_numpy_arrays_arrive_as_arrays():
    def f(arr: np.ndarray) -> Any:
        return arr

    for text in ("f(arr=np.array([[1, 2], [3, 4]]))", "f(arr=[[1, 2], [3, 4]])"):
        arr = received(f, text, np=np)
        assert isinstance(arr, np.ndarray)
        assert arr.dtype == np.int64 and arr.tolist() == [[1, 2], [3, 4]]
    floats = received(f, "f(arr=np.array([0.5, 1]))", np=np)
    assert floats.dtype == np.float64 and floats.tolist() == [0.5, 1.0]
    bools = received(f, "f(arr=[True, False])")
    assert bools.dtype == np.bool_


def test_large_arrays_cross_without_an_object_per_element():
    big = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)

    def total(arr: np.ndarray) -> float:
        return float(arr.sum())

    def echo(arr: np.ndarray) -> np.ndarray:
        return arr * 2

    manager = ToolManager(tools=[total, echo], additional_context={"big": big},
                          limits=Limits(max_collection_len=2_000_000, max_eval_bytes=64 << 20, max_output_bytes=64 << 20))
    out = manager.execute_func_expr("total(arr=big)")
    assert out.error is None and out.output == float(big.astype(np.float64).sum())
    out = manager.execute_func_expr("echo(arr=big)")
    assert isinstance(out.output, np.ndarray) and out.output.shape == (1000, 1000)
    # Nested: the inner result crosses as fexpr's ndarray and arrives as a numpy array again.
    out = manager.execute_func_expr("total(arr=echo(arr=big))")
    assert out.output == 2 * float(big.astype(np.float64).sum())


def test_numpy_results_are_the_objects_and_their_values():
    def f() -> Any:
        return np.int64(7)

    out = run(f, "f()")
    assert type(out.output) is np.int64 and str(out) == "f() -> 7"


def test_enums_literals_and_optional():
    def paint(color: Color, shade: Optional[Color] = None) -> Any:
        return (color, shade)

    assert received(paint, "paint(color='red')") == (Color.RED, None)
    assert received(paint, "paint(color=Color.BLUE, shade='red')", Color=Color) == (Color.BLUE, Color.RED)
    out = run(paint, "paint(color='green')")
    assert out.error.kind == ErrorKind.Type


def test_containers_tuples_sets_and_typed_dicts():
    def f(pair: tuple[int, str], tags: set[str], frozen: frozenset[int], items: tuple[int, ...], movie: Movie, p: Pair) -> Any:
        return (pair, tags, frozen, items, movie, p)

    got = received(f, "f(pair=[1, 'a'], tags=['x', 'y', 'x'], frozen=[1, 2], items=[1, 2, 3], movie={'title': 'Up', 'year': 2009}, p=Pair(left=1, right=2))", Pair=Pair)
    pair, tags, frozen, items, movie, p = got
    assert pair == (1, "a") and tags == {"x", "y"} and frozen == frozenset({1, 2})
    assert type(frozen) is frozenset and items == (1, 2, 3) and type(items) is tuple
    assert movie == {"title": "Up", "year": 2009} and type(movie) is dict
    assert p == Pair(1, 2) and type(p) is Pair


def test_pydantic_models_round_trip():
    pydantic = pytest.importorskip("pydantic")

    class User(pydantic.BaseModel):
        name: str
        age: int = 0

    def greet(u: User) -> User:
        return User(name=u.name.upper(), age=u.age + 1)

    manager = ToolManager(tools=[greet], additional_context={"User": User})
    out = manager.execute_func_expr("greet(u=User(name='ada'))")
    assert out.output == User(name="ADA", age=1)
    assert str(out) == "greet(u=User(name='ada', age=0)) -> User(name='ADA', age=1)"
    assert manager.execute_func_expr("greet(u={'name': 'bob', 'age': 2})").output.age == 3


def test_records_from_context_values_and_results_keep_their_class():
    def shift(p: Point, by: int) -> Point:
        return Point(p.x + by, p.y + by)

    manager = ToolManager(tools=[shift], additional_context={"origin": Point(0, 0), "Point": Point})
    out = manager.execute_func_expr("shift(p=shift(p=origin, by=1), by=2)")
    assert out.output == Point(3, 3)
    assert out.parsed_input.kwargs["p"] == Point(1, 1)


def test_results_of_a_record_class_its_subclass_and_the_class_itself():
    # The manager's record classes are read by the fields it noted when it was built; a
    # subclass (more fields) and the class object itself take the general path.
    @dataclass
    class Point3(Point):
        z: int = 0

    def make(kind: str) -> Any:
        return {"point": Point(1, 2), "point3": Point3(1, 2, 3), "class": Point}[kind]

    manager = ToolManager(tools=[make], additional_context={"Point": Point})
    assert manager.execute_func_expr("make(kind='point')").output == Point(1, 2)
    sub = manager.execute_func_expr("make(kind='point3')")
    assert sub.output == Point3(1, 2, 3) and type(sub.output) is Point3
    assert str(sub) == "make(kind='point3') -> Point3(x=1, y=2, z=3)"
    cls = manager.execute_func_expr("make(kind='class')")
    assert cls.output is Point
    assert str(cls) == f"make(kind='class') -> {repr(repr(Point))}"


def test_big_ints_bytes_and_nested_data():
    def f(data: Any) -> Any:
        return data

    value = {"n": 2**100, "b": b"\x00\xff", "nested": [(1, 2.5), {"k": None}], "s": {1, 2}}
    out = ToolManager(tools=[f], additional_context={"v": value}).execute_func_expr("f(data=v)")
    assert out.output == value


def test_an_object_without_a_fexpr_value_is_kept_and_shown_as_its_repr():
    class Handle:
        def __repr__(self):
            return "<Handle 7>"

    handle = Handle()

    def f() -> Any:
        return handle

    out = run(f, "f()")
    assert out.output is handle
    assert str(out) == "f() -> '<Handle 7>'"


def test_a_tool_output_gives_an_observation():
    def search(query: str) -> Any:
        hits = [f"{query} {i}" for i in range(100)]
        return ToolOutput(output=hits, observation=f"{len(hits)} hits")

    out = run(search, "search(query='q')")
    assert out.output[:2] == ["q 0", "q 1"] and out.observation == "100 hits"


def test_function_arguments_are_converted_and_bound():
    def f(p: Point, arr: np.ndarray) -> Any:
        return (p, arr)

    manager = ToolManager(tools=[f])
    out = manager.execute_func(Function(name="f", kwargs={"p": Point(1, 2), "arr": np.array([1.5])}))
    p, arr = out.output
    assert p == Point(1, 2) and arr.tolist() == [1.5]
    out = manager.execute_func(Function(name="f", kwargs={"p": object(), "arr": [1]}))
    assert out.error.kind == ErrorKind.Type and "object" in out.error.message


def test_oversized_and_self_referencing_results_are_limit_errors():
    def big() -> Any:
        return "x" * 1000

    def loop() -> Any:
        a = []
        a.append(a)
        return a

    manager = ToolManager(tools=[big, loop], limits=Limits(max_output_bytes=500))
    out = manager.execute_func_expr("big()")
    assert out.error.kind == ErrorKind.Limit and "max_output_bytes" in out.error.message
    out = ToolManager(tools=[loop]).execute_func_expr("loop()")
    assert out.error.kind == ErrorKind.Limit


def test_context_values_without_a_fexpr_value_are_refused_at_once():
    with pytest.raises(TypeError, match="fexpr has no value for a `object` object"):
        ToolManager(additional_context={"o": object()})
    with pytest.raises(TypeError, match="pass functions a model may call as tools"):
        ToolManager(additional_context={"f": print})
    import os

    with pytest.raises(TypeError, match="only numpy is mapped"):
        ToolManager(additional_context={"os": os})


def test_python_builtins_in_the_context_compute_what_python_computes():
    m = ToolManager(tools=[], additional_context={"max": max, "min": min, "sum": sum})
    assert m.execute_func_expr("max(3, 5)").output == 5
    assert m.execute_func_expr("min(3, 5)").output == 3
    assert m.execute_func_expr("sum([2**62, 2**62])").output == 2**63
