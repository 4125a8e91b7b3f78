"""stepcost prices one step of a transformer model (a prefill or a decode step) on an
accelerator: the engine of the ``stepcost`` command, in-process.

Workloads and chips are built-in names, paths of YAML files, or YAML text. Tables come back
as ``pyarrow.Table`` (``.to_pandas()`` or ``polars.from_arrow(...)`` make data frames of
them); pyarrow is imported only by the calls that return one. Every argument is read as the
command line reads its flag: a value it refuses raises ``InputError`` (a ``ValueError``) with
its reason, a value of the wrong type ``TypeError``; nothing is truncated or taken for empty.

>>> import stepcost
>>> "h200" in stepcost.chips() and "llama-3.1-70b" in stepcost.workloads()
True
>>> r = stepcost.run("llama-3.1-70b", "h200", set={"batch": 32}, dtypes={"weight": "fp8"})
>>> r.chip, r.weight_dtype, r.batch
('h200', 'fp8', 32.0)
>>> r.fits
True
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _args
from . import _stepcost as _native
from ._stepcost import Chip, InputError, StepcostError, UnsupportedError, Workload

__all__ = [
    "Chip",
    "Grid",
    "InputError",
    "Result",
    "StepcostError",
    "UnsupportedError",
    "Workload",
    "chips",
    "compare",
    "grid",
    "load_chip",
    "load_workload",
    "plan",
    "run",
    "sweep",
    "workloads",
]

#: The most scenarios one ``sweep`` (or one shard of it) prices unless told otherwise: the
#: command line's ``--max-scenarios`` default.
DEFAULT_MAX_SCENARIOS = 100_000_000


def _pyarrow():
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(
            "stepcost returns tables as pyarrow.Table, which needs the package `pyarrow`: "
            "pip install pyarrow (or stepcost[arrow])"
        ) from e
    return pyarrow


def _table(stream):
    """A ``pyarrow.Table`` read from a native Arrow stream (the Arrow PyCapsule interface)."""
    return _pyarrow().RecordBatchReader.from_stream(stream).read_all()


def chips() -> List[str]:
    """The ids of the built-in chips, sorted.

    >>> chips()[:3]
    ['a100-40gb', 'a100-80gb', 'b200']
    """
    return _native.chips()


def workloads() -> List[str]:
    """The ids of the built-in workloads, sorted.

    >>> "llama-3.1-8b" in workloads()
    True
    """
    return _native.workloads()


def load_chip(x: Union[str, "os.PathLike[str]"], name: Optional[str] = None) -> Chip:
    """Loads a chip: ``x`` is YAML text if it contains a line break, else the path of an
    existing file, else a built-in name. ``name`` is what errors (and the chip's id) call YAML
    text; it defaults to ``<text>``.

    >>> c = load_chip("h100-sxm")
    >>> c.id, c.name
    ('h100-sxm', 'NVIDIA H100 SXM')
    """
    return Chip(os.fspath(x), name)


def load_workload(x: Union[str, "os.PathLike[str]"], name: Optional[str] = None) -> Workload:
    """Loads a workload as :func:`load_chip` loads a chip.

    >>> w = load_workload("llama-3.1-8b")
    >>> w.name, "batch" in w.params, "flash" in w.fusion_plans
    ('Llama-3.1-8B', True, True)
    """
    return Workload(os.fspath(x), name)


class Result:
    """One priced scenario: each column of ``stepcost run --format csv`` is an attribute
    (``step_time_us``, ``tokens_per_s``, ``fits``, ...) and an item (``r["kernels"]``, the
    count, since ``r.kernels()`` is the kernels' table), in the unit its name ends with.

    >>> r = run("llama-3.1-8b", "h100-sxm", set={"batch": 8}, mode="roofline")
    >>> r.mode, r["kernels"], r.kernels().num_rows  # kernels per step; distinct kernels
    ('roofline', 387, 15)
    >>> sorted(r.to_dict())[:2]
    ['activation_bytes', 'activation_dtype']
    """

    def __init__(self, native):
        self._native = native
        self._row = native.to_dict()

    def __getattr__(self, name: str):
        try:
            return self.__dict__["_row"][name]
        except KeyError:
            raise AttributeError(f"a stepcost result has no column `{name}`") from None

    def __getitem__(self, column: str):
        return self._row[column]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._row))

    def to_dict(self) -> Dict[str, Any]:
        """The columns and their values, in the command line's order (``None`` for an empty
        cell)."""
        return dict(self._row)

    def kernels(self):
        """Every kernel of the step as a ``pyarrow.Table``: the rows of ``run --per-op``."""
        return _table(self._native.kernels())

    def __repr__(self) -> str:
        r = self._row
        return (
            f"<stepcost.Result {r['workload']} on {r['chip']}: "
            f"{r['step_time_us']} us per step, {r['tokens_per_s']} tokens/s>"
        )



def _scenario(set, dtypes, fusion, mode, memory_utilization, overlap_comm):
    """The scenario's arguments as ``run`` and ``compare`` hand them to the native module,
    each read as its flag reads it."""
    return (
        _args.sets(set),
        _args.dtypes(dtypes),
        _args.text("fusion", fusion),
        _args.text("mode", mode, optional=False),
        _args.optional_number("memory_utilization", memory_utilization),
        _args.flag("overlap_comm", overlap_comm),
    )

def run(
    workload,
    chip,
    *,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, str]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    overlap_comm: bool = False,
    request=None,
    engine: Optional[str] = None,
) -> Result:
    """Prices one scenario: ``workload`` on ``chip`` with params ``set`` (``{"batch": 32}``),
    formats ``dtypes`` (``{"weight": "fp8"}``, keys as ``--dtype`` takes them), a fusion plan,
    ``mode`` ``"expected"`` or ``"roofline"``, optionally a whole ``request``
    (``(input_tokens, output_tokens)``, ``{"in": I, "out": O}`` or ``"in=I,out=O"``, whole
    numbers as ``--request`` reads them), and the serving ``engine`` expected mode prices
    under (``"vllm"``, ``"sglang"``, ``"vllm@0.7"``, an engine file; by default the chip
    file's). The command line's ``run``.

    >>> r = run("llama-3.1-70b", "h100-sxm", set={"batch": 32}, mode="roofline")
    >>> r.memory_bound_share > 0.9
    True
    """
    native = _native.run(
        _args.workload(workload),
        _args.chip(chip),
        *_scenario(set, dtypes, fusion, mode, memory_utilization, overlap_comm),
        _args.request(request),
        engine=_args.text("engine", engine),
    )
    return Result(native)


def compare(
    workload,
    chips,
    *,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, str]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    overlap_comm: bool = False,
    engine: Optional[str] = None,
):
    """One scenario on several chips, as a ``pyarrow.Table`` with a row per chip and
    ``relative_speed`` (the first chip's step time over each chip's), priced under ``engine``
    (by default each chip file's). The command line's ``compare``.

    >>> t = compare("llama-3.1-8b", ["h100-sxm", "h200"], set={"batch": 16})
    >>> t.column("chip").to_pylist(), t.column("relative_speed")[0].as_py()
    (['h100-sxm', 'h200'], 1.0)
    """
    stream = _native.compare(
        _args.workload(workload),
        _args.chips(chips),
        *_scenario(set, dtypes, fusion, mode, memory_utilization, overlap_comm),
        engine=_args.text("engine", engine),
    )
    return _table(stream)


from ._grid import Grid, grid, sweep  # noqa: E402  (they use the helpers above)
from ._plan import plan  # noqa: E402
