# Type hints of the package `stepcost` (its Python layer and its native module).
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow

DEFAULT_MAX_SCENARIOS: int

class StepcostError(Exception): ...

class InputError(StepcostError, ValueError):
    file: Optional[str]
    line: Optional[int]
    field: Optional[str]

class UnsupportedError(StepcostError):
    file: Optional[str]
    line: Optional[int]
    field: Optional[str]

class Chip:
    def __init__(self, spec: str, name: Optional[str] = None) -> None: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def capacity_bytes(self) -> float: ...
    @property
    def bandwidth_bytes_per_s(self) -> float: ...
    @property
    def usd_per_hour(self) -> Optional[float]: ...

class Workload:
    def __init__(self, spec: str, name: Optional[str] = None) -> None: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> List[str]: ...
    @property
    def fusion_plans(self) -> List[str]: ...

PathOrSpec = Union[str, "os.PathLike[str]"]
ChipLike = Union[Chip, PathOrSpec]
WorkloadLike = Union[Workload, PathOrSpec]
Chips = Union[ChipLike, Sequence[ChipLike]]
Request = Union[Tuple[int, int], Mapping[str, int], str, None]
AxisValues = Union[float, Iterable[float], str]

class Result:
    def __getattr__(self, column: str) -> Any: ...
    def __getitem__(self, column: str) -> Any: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def kernels(self) -> pyarrow.Table: ...

class Grid:
    workload: WorkloadLike
    chips: List[ChipLike]
    max_memory_bytes: Optional[int]
    part: Tuple[int, int]
    def __len__(self) -> int: ...
    def shard(self, i: int, n: int) -> Grid: ...
    def shards(self, n: int) -> List[Grid]: ...
    def sweep(self) -> pyarrow.Table: ...

def chips() -> List[str]: ...
def workloads() -> List[str]: ...
def load_chip(x: PathOrSpec, name: Optional[str] = None) -> Chip: ...
def load_workload(x: PathOrSpec, name: Optional[str] = None) -> Workload: ...
def run(
    workload: WorkloadLike,
    chip: ChipLike,
    *,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, str]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    overlap_comm: bool = False,
    request: Request = None,
    engine: Optional[str] = None,
) -> Result: ...
def compare(
    workload: WorkloadLike,
    chips: Chips,
    *,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, str]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    overlap_comm: bool = False,
    engine: Optional[str] = None,
) -> pyarrow.Table: ...
def grid(
    workload: WorkloadLike,
    chips: Chips,
    *,
    set: Optional[Mapping[str, AxisValues]] = None,
    dtypes: Optional[Mapping[str, Union[str, Iterable[str]]]] = None,
    fusion: Union[None, str, Sequence[str]] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    skip_invalid: bool = False,
    per_op: bool = False,
    request: Request = None,
    where: Optional[str] = None,
    max_scenarios: int = ...,
    max_memory_bytes: Optional[int] = None,
) -> Grid: ...
def sweep(
    workload: WorkloadLike,
    chips: Chips,
    *,
    set: Optional[Mapping[str, AxisValues]] = None,
    dtypes: Optional[Mapping[str, Union[str, Iterable[str]]]] = None,
    fusion: Union[None, str, Sequence[str]] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    skip_invalid: bool = False,
    per_op: bool = False,
    request: Request = None,
    where: Optional[str] = None,
    shard: Optional[Tuple[int, int]] = None,
    max_scenarios: int = ...,
    max_memory_bytes: Optional[int] = None,
) -> pyarrow.Table: ...
def plan(
    workload: WorkloadLike,
    chips: Chips = "all",
    *,
    target_tokens_per_s: Optional[float] = None,
    max_ms_per_token: Optional[float] = None,
    context: Optional[int] = None,
    set: Optional[Mapping[str, float]] = None,
    dtypes: Optional[Mapping[str, Iterable[str]]] = None,
    fusion: Optional[str] = None,
    mode: str = "expected",
    memory_utilization: Optional[float] = None,
    sort: str = "cost",
    conservative: bool = False,
    include_unfit: bool = False,
    engine: Union[None, str, Sequence[str]] = None,
) -> pyarrow.Table: ...
