"""Sweeps: a grid of scenarios described once (:class:`Grid`), priced whole or cut into the
shards a cluster's workers price (the same 0-based ``i/n`` slices of the product order as
the command line's ``--shard``)."""

from __future__ import annotations

import copy
from typing import Any, List, Mapping, Optional, Tuple, Union

from . import _args, _memory, _native, _pyarrow, _table
from . import DEFAULT_MAX_SCENARIOS


class Grid:
    """A sweep's grid: the product of chips, engines, param values, formats and fusion plans,
    in the command line's product order (chip, engine, then the params in the order given, then
    the formats, then the fusion plan), or one shard of it. It is plain data, so it pickles: a cluster's
    worker prices ``grid.shard(i, n).sweep()``. Give workloads and chips as built-in names or
    YAML text (or loaded objects made from them) where workers do not share the driver's files.

    >>> g = grid("llama-3.1-8b", ["h100-sxm", "h200"], set={"batch": [1, 8, 64]})
    >>> len(g), [len(s) for s in g.shards(4)]
    (6, [1, 2, 1, 2])
    """

    def __init__(self, workload, chips, params, dtypes, fusions, mode, memory_utilization,
                 skip_invalid, per_op, request, filter, max_scenarios, max_memory_bytes,
                 engines=()):
        # Each number is kept as the command line's text (see `_args`), read when priced.
        self.workload = workload
        self.chips = chips
        #: Engine ids or files, an axis after the chips; empty: each chip file's engine.
        self.engines = list(engines)
        self.params = params
        self.dtypes = dtypes
        self.fusions = fusions
        self.mode = mode
        self.memory_utilization = memory_utilization
        self.skip_invalid = skip_invalid
        self.per_op = per_op
        self.request = request
        self.filter = filter
        self.max_scenarios = max_scenarios
        #: The most bytes the table may take; ``None``: half of what the process pricing it
        #: can still take, measured when it starts (see ``max_memory_bytes`` of :func:`grid`).
        self.max_memory_bytes = max_memory_bytes
        #: ``(i, n)``: slice ``i`` of ``n``; ``(0, 1)`` is the whole grid.
        self.part = (0, 1)

    def __len__(self) -> int:
        """Scenarios in this shard (in the whole grid, for the whole grid)."""
        total = _native.grid_len(self)
        i, n = self.part
        return (i + 1) * total // n - i * total // n

    def shard(self, i: int, n: int) -> "Grid":
        """Slice ``i`` of ``n`` (``i`` from 0 to ``n - 1``): scenarios ``i * total // n`` to
        ``(i + 1) * total // n`` of the whole grid's product order. The ``n`` shards' tables,
        concatenated in order, are the whole sweep's. Read as ``--shard i/n`` is."""
        text = f"{_args.number('`shard`', i)}/{_args.number('`shard`', n)}"
        part = copy.copy(self)
        part.part = _native.shard(text)
        return part

    def shards(self, n: int) -> List["Grid"]:
        """The ``n`` shards of the whole grid, in order."""
        first = self.shard(0, n)  # refuses what `--shard 0/N` refuses: N below 1, not whole
        return [first] + [self.shard(i, n) for i in range(1, first.part[1])]

    def sweep(self):
        """Prices every scenario of this grid (or shard) into a ``pyarrow.Table``: the rows
        of ``stepcost sweep``, column for column. A table that would take more than
        ``max_memory_bytes`` raises ``MemoryError`` before any scenario is priced (or, with
        ``where``, once the rows kept pass it)."""
        _pyarrow()  # needed for the table: imported first, its memory counted as in use
        cap, origin = _memory.cap(self.max_memory_bytes)
        return _table(_native.sweep(self, cap, origin))

    def __repr__(self) -> str:
        i, n = self.part
        part = "" if n == 1 else f", shard {i}/{n}"
        return f"<stepcost.Grid of {self.workload!r} on {len(self.chips)} chip(s){part}>"


def grid(
    workload,
    chips,
    *,
    set: Optional[Mapping[str, Any]] = None,
    dtypes: Optional[Mapping[str, Any]] = None,
    fusion: Union[None, str, List[str]] = None,
    engine: Union[None, str, List[str]] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    skip_invalid: bool = False,
    per_op: bool = False,
    request=None,
    where: Optional[str] = None,
    max_scenarios: int = DEFAULT_MAX_SCENARIOS,
    max_memory_bytes: Optional[int] = None,
) -> Grid:
    """Describes a sweep without pricing it. ``set`` maps a param to a number or an iterable
    of them (``range(1, 257)``, or the command line's list as text, ``"1..=256:x2"``),
    ``dtypes`` a key to a format or a list of them, ``fusion`` is a plan, a list of plans or
    ``"all"``; ``engine`` is an engine (``"vllm"``, ``"vllm@0.7"``, an engine file), a list
    of them or ``"all"``: an axis after the chips, as ``sweep --engine`` (by default each chip
    file's engine; roofline mode prices under none); ``where`` keeps the rows that pass a
    condition (``"fits && ms_per_token <= 50"``,
    the command line's ``--where``); ``skip_invalid`` leaves out scenarios the chip cannot run
    instead of a row with ``error`` filled. ``max_scenarios`` refuses a larger grid (or shard),
    as ``--max-scenarios``; ``max_memory_bytes`` caps the table's bytes (default ``None``: half
    of what the pricing process can still take, measured when the sweep starts). Every value
    is read as the command line reads its flag: what it refuses raises ``InputError`` here."""
    g = Grid(_args.workload(workload), _args.chips(chips), _args.set_axes(set),
             _args.dtype_axes(dtypes), _args.fusions(fusion),
             _args.text("mode", mode, optional=False),
             _args.optional_number("memory_utilization", memory_utilization),
             _args.flag("skip_invalid", skip_invalid), _args.flag("per_op", per_op),
             _args.request(request), _args.text("where", where),
             _args.number("`max_scenarios`", max_scenarios),
             _args.max_memory_bytes(max_memory_bytes), _args.engines(engine))
    _native.check_grid(g)
    return g


def sweep(
    workload,
    chips,
    *,
    set: Optional[Mapping[str, Any]] = None,
    dtypes: Optional[Mapping[str, Any]] = None,
    fusion: Union[None, str, List[str]] = None,
    engine: Union[None, str, List[str]] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    skip_invalid: bool = False,
    per_op: bool = False,
    request=None,
    where: Optional[str] = None,
    shard: Optional[Tuple[int, int]] = None,
    max_scenarios: int = DEFAULT_MAX_SCENARIOS,
    max_memory_bytes: Optional[int] = None,
):
    """Prices a grid of scenarios in parallel (the command line's thread pool) into a
    ``pyarrow.Table``: the rows of ``stepcost sweep``, column for column, in its product
    order. Arguments as :func:`grid`; ``shard=(i, n)`` prices one slice, as ``--shard i/n``.
    A table larger than ``max_memory_bytes`` raises ``MemoryError``, with its estimate and the
    ways out: ``where``, shards, or a file written by the command line.

    >>> t = sweep("llama-3.1-8b", ["h100-sxm", "h200"], set={"batch": [1, 64]},
    ...           dtypes={"weight": ["bf16", "fp8"]})
    >>> t.num_rows, t.column("chip").to_pylist()[:4]
    (8, ['h100-sxm', 'h100-sxm', 'h100-sxm', 'h100-sxm'])
    >>> t.column("weight_dtype").to_pylist()[:4], t.column("batch").to_pylist()[:4]
    (['bf16', 'fp8', 'bf16', 'fp8'], [1.0, 1.0, 64.0, 64.0])
    """
    g = grid(workload, chips, set=set, dtypes=dtypes, fusion=fusion, engine=engine, mode=mode,
             memory_utilization=memory_utilization, skip_invalid=skip_invalid, per_op=per_op,
             request=request, where=where, max_scenarios=max_scenarios,
             max_memory_bytes=max_memory_bytes)
    if shard is not None:
        try:
            i, n = shard
        except (TypeError, ValueError):
            raise TypeError(f"`shard` is (i, n), slice i of n; found {shard!r}") from None
        g = g.shard(i, n)
    return g.sweep()
