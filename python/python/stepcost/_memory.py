"""How much memory a sweep's table may take by default: half of what this process can still
take, measured when the sweep starts (on the process that prices it: a cluster's worker
measures its own). Half, so that the table and one copy of it (a data frame made from it)
fit. What the process can still take is the least of

- the physical memory available (``MemAvailable``);
- the address-space limit (``RLIMIT_AS``) less the address space in use, and less what the
  sweep's writer thread reserves (a stack, and the C allocator's arena of 64 MiB): an
  allocation past it fails, and a failed allocation aborts the interpreter;
- the data-size limit (``RLIMIT_DATA``) less the data in use;
- the container's memory limit (cgroup) less its use.

Where none of these can be read, the cap is a fixed 4 GiB."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from . import _stepcost as _native

#: The cap where this system's free memory cannot be read.
FALLBACK_BYTES = 4 << 30

#: Address space a thread the sweep starts reserves: its stack (2 MiB) and the C allocator's
#: arena for it (64 MiB on a 64-bit system).
THREAD_BYTES = 66 << 20


def human(n: float) -> str:
    """Bytes with an SI prefix and three significant digits, as the messages write them."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= scale * 0.9995:
            return f"{n / scale:.3g} {prefix}B"
    return f"{n:.0f} B"


def _kib_fields(path: str) -> Dict[str, int]:
    """``Name:  123 kB`` lines of a /proc file, in bytes."""
    fields = {}
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                name, _, rest = line.partition(":")
                words = rest.split()
                if len(words) == 2 and words[1] == "kB" and words[0].isdigit():
                    fields[name] = int(words[0]) * 1024
    except OSError:
        pass
    return fields


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _limits() -> List[Tuple[int, str]]:
    """What this process can still take, by each bound that can be read, and its name."""
    found = []
    status = _kib_fields("/proc/self/status")
    available = _kib_fields("/proc/meminfo").get("MemAvailable")
    if available is None and hasattr(os, "sysconf"):
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            available = None
    if available is not None:
        found.append((available, "the physical memory available"))
    try:
        import resource
    except ImportError:
        resource = None
    if resource is not None:
        bounds = [("RLIMIT_AS", "VmSize", THREAD_BYTES, "the address-space limit (RLIMIT_AS)"),
                  ("RLIMIT_DATA", "VmData", 0, "the data-size limit (RLIMIT_DATA)")]
        for limit, used, reserved, name in bounds:
            soft, _ = resource.getrlimit(getattr(resource, limit))
            if soft != resource.RLIM_INFINITY and used in status:
                found.append((soft - status[used] - reserved, f"{name} less what is in use"))
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        most, used = _read_int(limit), _read_int(usage)
        # cgroup v1 writes "no limit" as a number near 2^63.
        if most is not None and used is not None and most < 1 << 60:
            found.append((most - used, "the container's memory limit (cgroup) less its use"))
            break
    return found


def default_cap() -> Tuple[int, str]:
    """The default ``max_memory_bytes`` and where it comes from."""
    # The pool's threads take their memory first, so that it is counted as in use.
    _native.start_threads()
    found = _limits()
    if not found:
        return FALLBACK_BYTES, "the default when this system's free memory cannot be read"
    least, name = min(found)
    least = max(least, 0)
    return least // 2, f"half of {human(least)}, {name}"


def cap(max_memory_bytes: Optional[int]) -> Tuple[int, str]:
    """The cap of a sweep: ``max_memory_bytes`` as given, or the default."""
    if max_memory_bytes is None:
        return default_cap()
    return max_memory_bytes, "as given"
