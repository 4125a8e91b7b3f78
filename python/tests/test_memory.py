"""A sweep's table is held in memory whole: a sweep that would not fit raises `MemoryError`
with its estimate and the ways out, before pricing (or, with `where`, once the rows kept pass
the cap), where an allocation that failed aborted the interpreter (4 million rows under a 2
GB address-space limit). The estimate bounds what the table takes, and docs/python.md says
what a row takes."""

import re
import subprocess
import sys

import pytest

import stepcost
from conftest import ROOT

BENCH = ("llama-3.1-70b", "h100-sxm")


def child(code: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr)
    return done


def per_row_bytes(message: str) -> int:
    return int(re.search(r" rows?(?: \([^)]*\))? of (\d+) bytes", message).group(1))


def test_four_million_rows_under_a_2_gb_address_space_raise_memory_error_before_pricing():
    done = child(f"""
import resource, time
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import stepcost
start = time.perf_counter()
try:
    stepcost.sweep({BENCH[0]!r}, {BENCH[1]!r}, set={{"tokens": 1, "batch": range(1, 4001),
                   "context": range(128, 128001, 128)}})
    print("no error")
except MemoryError as e:
    print(f"{{time.perf_counter() - start:.3f}}")
    print(e)
# The interpreter goes on, and sweeps what fits.
print(stepcost.sweep({BENCH[0]!r}, {BENCH[1]!r}, set={{"batch": range(1, 11)}}).num_rows)
""")
    seconds, message, rows = done.stdout.strip().split("\n")
    # Refused before pricing: 4 million scenarios take minutes.
    assert float(seconds) < 20, seconds
    assert rows == "10"
    assert re.match(r"the sweep's table would take about \d\.\d+ GB: 4000000 rows of \d+ bytes "
                    r"\(\d+ columns\) and 67.1 MB for the sweep itself, more than "
                    r"max_memory_bytes \d+ MB \(half of \d+(\.\d+)? [GM]B, the address-space "
                    r"limit \(RLIMIT_AS\) less what is in use\); ", message), message
    for way_out in ["where=", "grid(...).shards(n)", "shard=(i, n)", "max_memory_bytes",
                    "--format parquet --out FILE"]:
        assert way_out in message


def test_the_estimate_bounds_what_a_sweep_takes_and_is_near_its_arrow_bytes():
    # 50,000 rows: the peak memory the sweep adds is within the estimate, and the estimate
    # a row is at most 1.4 times what a row takes in Arrow.
    done = child(f"""
import resource, stepcost, pyarrow
axes = {{"tokens": 1, "batch": range(1, 51), "context": range(128, 128001, 128)}}
stepcost.sweep({BENCH[0]!r}, {BENCH[1]!r}, set={{"batch": [1, 2]}})  # the pool, warm
try:
    stepcost.sweep({BENCH[0]!r}, {BENCH[1]!r}, set=axes, max_memory_bytes=1)
except MemoryError as e:
    print(e)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
table = stepcost.sweep({BENCH[0]!r}, {BENCH[1]!r}, set=axes)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(table.num_rows, table.nbytes, after - before)
""")
    message, figures = done.stdout.strip().split("\n")
    per_row = per_row_bytes(message)
    rows, arrow_bytes, grown = map(int, figures.split())
    assert rows == 50_000
    assert grown <= rows * per_row + stepcost._native.SWEEP_BYTES, (grown, per_row)
    assert arrow_bytes / rows < per_row <= 1.4 * arrow_bytes / rows, (per_row, arrow_bytes)


def test_a_filtered_sweep_stops_once_the_rows_it_keeps_pass_the_cap():
    # The filter keeps every row, so the rows cannot be counted before: the sweep is stopped
    # once they pass 1 MiB, within two of its chunks (32,768 rows at most each), far before
    # its 100,000 scenarios.
    room = 1 << 20
    cap = stepcost._native.SWEEP_BYTES + room
    axes = {"tokens": 1, "batch": range(1, 101), "context": range(128, 128001, 128)}
    with pytest.raises(MemoryError) as e:
        stepcost.sweep(*BENCH, set=axes, where="batch > 0", max_memory_bytes=cap)
    message = str(e.value)
    rows = int(re.match(r"the sweep was stopped after (\d+) rows: ", message).group(1))
    with pytest.raises(MemoryError) as estimate:
        stepcost.sweep(*BENCH, set=axes, max_memory_bytes=cap)
    per_row = per_row_bytes(str(estimate.value))
    assert room < rows * per_row and rows <= room / per_row + 2 * 32_768, (rows, per_row)
    assert "more than max_memory_bytes 68.2 MB (as given)" in message
    # Without a filter the same sweep is refused before pricing, by its whole estimate.
    assert re.match(r"the sweep's table would take about \d+ MB: 100000 rows of ",
                    str(estimate.value)), estimate.value
    # Nothing else: a sweep that fits is whole.
    kept = stepcost.sweep(*BENCH, set={"batch": range(1, 101)}, where="batch > 0",
                          max_memory_bytes=cap)
    assert kept.num_rows == 100


def test_a_row_per_kernel_is_counted_and_max_memory_bytes_is_read_as_a_count():
    with pytest.raises(MemoryError) as e:
        stepcost.sweep("llama-3.1-8b", "h200", set={"batch": range(1, 1001)}, per_op=True,
                       fusion="none", max_memory_bytes=70 << 20)
    kernels = stepcost.run("llama-3.1-8b", "h200", fusion="none").kernels().num_rows
    assert f": {1000 * kernels} rows (1000 scenarios, a row per kernel) of " in str(e.value)
    for bad in [0, 1.5, -1, float("inf")]:
        with pytest.raises(stepcost.InputError, match="for `max_memory_bytes`: expected a whole"):
            stepcost.grid("llama-3.1-8b", "h200", max_memory_bytes=bad)
    with pytest.raises(TypeError, match="`max_memory_bytes` needs a number"):
        stepcost.grid("llama-3.1-8b", "h200", max_memory_bytes=True)
    # A float with a whole value is a count, as the command line reads `2e9`.
    assert stepcost.grid("llama-3.1-8b", "h200", max_memory_bytes=2e9).max_memory_bytes == 2e9


def test_docs_state_the_bytes_a_row_takes():
    # docs/python.md gives llama-3.1-70b's sweep row in Arrow and while the table fills:
    # 8 bytes a number or count and a validity byte, 2 a boolean, 5 a text and its bytes.
    import pyarrow.compute as pc
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    stated = re.search(r"(\d+)\s+bytes\s+a\s+row\s+for\s+`llama-3.1-70b`'s\s+(\d+)\s+columns\s+"
                       r"in\s+Arrow\s+\(`table.nbytes`\)\s+and\s+(\d+)\s+while", text)
    assert stated, "docs/python.md no longer states the bytes a row takes"
    arrow, columns, filling = map(int, stated.groups())
    t = stepcost.sweep(*BENCH, set={"tokens": 1, "batch": range(1, 11),
                                    "context": range(128, 128001, 128)})
    rows = t.num_rows
    held = 0.0
    for field, column in zip(t.schema, t.columns):
        kind = str(field.type)
        if kind == "string":
            held += 5 + (pc.sum(pc.binary_length(column)).as_py() or 0) / rows
        else:
            held += {"double": 9, "int64": 9, "bool": 2}[kind]
    assert (t.num_columns, round(t.nbytes / rows), round(held)) == (columns, arrow, filling)
    # The estimate a row is what it holds while the table fills, and an eighth more.
    with pytest.raises(MemoryError) as e:
        stepcost.sweep(*BENCH, set={"batch": [1]}, max_memory_bytes=1)
    assert held * 1.125 <= per_row_bytes(str(e.value)) <= (held + 16) * 1.125 + 1
