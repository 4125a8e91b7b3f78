"""Plans: the cheapest chips and layouts for a model, as the command line's ``plan``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Mapping, Optional

from . import _native, _table, _spec, _chip_list, _sets, _dtype_axes, _number


def plan(
    workload,
    chips="all",
    *,
    target_tokens_per_s: Optional[float] = None,
    max_ms_per_token: Optional[float] = None,
    context: Optional[int] = None,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, Any]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    sort: str = "cost",
    conservative: bool = False,
    include_unfit: bool = False,
):
    """Per chip and choice of types (``dtypes`` maps a key to a list of formats; by default
    the checkpoint's, bf16 and fp8 weights), the cheapest parallel layout within one node at
    the largest batch that fits and meets ``max_ms_per_token``, ranked by ``sort``
    (``"cost"``, ``"chips"`` or ``"latency"``); with ``target_tokens_per_s``, the chips that
    target needs. ``conservative`` plans on the slow end of each step's 80 % band (expected
    mode; roofline mode, a ceiling, has none and raises ``InputError``), as ``plan
    --conservative``. A ``pyarrow.Table`` of the rows of ``stepcost plan --format csv``, the
    band's ``step_time_low_us`` and ``step_time_high_us`` among them (empty in roofline mode).

    >>> t = plan("llama-3.1-70b", ["h200", "b200"], max_ms_per_token=50)
    >>> t.column("chip").to_pylist()[0], t.column("layout").to_pylist()[0]
    ('b200', 'tp=4')
    """
    sets = _sets(set)
    if context is not None:
        sets.append(("context", _number("context", context)))
    args = SimpleNamespace(
        workload=_spec(workload),
        chips=_chip_list(chips),
        target_tokens_per_s=target_tokens_per_s,
        max_ms_per_token=max_ms_per_token,
        sets=sets,
        dtypes=_dtype_axes(dtypes),
        fusion=fusion,
        mode=mode,
        memory_utilization=memory_utilization,
        sort=sort,
        conservative=conservative,
        include_unfit=include_unfit,
    )
    return _table(_native.plan(args))
