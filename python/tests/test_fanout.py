"""fexpr.fanout: batches over worker processes (concurrent.futures and a local Ray instance)
give what one process gives; what crosses the process boundary pickles."""

import functools
import importlib.util
import os
import pathlib
import pickle
import sys
from dataclasses import dataclass

import pytest

from fexpr import ToolManager
from fexpr.fanout import execute_batch, map_chunks


@dataclass
class Point:
    x: int
    y: int


def add_points(p1: Point, p2: Point) -> Point:
    """Add two points."""
    return Point(p1.x + p2.x, p1.y + p2.y)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def make_manager():
    """Built inside each worker."""
    return ToolManager(tools=[add, add_points], additional_context={"Point": Point, "x": 2})


TEXTS = [
    "add(a=1, b=2)",
    "[add(a=x, b=3), add_points(p1=Point(x=1, y=2), p2={'x': 3, 'y': 4})]",
    "add(a=1)",
    "__import__('os').system('id')",
    "add(a='1', b=2)",
] * 8


def comparable(results):
    # Each run generates its own call ids; everything else must be the same.
    def row(o):
        return {k: v for k, v in o.to_dict().items() if k != "call_id"}

    return [[(row(o), o.output, o.error, o.parsed_input) for o in outs] for outs in results]


def test_outputs_errors_and_definitions_pickle():
    manager = make_manager()
    outs = manager.execute(TEXTS[1]) + manager.execute(TEXTS[2]) + manager.execute_via_sandbox(TEXTS[0])
    for out in outs:
        back = pickle.loads(pickle.dumps(out))
        assert (back.to_dict(), back.output, back.error, back.parsed_input) == (
            out.to_dict(),
            out.output,
            out.error,
            out.parsed_input,
        )
    assert pickle.loads(pickle.dumps(outs[1].output)) == Point(4, 6)
    assert pickle.loads(pickle.dumps(outs[2].error)) == outs[2].error
    assert pickle.loads(pickle.dumps(manager.function_definitions)) == manager.function_definitions
    assert outs[3].receipt is not None and pickle.loads(pickle.dumps(outs[3])).receipt.host_calls == 1


def test_processes_give_what_one_process_gives():
    local = execute_batch(make_manager, TEXTS, backend="local")
    assert local[1][1].output == Point(4, 6) and local[3][0].error is not None
    assert comparable(execute_batch(make_manager, TEXTS, workers=2, backend="processes")) == comparable(local)


# Ray from PyPI (scripts/ci-python.sh installs it); required under CI.
if os.environ.get("CI"):
    import ray
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    here = str(pathlib.Path(__file__).resolve().parent)
    examples = str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([here, examples, *sys.path])}},
    )
    yield ray
    ray.shutdown()


def test_ray_gives_what_one_process_gives(local_ray):
    local = execute_batch(make_manager, TEXTS, backend="local")
    assert comparable(execute_batch(make_manager, TEXTS, workers=2, backend="ray")) == comparable(local)


@pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason="bfcl-eval is not installed")
@pytest.mark.parametrize("sandboxed", [False, True], ids=["native", "sandboxed"])
def test_bfcl_ground_truth_on_ray_equals_one_process(local_ray, sandboxed):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))
    import bfcl_conformance

    from fexpr import bfcl

    cases = bfcl_conformance.load_cases()
    run = functools.partial(bfcl.run_ground_truth, sandboxed=sandboxed)
    single = run(cases)
    assert len(single) == 800 and sum(len(turns) for turns in single) > 3000
    assert map_chunks(run, cases, workers=2, backend="ray") == single


def test_map_chunks_documents_its_items_with_an_example_that_runs():
    import doctest

    from fexpr import fanout

    assert "``items`` are" in fanout.map_chunks.__doc__
    result = doctest.testmod(fanout)
    assert result.attempted > 0 and result.failed == 0
