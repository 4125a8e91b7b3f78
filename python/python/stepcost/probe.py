"""Times, on this machine, the kernels stepcost prices, and writes them as measured cases.

``python -m stepcost.probe --backend numpy`` (CPU GEMMs over a shape grid, GEMVs, a copy
stream, elementwise adds) or ``--backend torch`` (whatever device torch sees: CUDA, ROCm or
the CPU; GEMMs per data type, fp8 through ``torch._scaled_mm`` where the device has it, GEMVs,
a copy stream, elementwise adds, prefill and decode attention through
``scaled_dot_product_attention``, and an all-reduce over the local devices when there are
several). ``stepcost probe`` runs this module.

Timing: one warm-up call, then the median of repetitions; between repetitions a buffer twice
the last-level cache is rewritten, so that no repetition finds its operands in a cache the
previous one left them in. The numpy backend times each call on the host clock, its dispatch
from Python included (``launch_mode=2``: one launch from the host per call); the torch backend
on a GPU times each call between two device events with the flush queued before it, so the
device runs it back to back after other work (``launch_mode=1``), and on the CPU like numpy.

The output is a case file as ``stepcost validate`` and ``stepcost fit`` read it (the columns
of ``validation/measured.csv``): one row per kernel and shape, the device named as the chip (a
built-in chip id where the device is one, else a new id such as ``cpu-amd-epyc-7b13``), the
library and harness, and the source (``probe``, the date, the framework's and driver's
versions). A first comment line ``# probe-device: ...`` gives the device's memory and cache,
which ``stepcost fit --new-chip`` writes into a new chip file. ``--budget-s`` bounds the run;
kernels that no longer fit in it are left out (said on stderr). Only the standard library and
the backend's own package are imported: this module runs without stepcost's compiled part.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import os
import platform
import re
import statistics
import sys
import time
from typing import Callable, List, Optional, Sequence, Tuple

COLUMNS = [
    "id", "chip", "workload", "params", "dtypes", "fusion", "request", "tp", "metric",
    "measured", "kind", "source", "engine", "version", "library", "harness", "notes",
]

# The GEMM shape grid (m, n, k), in the order rows are numbered: alternate rows (even and odd
# ids) span the same range of sizes, so a fit to one half can be checked on the other.
CPU_GEMMS = [
    (256, 256, 256), (384, 384, 384), (512, 512, 512), (768, 768, 768),
    (1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048), (2048, 1024, 1024),
    (1024, 2048, 2048), (64, 2048, 2048), (128, 2048, 2048), (256, 4096, 1024),
    (512, 1024, 4096), (32, 4096, 4096),
]
GPU_GEMMS = [
    (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
    (6144, 6144, 6144), (16384, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336),
    (128, 8192, 8192), (256, 8192, 8192), (512, 8192, 8192), (1024, 28672, 8192),
    (2048, 8192, 28672), (16, 8192, 8192),
]
# GEMV (batch, n, k): a decode step's linear layer.
CPU_GEMVS = [(1, 2048, 2048), (1, 4096, 4096), (4, 4096, 4096), (1, 8192, 4096)]
GPU_GEMVS = [(1, 8192, 8192), (1, 28672, 8192), (4, 8192, 8192), (8, 8192, 28672)]
# Stream copies and elementwise adds: values per array.
CPU_STREAMS = [1 << 24, 1 << 25, 1 << 26, 3 << 24]
GPU_STREAMS = [1 << 26, 1 << 27, 1 << 28, 3 << 26]
# Elementwise: two small (the launch floor) then two large, so each half of the ids has both.
CPU_ELEMENTWISE = [1 << 10, 1 << 12, 1 << 24, 1 << 25]
GPU_ELEMENTWISE = [1 << 10, 1 << 12, 1 << 26, 1 << 27]

# CUDA device names (as torch reports them) of the built-in chips, most specific first.
BUILTIN_CHIPS = [
    ("GH200", "h200"), ("H200 NVL", "h200-nvl"), ("H200", "h200"), ("H100 NVL", "h100-nvl"),
    ("H100 PCIe", "h100-pcie"), ("H100", "h100-sxm"), ("H20", "h20"), ("GB200", "gb200"),
    ("GB300", "gb300"), ("B300", "b300"), ("B200", "b200"), ("A100-SXM4-80GB", "a100-80gb"),
    ("A100 80GB", "a100-80gb"), ("A100", "a100-40gb"), ("L40S", "l40s"),
    ("RTX PRO 6000", "rtx-pro-6000"), ("MI355X", "mi355x"), ("MI350X", "mi350x"),
    ("MI325X", "mi325x"), ("MI300X", "mi300x"),
]


class Missing(Exception):
    """A package the backend needs is not importable; the message says what to install."""


def chip_id(device_name: str) -> str:
    """The built-in chip id of a GPU's name, else a new id made of the name."""
    for pattern, chip in BUILTIN_CHIPS:
        if pattern.lower() in device_name.lower():
            return chip
    return slug(device_name)


def slug(name: str) -> str:
    """A chip id made of a device's name: lower case, words joined by dashes."""
    text = re.sub(r"\([^)]*\)", " ", name.lower())  # (R), (TM)
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    text = re.sub(r"\b(cpu|processor)\b", "", text)
    text = re.sub(r"-+", "-", text).strip("-")
    return text[:60].strip("-") or "device"


def cpu_name() -> str:
    """This CPU's model name (``/proc/cpuinfo``, else the platform's)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def llc_bytes() -> int:
    """The largest CPU cache (the last level), or 32 MiB where the system does not say."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size"), encoding="utf-8") as f:
                    text = f.read().strip()
            except OSError:
                continue
            m = re.fullmatch(r"(\d+)([KMG]?)", text)
            if m:
                scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
                best = max(best, int(m.group(1)) * scale)
    except OSError:
        pass
    return best or 32 << 20


def flush_bytes(cache: int) -> int:
    """The CPU's flush buffer: twice the last-level cache, at least 8 MiB, at most 64 MiB. A
    server's L3 as the system reports it sums every core complex's slices (each core reaches
    its own complex's, 32 MiB on recent parts), and a flush of the whole sum before each
    repetition would spend the budget on the flush."""
    return min(max(2 * cache, 8 << 20), 64 << 20)


def host_memory_bytes() -> int:
    """This machine's memory, or 0 where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


class Bar:
    """A progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, shown: bool) -> None:
        self.total, self.done, self.shown = max(total, 1), 0, shown

    def tick(self, label: str) -> None:
        self.done += 1
        if self.shown:
            filled = 30 * self.done // self.total
            sys.stderr.write(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {label:<32.32}"
            )
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


class Budget:
    """The run's time budget, shared out among the kernels still to time."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left_s(self) -> float:
        return self.end - time.monotonic()

    def slice_s(self, kernels_left: int) -> float:
        return max(self.left_s(), 0.0) / max(kernels_left, 1)


def median_s(
    call: Callable[[], None],
    timer: Callable[[Callable[[], None]], float],
    flush: Callable[[], None],
    slice_s: float,
    left_s: float,
) -> Optional[float]:
    """The median time of `call` in seconds over repetitions (each with its flush) that fit
    in `slice_s`: at least 3, at most 25; None when 3 of them would not fit in `left_s`, the
    whole run's time left (a kernel slower than its share takes time the faster ones left)."""
    start = time.monotonic()
    flush()
    timer(call)  # the warm-up: first touch, library initialisation
    each_s = time.monotonic() - start  # one repetition with its flush, as the budget sees it
    if 3 * each_s > left_s - each_s:
        return None
    times = []
    reps = int(min(25, max(3, (slice_s - each_s) / max(each_s, 1e-9))))
    for _ in range(reps):
        flush()
        times.append(timer(call))
    return statistics.median(times)


class Rows:
    """The rows measured so far, numbered per kind (G1, G2, ... for GEMMs)."""

    def __init__(self, chip: str, source: str, library_of: Callable[[str], str], harness: str):
        self.rows: List[dict] = []
        self.comments: List[str] = []
        self.counts: dict = {}
        self.chip, self.source, self.library_of, self.harness = chip, source, library_of, harness

    def add(self, kind: str, workload: str, params: str, dtypes: str, metric: str,
            value: float, notes: str = "", tp: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.rows.append({
            "id": f"PROBE-{kind}{self.counts[kind]}", "chip": self.chip, "workload": workload,
            "params": params, "dtypes": dtypes, "fusion": "", "request": "", "tp": str(tp),
            "metric": metric, "measured": f"{value:.6g}", "kind": "kernel",
            "source": self.source, "engine": "", "version": "",
            "library": self.library_of(workload), "harness": self.harness, "notes": notes,
        })


def write_csv(out: io.TextIOBase, device_line: str, rows: Sequence[dict]) -> None:
    """The case file: the device line, a header, the rows."""
    out.write(device_line + "\n")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)


# --- numpy -----------------------------------------------------------------------------------


def numpy_probe(budget: Budget, bar_shown: bool, chip: Optional[str]) -> Tuple[str, List[dict]]:
    """The numpy backend: fp32 GEMMs, GEMVs, copies and adds on the CPU."""
    try:
        import numpy as np
    except ImportError as e:
        raise Missing("the numpy backend needs numpy: `python3 -m pip install numpy`") from e
    name = cpu_name()
    chip = chip or "cpu-" + slug(name).removeprefix("cpu-")
    llc = llc_bytes()
    flush_buffer = np.ones(flush_bytes(llc) // 4, dtype=np.float32)

    def flush() -> None:
        flush_buffer.fill(1.0)

    def timer(call: Callable[[], None]) -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    blas = numpy_blas(np)
    source = f"probe {datetime.date.today().isoformat()} numpy {np.__version__}" + (
        f" ({blas})" if blas else "") + f" on {name}; Python {platform.python_version()}"
    rows = Rows(chip, source, lambda w: "stream" if w in ("copy", "elementwise")
                else "framework-linear", "stepcost probe (numpy backend)")
    rng = np.random.default_rng(0)
    normal = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    kernels: list = []
    # Each kernel's operands are made when its turn comes (and freed after), inside its share
    # of the budget: the setup of the largest would otherwise use up the time of the first.
    # Streams first: a budget too short for the whole grid loses its largest GEMMs, never the
    # bandwidth a new chip file needs.
    for n in CPU_STREAMS:
        kernels.append((f"copy {n}", lambda n=n: pair_np(
            np, n, lambda src, dst: np.copyto(dst, src), lambda t: rows.add(
                "S", "copy", f"n={n};launch_mode=2", "activation=fp32", "bandwidth_tb_s",
                2 * 4 * n / t / 1e12, "read + write counted"))))
    for n in CPU_ELEMENTWISE:
        kernels.append((f"add {n}", lambda n=n: pair_np(
            np, n, lambda src, dst: np.add(src, 1.0, out=dst), lambda t: rows.add(
                "E", "elementwise", f"n={n};launch_mode=2", "activation=fp32", "step_time_us",
                t * 1e6, "y = x + 1"))))
    for m, n, k in CPU_GEMMS:
        kernels.append((f"gemm {m}x{n}x{k}", lambda m=m, n=n, k=k: matmul_np(
            np, normal(m, k), normal(k, n), lambda t: rows.add(
                "G", "gemm", f"m={m};n={n};k={k};launch_mode=2", "weight=fp32;activation=fp32",
                "attained_tflops", 2 * m * n * k / t / 1e12))))
    for batch, n, k in CPU_GEMVS:
        kernels.append((f"gemv {batch}x{n}x{k}", lambda b=batch, n=n, k=k: matmul_np(
            np, normal(b, k), normal(k, n), lambda t: rows.add(
                "V", "gemv", f"batch={b};n={n};k={k};launch_mode=2",
                "weight=fp32;activation=fp32", "attained_tflops", 2 * b * n * k / t / 1e12))))
    run_kernels(kernels, budget, bar_shown, flush, timer)
    device = (f"# probe-device: name={name}; chip={chip}; memory_bytes={host_memory_bytes()}; "
              f"cache_bytes={llc}; backend=numpy")
    return device, rows.rows


def matmul_np(np, a, b, record):
    """A kernel: `a @ b` into a preallocated output, and what records its time."""
    c = np.empty((a.shape[0], b.shape[1]), dtype=a.dtype)
    return (lambda: np.matmul(a, b, out=c)), record


def pair_np(np, n, op, record):
    """A kernel over two fp32 arrays of n values (a source and a destination)."""
    src, dst = np.ones(n, dtype=np.float32), np.ones(n, dtype=np.float32)  # both touched
    return (lambda: op(src, dst)), record


def numpy_blas(np) -> str:
    """The BLAS numpy was built with, where it says (``numpy.show_config``)."""
    try:
        config = np.show_config(mode="dicts")
        blas = config.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name', '')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy prints its configuration and has no dict mode
        return ""


def run_kernels(kernels, budget: Budget, bar_shown: bool, flush, timer) -> None:
    """Times each kernel (a label, and a setup that makes its operands and returns the call
    and what records its time) in its share of the budget, recording the ones that fit."""
    bar = Bar(len(kernels), bar_shown)
    skipped = []
    for i, (label, setup) in enumerate(kernels):
        slice_s = budget.slice_s(len(kernels) - i)
        start = time.monotonic()
        t = None
        if slice_s > 0:
            call, record = setup()
            spent_s = time.monotonic() - start
            t = median_s(call, timer, flush, slice_s - spent_s, budget.left_s())
            del call
        if t is None or t <= 0:
            skipped.append(label)
        else:
            record(t)
        bar.tick(label)
    bar.close()
    if skipped:
        sys.stderr.write(
            f"probe: left out (over their share of --budget-s): {', '.join(skipped)}\n")


# --- torch -----------------------------------------------------------------------------------


def torch_probe(budget: Budget, bar_shown: bool, chip: Optional[str],
                device_name: Optional[str]) -> Tuple[str, List[dict]]:
    """The torch backend: whatever device torch sees (CUDA and ROCm as ``cuda``, else the CPU)."""
    try:
        import torch
    except ImportError as e:
        raise Missing("the torch backend needs torch: see https://pytorch.org/get-started "
                      "for the build that matches this machine's driver") from e
    from . import _probe_torch
    return _probe_torch.probe(torch, budget, bar_shown, chip, device_name)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stepcost.probe",
        description="Times the kernels stepcost prices on this machine; writes measured cases.")
    parser.add_argument("--backend", choices=["numpy", "torch"], default="numpy")
    parser.add_argument("--budget-s", type=float, default=60.0,
                        help="the run's time budget in seconds (default 60)")
    parser.add_argument("--out", default="-", help="the case file (`-`: stdout)")
    parser.add_argument("--chip", help="the chip id the rows name (default: the device's)")
    parser.add_argument("--device", help="torch device (default: cuda where torch sees one)")
    parser.add_argument("--progress", choices=["auto", "always", "never"], default="auto")
    parser.add_argument("--threads", type=int,
                        help="CPU threads the BLAS and torch may use (default: theirs, every "
                             "core); 1 gives steadier times on a machine others share")
    args = parser.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads must be at least 1")
        # Read by the BLAS libraries when numpy or torch first loads them: set before either.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = str(args.threads)
    if not args.budget_s > 0:
        parser.error("--budget-s must be positive")
    shown = {"auto": sys.stderr.isatty(), "always": True, "never": False}[args.progress]
    budget = Budget(args.budget_s)
    try:
        if args.backend == "numpy":
            device, rows = numpy_probe(budget, shown, args.chip)
        else:
            device, rows = torch_probe(budget, shown, args.chip, args.device)
    except Missing as e:
        sys.stderr.write(f"probe: {e}\n")
        return 3
    if not rows:
        sys.stderr.write("probe: no kernel fitted in --budget-s; give it more time\n")
        return 1
    text = io.StringIO()
    write_csv(text, device, rows)
    if args.out == "-":
        sys.stdout.write(text.getvalue())
    else:
        # Through a temporary file and a rename: an interrupted run leaves no half file.
        tmp = f"{args.out}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text.getvalue())
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
