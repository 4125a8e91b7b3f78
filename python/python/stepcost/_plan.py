"""Plans: the cheapest chips and layouts for a model, as the command line's ``plan``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Mapping, Optional

from . import _args, _native, _table


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
    engine=None,
):
    """Per chip and choice of types (``dtypes`` maps a key to a list of formats; by default
    the checkpoint's, bf16 and fp8 weights), the cheapest parallel layout within one node at
    the largest batch that fits and meets ``max_ms_per_token``, ranked by ``sort``
    (``"cost"``, ``"chips"`` or ``"latency"``); with ``target_tokens_per_s``, the chips that
    target needs. ``conservative`` plans on the slow end of each step's 80 % band (expected
    mode; roofline mode, a ceiling, has none and raises ``InputError``), as ``plan
    --conservative``. A ``pyarrow.Table`` of the rows of ``stepcost plan --format csv``, the
    band's ``step_time_low_us`` and ``step_time_high_us`` among them (empty in roofline mode).
    ``engine`` is an engine, a list of them or ``"all"``, searched as ``plan --engine``
    searches them (by default each chip file's); an fp8 weight choice runs as each engine
    runs it unless ``dtypes`` names the activations or the KV cache.
    Every value is read as the command line reads its flag (``context`` a whole number of
    tokens, the bounds within their ranges): what it refuses raises ``InputError``.

    >>> t = plan("llama-3.1-70b", ["h200", "b200"], max_ms_per_token=50)
    >>> t.column("chip").to_pylist()[0], t.column("layout").to_pylist()[0]
    ('b200', 'tp=2')
    """
    args = SimpleNamespace(
        workload=_args.workload(workload),
        chips=_args.chips(chips),
        target_tokens_per_s=_args.optional_number("target_tokens_per_s", target_tokens_per_s),
        max_ms_per_token=_args.optional_number("max_ms_per_token", max_ms_per_token),
        context=_args.optional_number("context", context),
        sets=_args.sets(set),
        dtypes=_args.dtype_axes(dtypes),
        fusion=_args.text("fusion", fusion),
        mode=_args.text("mode", mode, optional=False),
        memory_utilization=_args.optional_number("memory_utilization", memory_utilization),
        sort=_args.text("sort", sort, optional=False),
        conservative=_args.flag("conservative", conservative),
        include_unfit=_args.flag("include_unfit", include_unfit),
        engines=_args.engines(engine),
    )
    return _table(_native.plan(args))
