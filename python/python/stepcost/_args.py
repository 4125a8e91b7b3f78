"""Arguments as the command line's text. Each number is written as its flag takes it (an
integer as its digits, any other real number as its ``repr``, which reads back to the same
float), and the native module reads the text with that flag's own parser and range, so that
Python refuses what the command line refuses, in its words: ``request=(1.5, 2.9)`` is
``in=1.5,out=2.9``, refused as ``--request in=1.5,out=2.9`` is. A value of the wrong type (a
string for a number, a number for ``True``/``False``) is a ``TypeError`` here; a value the
command line refuses is an ``InputError``, a ``ValueError``."""

from __future__ import annotations

import math
import numbers
import os
from typing import List, Mapping, Optional, Tuple

from . import _stepcost as _native
from ._stepcost import Chip, InputError, Workload


def number(what: str, v) -> str:
    """``v``, a real number, as the command line's text; ``what`` names it in a TypeError."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{what} needs a number, found {v!r}")
    if isinstance(v, numbers.Integral):
        return str(int(v))
    return repr(float(v))


def optional_number(name: str, v) -> Optional[str]:
    return None if v is None else number(f"`{name}`", v)


def flag(name: str, v) -> bool:
    """``True`` or ``False`` (numpy's booleans too); nothing else stands for one."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return bool(v)
    raise TypeError(f"`{name}` is True or False, found {v!r}")


def text(name: str, v, optional: bool = True) -> Optional[str]:
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise TypeError(f"`{name}` needs a str, found {v!r}")
    return v


def _mapping(name: str, v, example: str) -> Mapping:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise TypeError(f"`{name}` is a mapping, e.g. {example}; found {v!r}")
    for k in v:
        if not isinstance(k, str):
            raise TypeError(f"`{name}`'s keys are names (str), found {k!r}")
    return v


def sets(set) -> List[Tuple[str, str]]:
    """``{"batch": 32}`` as ``--set batch=32`` flags: ``[("batch", "32")]``."""
    items = _mapping("set", set, '{"batch": 32}').items()
    return [(k, number(f"param `{k}`", v)) for k, v in items]


def _axis(name: str, values) -> str:
    """A param's values as ``sweep --set NAME=LIST`` takes them: a string as it is (the
    command line's list, ``"1..=256:x2"``), a ``range`` as a range of the command line's (no
    value made), a number, or an iterable of numbers joined by commas."""
    if isinstance(values, str):
        return values
    if isinstance(values, range) and values.step > 0 and len(values) > 0:
        return f"{values.start}..{values.stop}:+{values.step}"
    if isinstance(values, numbers.Real) or isinstance(values, bool):
        return number(f"param `{name}`", values)
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"param `{name}` needs a number or an iterable of numbers, "
                        f"found {values!r}") from None
    if len(values) > _native.MAX_AXIS_VALUES:
        raise InputError(f"invalid value for `set`: param `{name}` lists {len(values)} values, "
                         f"more than {_native.MAX_AXIS_VALUES}")
    return ",".join(number(f"param `{name}`", v) for v in values)


def set_axes(set) -> List[Tuple[str, str]]:
    """A sweep's params and their values as ``--set NAME=LIST`` flags."""
    items = _mapping("set", set, '{"batch": range(1, 65)}').items()
    return [(k, _axis(k, v)) for k, v in items]


def _format(key: str, v) -> str:
    if not isinstance(v, str):
        raise TypeError(f"`dtypes[{key!r}]` needs a format's name (str), found {v!r}")
    return v


def dtypes(dtypes) -> List[Tuple[str, str]]:
    """``{"weight": "fp8"}`` as ``--dtype weight=fp8`` flags."""
    items = _mapping("dtypes", dtypes, '{"weight": "fp8"}').items()
    return [(k, _format(k, v)) for k, v in items]


def dtype_axes(dtypes) -> List[Tuple[str, List[str]]]:
    """A key's format or list of formats, as ``--dtype KEY=LIST`` flags."""
    axes = []
    for k, v in _mapping("dtypes", dtypes, '{"weight": ["bf16", "fp8"]}').items():
        if isinstance(v, str):
            axes.append((k, [v]))
            continue
        try:
            formats = list(v)
        except TypeError:
            raise TypeError(f"`dtypes[{k!r}]` needs a format's name or a list of them, "
                            f"found {v!r}") from None
        axes.append((k, [_format(k, f) for f in formats]))
    return axes


def engines(engine) -> List[str]:
    """Engines to search: none given (each chip's default), an engine, a list, ``"all"``."""
    if engine is None:
        return []
    if isinstance(engine, str):
        return [engine]
    try:
        names = list(engine)
    except TypeError:
        raise TypeError(f"`engine` needs an engine's id, a list of them or \"all\", "
                        f"found {engine!r}") from None
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"`engine` needs engine ids (str), found {engine!r}")
    return names


def fusions(fusion) -> List[str]:
    """A sweep's fusion plans: none given (the workload's default), a plan, a list, ``"all"``."""
    if fusion is None:
        return []
    if isinstance(fusion, str):
        return [fusion]
    try:
        plans = list(fusion)
    except TypeError:
        raise TypeError(f"`fusion` needs a plan's name, a list of them or \"all\", "
                        f"found {fusion!r}") from None
    if not plans:
        raise InputError("`fusion` is an empty list: give a plan, a list of plans or \"all\" "
                         "(or None for the workload's default plan)")
    return [_fusion_name(f) for f in plans]


def _fusion_name(v) -> str:
    if not isinstance(v, str):
        raise TypeError(f"`fusion` lists plans by name (str), found {v!r}")
    return v


def request(request) -> Optional[str]:
    """A request as ``--request`` takes it: ``(input_tokens, output_tokens)``,
    ``{"in": I, "out": O}`` or the text ``"in=I,out=O"`` itself."""
    if request is None:
        return None
    if isinstance(request, str):
        return request
    if isinstance(request, Mapping):
        return ",".join(f"{k}={number('`request`', v)}"
                        for k, v in _mapping("request", request, '{"in": 512, "out": 128}').items())
    try:
        i, o = request
    except (TypeError, ValueError):
        raise TypeError("`request` is (input_tokens, output_tokens), {\"in\": I, \"out\": O} or "
                        f"\"in=I,out=O\"; found {request!r}") from None
    return f"in={number('`request`', i)},out={number('`request`', o)}"


def chip(x):
    """A chip argument: a loaded chip, or a spec the native module reads."""
    if isinstance(x, Chip):
        return x
    return _path_or_text("chip", x)


def workload(x):
    if isinstance(x, Workload):
        return x
    return _path_or_text("workload", x)


def _path_or_text(name: str, x) -> str:
    try:
        return os.fspath(x)
    except TypeError:
        raise TypeError(f"a {name} is a name, a path, YAML text or a loaded {name.title()}; "
                        f"found {x!r}") from None


def chips(x) -> list:
    """One chip or an iterable of them."""
    if isinstance(x, (str, os.PathLike, Chip)):
        return [chip(x)]
    if not hasattr(x, "__iter__"):
        raise TypeError(f"`chips` is a chip or a list of them; found {x!r}")
    return [chip(c) for c in x]


def max_memory_bytes(v) -> Optional[int]:
    """``None`` (the default, measured when a sweep starts) or a whole number of bytes."""
    if v is None:
        return None
    text = number("`max_memory_bytes`", v)
    value = float(text)
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise InputError(f"invalid value '{text}' for `max_memory_bytes`: expected a whole "
                         "number of bytes, at least 1 (or None for the default)")
    return min(int(v), 2**64 - 1)
