"""The seed walkthrough's tools (AdalFlow's "Function calls" tutorial), shared by the tests."""

import asyncio
from dataclasses import dataclass
from typing import List, Union

import numpy as np
import pytest

from fexpr import ToolManager


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def divide(a: float, b: float) -> float:
    """Divide two numbers."""
    await asyncio.sleep(0)
    return float(a) / b


async def search(query: str) -> List[str]:
    """Search for query and return a list of results."""
    await asyncio.sleep(0)
    return ["result1" + query, "result2" + query]


def numpy_sum(arr: np.ndarray) -> Union[int, float]:
    """Sum the elements of an array."""
    return np.sum(arr)


@dataclass
class Point:
    x: int
    y: int


def add_points(p1: Point, p2: Point) -> Point:
    """Add two points."""
    return Point(p1.x + p2.x, p1.y + p2.y)


TOOLS = [multiply, add, divide, search, numpy_sum, add_points]
CONTEXT = {"x": 2, "y": 0, "np": np, "Point": Point}


@pytest.fixture(scope="session")
def manager() -> ToolManager:
    return ToolManager(tools=TOOLS, additional_context=CONTEXT)
