"""The probe end to end: `stepcost probe` times this machine's kernels, `fit --new-chip`
makes a chip file of the even rows of its shape grid, and `validate` prices the odd rows on
it. Timing on a shared machine is noisy: the tests assert that the path runs and that an
error figure comes out, never a bound on it."""

import csv
import json
import math
import re
import subprocess
import sys

import pytest

from conftest import ROOT, binary
from stepcost import probe

BUDGET_S = 30


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    done = subprocess.run([binary(), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done


def split(path, fit_path, check_path):
    """The probe's rows by the parity of their number (PROBE-G2: even): the comment lines
    and the header go to both halves."""
    lines = path.read_text().splitlines()
    head = [line for line in lines if line.startswith("#") or line.startswith("id,")]
    rows = [line for line in lines if line.startswith("PROBE-")]
    number = lambda line: int(re.match(r"PROBE-[A-Z]+(\d+),", line).group(1))  # noqa: E731
    even = [line for line in rows if number(line) % 2 == 0]
    odd = [line for line in rows if number(line) % 2 == 1]
    assert even and odd, rows
    fit_path.write_text("\n".join(head + even) + "\n")
    check_path.write_text("\n".join(head + odd) + "\n")


def probe_fit_validate(tmp_path, backend: str) -> float:
    """Probes, fits a new chip to the even rows, validates the odd rows; the median error."""
    out = tmp_path / "probe.csv"
    # One BLAS thread: a multi-threaded GEMM on a machine other jobs share waits on them.
    run("probe", "--backend", backend, "--budget-s", str(BUDGET_S), "--python", sys.executable,
        "--threads", "1", "--out", str(out), timeout=BUDGET_S * 6 + 60)
    text = out.read_text()
    device = re.search(r"^# probe-device: .*chip=([^;]+);", text, re.M)
    assert device, text[:400]
    chip = device.group(1)
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert {r["chip"] for r in rows} == {chip}
    assert {r["workload"] for r in rows} >= {"gemm", "copy"}, rows
    fit_rows, check_rows = tmp_path / "fit.csv", tmp_path / "check.csv"
    split(out, fit_rows, check_rows)
    # The chip file beside the case files under the chip's id: `validate` finds it there.
    chip_file = tmp_path / f"{chip}.yaml"
    run("fit", str(fit_rows), "--new-chip", chip, "--out", str(chip_file))
    assert "expected:" in chip_file.read_text()
    run("check", str(chip_file))
    report = json.loads(run("validate", str(check_rows), "--format", "json").stdout)
    priced = [c for c in report["cases"] if not c["skipped"]]
    assert priced, report
    overall = next(e for e in report["errors"] if e["group"] == "all")
    assert overall["cases"] == len(priced)
    assert math.isfinite(overall["median_abs_error"])
    print(f"{backend}: median |error| {overall['median_abs_error']:.1%} over {len(priced)} rows")
    return overall["median_abs_error"]


def test_numpy_probe_fits_a_new_chip_and_predicts_the_other_half(tmp_path):
    pytest.importorskip("numpy", reason="the numpy backend needs numpy")
    probe_fit_validate(tmp_path, "numpy")


def test_torch_probe_fits_a_new_chip_and_predicts_the_other_half(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed: the torch backend's probe "
                                        "runs only where torch imports")
    probe_fit_validate(tmp_path, "torch")


def test_device_names_map_to_built_in_chips_or_new_ids():
    assert probe.chip_id("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert probe.chip_id("NVIDIA H100 PCIe") == "h100-pcie"
    assert probe.chip_id("NVIDIA H200") == "h200"
    assert probe.chip_id("NVIDIA GH200 480GB") == "h200"
    assert probe.chip_id("NVIDIA A100-SXM4-80GB") == "a100-80gb"
    assert probe.chip_id("AMD Instinct MI300X") == "mi300x"
    assert probe.chip_id("NVIDIA GeForce RTX 4090") == "nvidia-geforce-rtx-4090"
    assert probe.slug("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz") == (
        "intel-xeon-platinum-8480-2-00ghz")


def test_the_median_skips_nothing_and_the_budget_bounds_the_repetitions():
    calls = []
    times = iter([5.0, 1.0, 3.0, 2.0, 4.0, 9.0] + [0.0] * 30)
    t = probe.median_s(lambda: calls.append(1), lambda call: (call(), next(times))[1],
                       lambda: None, slice_s=1e-9, left_s=100.0)
    # The warm-up (5.0) is left out; the minimum of 3 repetitions: 1, 3, 2.
    assert t == 2.0 and len(calls) == 4


def test_a_missing_backend_is_named_with_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(probe.Missing, match="torch"):
        probe.torch_probe(probe.Budget(1), False, None, None)
