"""Property test of the one conversion of tool results (issue 28): arbitrary nested Python values,
numpy dtypes and shapes, as a tool's result and as the next tool's argument. Whatever the value:
no panic, no exception but the tool's own, a result bounded by ``Limits.max_output_bytes`` or a
structured error; and a value that converts reaches the next tool equal to itself."""

from __future__ import annotations

import enum
import math
from collections import OrderedDict, deque
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fexpr import ErrorKind, Limits, ToolManager

MAX_OUTPUT = 1 << 16


class Color(enum.Enum):
    RED = 1
    GREEN = "g"


class Handle:
    def __repr__(self) -> str:
        return "<Handle>"


_RESULT: list[Any] = [None]
_SEEN: list[Any] = []


def make() -> Any:
    return _RESULT[0]


def take(x: Any) -> int:
    _SEEN.append(x)
    return 1


MANAGER = ToolManager(tools=[make, take], limits=Limits(max_output_bytes=MAX_OUTPUT))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    # Ints around max_int_digits (4300) and far past it.
    st.integers(min_value=4000, max_value=4400).map(lambda digits: 10**digits - 1),
    st.integers(min_value=1, max_value=8).map(lambda k: -(1 << (k * 10_000))),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(codec=None), max_size=50),  # lone surrogates included
    st.binary(max_size=50),
    st.sampled_from([Color.RED, Color.GREEN, Handle(), ..., 1j, np.int64(7), np.float32(0.5), np.uint64(2**64 - 1)]),
)

dtypes = st.one_of(
    hnp.boolean_dtypes(),
    hnp.integer_dtypes(),
    hnp.unsigned_integer_dtypes(),
    hnp.floating_dtypes(),
    hnp.complex_number_dtypes(),
    hnp.datetime64_dtypes(),
    hnp.unicode_string_dtypes(max_len=4),
)
arrays = st.one_of(
    hnp.arrays(dtypes, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)),
    # Many dimensions (numpy 2 allows 64) and many empty rows.
    st.integers(min_value=30, max_value=64).map(lambda n: np.zeros((1,) * n)),
    st.sampled_from([np.zeros((10**7, 0)), np.zeros((0, 10**7)), np.zeros((3, 0, 10**6))]),
)


def _containers(children: st.SearchStrategy) -> st.SearchStrategy:
    hashable = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.sampled_from([Color.RED, 1.0, 0.0, -0.0]))
    return st.one_of(
        st.lists(children, max_size=6),
        st.lists(children, max_size=6).map(tuple),
        st.lists(children, max_size=6).map(deque),
        st.dictionaries(hashable, children, max_size=6),
        st.dictionaries(hashable, children, max_size=6).map(OrderedDict),
        st.sets(hashable, max_size=6),
        st.frozensets(hashable, max_size=6),
        st.lists(children, max_size=3).map(lambda xs: (x for x in xs)),
    )


values = st.recursive(st.one_of(scalars, arrays), _containers, max_leaves=30)


def _deep(n: int) -> Any:
    value: Any = 0
    for _ in range(n):
        value = [value]
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return True  # dicts, records, sets: converted (a record becomes its class or a dict)


def _check(value: Any) -> None:
    _RESULT[0] = value
    out = MANAGER.execute_func_expr("make()")
    # The call the input names: the object itself, or a structured error; shown bounded.
    assert out.error is None or out.error.kind in (ErrorKind.Limit, ErrorKind.Type), out.error
    if out.error is None:
        assert out.output is value
    assert len(str(out)) <= MAX_OUTPUT * 4 + 10_000
    assert len(repr(out.to_dict())) <= MAX_OUTPUT * 4 + 10_000
    _SEEN.clear()
    nested = MANAGER.execute_func_expr("take(x=make())")
    if nested.error is None:
        assert len(_SEEN) == 1 and _same(_SEEN[0], value) if not hasattr(value, "__next__") else True
    else:
        assert nested.error.kind in (ErrorKind.Limit, ErrorKind.Type), nested.error
        assert _SEEN == []
        assert "\x01" not in str(nested.error)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(values)
def test_any_result_converts_or_is_a_structured_error(value):
    _check(value)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=190, max_value=300))
def test_deep_results_are_values_or_limit_errors(depth):
    _check(_deep(depth))
