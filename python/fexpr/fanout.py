"""Fan a batch out over worker processes: Ray tasks, or ``concurrent.futures`` processes for
users without Ray.

A ``ToolManager`` holds Python tools and a Rust engine: it is built inside each worker (by a
picklable ``make_manager``, a module-level function), once per worker process, never shipped.
What comes back crosses the process boundary by pickle: ``FunctionOutput`` (with the objects
the tools returned), ``Error``, ``Function`` and the definitions all pickle.

    from fexpr.fanout import execute_batch
    outputs = execute_batch(my_tools.make_manager, texts, workers=2, backend="ray")

``backend="ray"`` uses the running Ray instance (``ray.init()`` first, locally or
``ray.init(address="auto")`` on a cluster); ``"processes"`` a ``ProcessPoolExecutor`` (spawned,
not forked: the engine's threads do not survive a fork). Results come back in input order, the
same as one process running the batch.
"""

from __future__ import annotations

import functools
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

from . import _fexpr

__all__ = ["execute_batch", "map_chunks"]

T = TypeVar("T")
R = TypeVar("R")

# The manager each worker process built, by its maker.
_MANAGERS: dict[Any, Any] = {}


def _chunks(items: Sequence[T], count: int) -> list[list[T]]:
    size = max(1, -(-len(items) // max(1, count)))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def map_chunks(
    fn: Callable[[list[T]], list[R]],
    items: Sequence[T],
    *,
    workers: int = 2,
    backend: str = "processes",
    chunks: int | None = None,
) -> list[R]:
    """``fn`` (picklable: a module-level function or a ``functools.partial`` of one) over
    ``items`` split into ``chunks`` (default: 4 per worker), on ``workers`` processes; the
    results concatenated in input order.

    ``items`` are whatever ``fn`` takes a list of, and must pickle (every backend but
    ``"local"`` sends each chunk, a ``list`` of consecutive items, to a worker): model texts
    for a function that runs them on a ``ToolManager`` built in the worker, or for
    ``fexpr.bfcl.run_ground_truth`` the ``(test entry, turns of call strings)`` pairs of
    BFCL's data. ``fn`` gets one chunk and returns one result per item, in order. With
    ``backend="ray"`` each chunk is one Ray task (``ray.init()`` first)::

        >>> map_chunks(_lengths, ["add(a=1, b=2)", "x"], backend="local")
        [13, 1]
    """
    parts = _chunks(items, chunks or 4 * workers)
    if backend == "ray":
        import ray

        if not ray.is_initialized():
            raise RuntimeError("backend='ray' needs ray.init() first (locally, or address='auto' on a cluster)")
        task = ray.remote(num_cpus=1)(_apply)
        results = ray.get([task.remote(fn, part) for part in parts])
    elif backend == "processes":
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(fn, parts))
    elif backend == "local":
        results = [fn(part) for part in parts]
    else:
        raise ValueError(f"backend must be 'ray', 'processes' or 'local', not {backend!r}")
    return [r for part in results for r in part]


def _lengths(texts: list[str]) -> list[int]:
    """Each text's length (``map_chunks``'s example)."""
    return [len(t) for t in texts]


def _apply(fn: Callable[[list[T]], list[R]], part: list[T]) -> list[R]:
    return fn(part)


def _manager(make_manager: Callable[[], Any]) -> Any:
    manager = _MANAGERS.get(make_manager)
    if manager is None:
        manager = _MANAGERS[make_manager] = make_manager()
    return manager


def _execute_chunk(make_manager: Callable[[], Any], method: str, texts: list[str]) -> list[Any]:
    run = getattr(_manager(make_manager), method)
    return [_portable(run(text)) for text in texts]


def _portable(result: Any) -> Any:
    """``result`` as it can come back from a worker: an output whose object does not pickle
    (a lock, a class defined in a function) loses the object and carries the error instead, so
    one bad item never fails its whole chunk."""
    if isinstance(result, list):
        return [_portable(r) for r in result]
    if isinstance(result, _fexpr.Executed):
        return _fexpr.Executed._unpickle(
            [_portable(o) for o in result.outputs], list(result.ignored), result.nothing_to_run
        )
    try:
        pickle.dumps(result)
    except Exception as e:  # noqa: BLE001 - any pickling failure is this item's error
        without = getattr(result, "_without_output", None)
        if without is None:
            raise
        return without(f"the output cannot be sent back from the worker: {type(e).__name__}: {e}")
    return result


def execute_batch(
    make_manager: Callable[[], Any],
    texts: Sequence[str],
    *,
    method: str = "execute",
    workers: int = 2,
    backend: str = "processes",
    chunks: int | None = None,
) -> list[Any]:
    """Run each of ``texts`` with ``make_manager()``'s ``method`` (``execute``,
    ``execute_func_expr``, ``execute_model_output``, their ``_via_sandbox`` forms, ...) in
    worker processes; one result per text, in order."""
    return map_chunks(
        functools.partial(_execute_chunk, make_manager, method),
        texts,
        workers=workers,
        backend=backend,
        chunks=chunks,
    )
