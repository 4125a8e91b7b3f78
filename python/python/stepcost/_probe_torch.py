"""The probe's torch backend (see ``stepcost.probe``): GEMMs per data type the device runs
(bf16, fp16, fp32; fp8 x fp8 through ``torch._scaled_mm`` where the device has it), GEMVs, a
copy stream, elementwise adds, prefill and decode attention through
``torch.nn.functional.scaled_dot_product_attention``, and an all-reduce over the local devices
when torch sees several (``torch.cuda.comm.reduce_add`` then ``broadcast``: no process group
to launch). On a GPU each call is timed between two device events, after a flush of twice the
L2 (the cache's size from torch where it says, else 256 MiB); on the CPU on the host clock."""

from __future__ import annotations

import datetime
import os
import platform
import time
from typing import Callable, List, Optional, Tuple

from . import probe as _p


def probe(torch, budget, bar_shown: bool, chip: Optional[str],
          device_name: Optional[str]) -> Tuple[str, List[dict]]:
    """Times the kernels on torch's device; returns the device line and the rows."""
    gpu = torch.cuda.is_available() and (device_name is None or device_name.startswith("cuda"))
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads and not gpu:
        torch.set_num_threads(int(threads))  # --threads: the CPU kernels' threads
    dev = torch.device(device_name or ("cuda" if gpu else "cpu"))
    if gpu:
        props = torch.cuda.get_device_properties(dev)
        name, memory = props.name, props.total_memory
        cache = int(getattr(props, "L2_cache_size", 0) or 0)
        driver = f"CUDA {torch.version.cuda}" if torch.version.cuda else (
            f"ROCm {getattr(torch.version, 'hip', '')}")
        flush_bytes = max(2 * cache, 256 << 20)
    else:
        name, memory, cache, driver = _p.cpu_name(), _p.host_memory_bytes(), _p.llc_bytes(), ""
        flush_bytes = _p.flush_bytes(cache)
    chip = chip or (_p.chip_id(name) if gpu else "cpu-" + _p.slug(name))
    flush_buffer = torch.empty(flush_bytes // 4, dtype=torch.float32, device=dev)

    def flush() -> None:
        flush_buffer.zero_()

    if gpu:
        def timer(call: Callable[[], None]) -> float:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
    else:
        def timer(call: Callable[[], None]) -> float:
            t0 = time.perf_counter()
            call()
            return time.perf_counter() - t0

    launch_mode = 1 if gpu else 2
    source = (f"probe {datetime.date.today().isoformat()} torch {torch.__version__}"
              + (f" {driver}" if driver else "") + f" on {name}; Python {platform.python_version()}")
    library = {"gemm": "framework-linear", "gemv": "framework-linear", "copy": "stream",
               "elementwise": "stream"}
    attention_library = "flash-attention" if gpu else "unknown"
    rows = _p.Rows(chip, source, lambda w: library.get(w, attention_library),
                   f"stepcost probe (torch backend, {'device events' if gpu else 'host clock'})")
    kernels = gemm_kernels(torch, dev, gpu, rows, launch_mode)
    kernels += stream_kernels(torch, dev, gpu, rows, launch_mode)
    kernels += attention_kernels(torch, dev, gpu, rows, launch_mode)
    kernels += allreduce_kernels(torch, gpu, rows, launch_mode)
    _p.run_kernels(kernels, budget, bar_shown, flush, timer)
    device = (f"# probe-device: name={name}; chip={chip}; memory_bytes={memory}; "
              f"cache_bytes={cache}; backend=torch")
    return "\n".join([device, *rows.comments]), rows.rows


def dtypes_of(torch, dev, gpu: bool) -> List[Tuple[str, object]]:
    """The GEMM data types to time: bf16 and fp16 on a GPU (fp32 too on the CPU)."""
    if not gpu:
        return [("fp32", torch.float32), ("bf16", torch.bfloat16)]
    return [("bf16", torch.bfloat16), ("fp16", torch.float16)]


def fp8_type(torch, dev):
    """The fp8 type `torch._scaled_mm` runs here (e4m3, fnuz on MI300-class ROCm), or None."""
    if not hasattr(torch, "_scaled_mm"):
        return None
    for name in ("float8_e4m3fnuz", "float8_e4m3fn"):
        t = getattr(torch, name, None)
        if t is None:
            continue
        try:
            a = torch.zeros(16, 16, device=dev).to(t)
            b = torch.zeros(16, 16, device=dev).to(t).t()
            one = torch.ones((), device=dev)
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            return t
        except Exception:  # this type is not this device's fp8
            continue
    return None


def gemm_kernels(torch, dev, gpu: bool, rows, launch_mode: int) -> list:
    """GEMMs over the shape grid per data type, fp8 where it runs, and GEMVs."""
    kernels = []
    shapes = _p.GPU_GEMMS if gpu else _p.CPU_GEMMS
    gemvs = _p.GPU_GEMVS if gpu else _p.CPU_GEMVS
    for dname, dtype in dtypes_of(torch, dev, gpu):
        types = f"weight={dname};activation={dname}"
        for m, n, k in shapes:
            kernels.append(matmul(torch, dev, dtype, m, n, k, rows, "G", "gemm",
                                  f"m={m};n={n};k={k};launch_mode={launch_mode}", types))
        for batch, n, k in gemvs:
            kernels.append(matmul(torch, dev, dtype, batch, n, k, rows, "V", "gemv",
                                  f"batch={batch};n={n};k={k};launch_mode={launch_mode}", types))
    f8 = fp8_type(torch, dev) if gpu else None
    if f8 is not None:
        for m, n, k in shapes:
            kernels.append((f"fp8 gemm {m}x{n}x{k}", lambda m=m, n=n, k=k: scaled_mm(
                torch, dev, f8, m, n, k, lambda t: rows.add(
                    "F", "gemm", f"m={m};n={n};k={k};launch_mode={launch_mode}",
                    "weight=fp8;activation=fp8", "attained_tflops", 2 * m * n * k / t / 1e12,
                    "torch._scaled_mm, per-tensor scales, bf16 out"))))
    return kernels


def scaled_mm(torch, dev, f8, m, n, k, record):
    """One fp8 x fp8 `torch._scaled_mm` (the right operand column-major, as it wants)."""
    a = torch.randn(m, k, device=dev).to(f8)
    b = torch.randn(n, k, device=dev).to(f8).t()
    one = torch.ones((), device=dev)
    return (lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                     out_dtype=torch.bfloat16)), record


def matmul(torch, dev, dtype, m, n, k, rows, kind, workload, params, types):
    """One `torch.matmul` of [m x k] x [k x n] into a preallocated output (a label and the
    setup that makes its operands)."""
    def setup():
        a = torch.randn(m, k, device=dev, dtype=dtype)
        b = torch.randn(k, n, device=dev, dtype=dtype)
        c = torch.empty(m, n, device=dev, dtype=dtype)
        return (lambda: torch.matmul(a, b, out=c)), (
            lambda t: rows.add(kind, workload, params, types, "attained_tflops",
                               2 * m * n * k / t / 1e12))
    return f"{workload} {m}x{n}x{k}", setup


def stream_kernels(torch, dev, gpu: bool, rows, launch_mode: int) -> list:
    """Copies (fp32, read + write counted) and elementwise adds (bf16 on a GPU)."""
    kernels = []
    def pair(n, dtype, op, record):
        src = torch.ones(n, device=dev, dtype=dtype)
        dst = torch.empty_like(src)
        return (lambda: op(src, dst)), record

    for n in (_p.GPU_STREAMS if gpu else _p.CPU_STREAMS):
        kernels.append((f"copy {n}", lambda n=n: pair(
            n, torch.float32, lambda src, dst: dst.copy_(src), lambda t: rows.add(
                "S", "copy", f"n={n};launch_mode={launch_mode}", "activation=fp32",
                "bandwidth_tb_s", 8 * n / t / 1e12, "read + write counted"))))
    dtype, dname = (torch.bfloat16, "bf16") if gpu else (torch.float32, "fp32")
    for n in (_p.GPU_ELEMENTWISE if gpu else _p.CPU_ELEMENTWISE):
        kernels.append((f"add {n}", lambda n=n: pair(
            n, dtype, lambda src, dst: torch.add(src, 1, out=dst), lambda t: rows.add(
                "E", "elementwise", f"n={n};launch_mode={launch_mode}", f"activation={dname}",
                "step_time_us", t * 1e6, "y = x + 1"))))
    return kernels


# Attention shapes: (batch, heads, kv_heads, head_dim, context) for prefill (seq = context,
# causal) and decode (one query token per sequence over `context` cached tokens).
PREFILL = [(1, 32, 8, 128, 4096), (4, 32, 8, 128, 2048)]
DECODE = [(16, 32, 8, 128, 4096), (64, 32, 8, 128, 2048)]


def attention_kernels(torch, dev, gpu: bool, rows, launch_mode: int) -> list:
    """Prefill and decode attention through scaled_dot_product_attention (GQA heads repeated
    to the query's, as the workloads' kv_heads count the cache)."""
    if not gpu:
        return []
    sdpa = torch.nn.functional.scaled_dot_product_attention
    kernels = []
    dtype = torch.bfloat16
    def inputs(batch, heads, q_len, kv_len, head_dim, call, record):
        q = torch.randn(batch, heads, q_len, head_dim, device=dev, dtype=dtype)
        kv = torch.randn(batch, heads, kv_len, head_dim, device=dev, dtype=dtype)
        return (lambda: call(q, kv)), record

    for batch, heads, kv_heads, head_dim, context in PREFILL:
        params = (f"batch={batch};seqlen={context};heads={heads};kv_heads={heads};"
                  f"head_dim={head_dim};causal=1;launch_mode={launch_mode}")
        kernels.append((f"prefill {batch}x{context}", lambda b=batch, c=context, p=params: inputs(
            b, heads, c, c, head_dim, lambda q, kv: sdpa(q, kv, kv, is_causal=True),
            lambda t: rows.add("P", "attention-prefill", p, "activation=bf16;kv=bf16",
                               "step_time_us", t * 1e6,
                               "scaled_dot_product_attention, causal, bf16"))))
    for batch, heads, kv_heads, head_dim, context in DECODE:
        params = (f"batch={batch};heads={heads};kv_heads={heads};head_dim={head_dim};"
                  f"context={context};launch_mode={launch_mode}")
        kernels.append((f"decode {batch}x{context}", lambda b=batch, c=context, p=params: inputs(
            b, heads, 1, c, head_dim, lambda q, kv: sdpa(q, kv, kv),
            lambda t: rows.add("D", "attention-decode", p, "activation=bf16;kv=bf16",
                               "step_time_us", t * 1e6,
                               "scaled_dot_product_attention, bf16 KV cache"))))
    return kernels


def allreduce_kernels(torch, gpu: bool, rows, launch_mode: int) -> list:
    """A sum over every local GPU, the result on each (reduce to one, broadcast back)."""
    if not gpu or torch.cuda.device_count() < 2:
        return []
    count = torch.cuda.device_count()
    n = 1 << 26
    devices = list(range(count))

    def setup():
        parts = [torch.ones(n, device=f"cuda:{i}", dtype=torch.bfloat16) for i in devices]

        def call() -> None:
            total = torch.cuda.comm.reduce_add(parts, destination=0)
            torch.cuda.comm.broadcast(total, devices=devices)
            for i in devices:
                torch.cuda.synchronize(i)
        return call, record

    # No case workload prices a collective alone: the figure is a comment line of the file.
    record = (lambda t: rows.comments.append(
                 f"# probe-allreduce: gpus={count}; values={n}; dtype=bf16; time_s={t:.6g}; "
                 f"bus_bandwidth_tb_s={2 * 2 * n * (count - 1) / count / t / 1e12:.6g} "
                 "(reduce_add + broadcast)"))
    return [(f"all-reduce x{count}", setup)]
