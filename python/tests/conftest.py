"""Helpers shared by the tests: the command line to compare with, and a table-to-CSV check
that holds every float to its bits."""

import csv
import io
import math
import os
import re
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A chip whose matrix unit has neither fp8 nor a 16-bit type to widen fp8 to: fp8 x fp8
# cannot run on it (the same chip as the Rust sweep tests').
FP32_ONLY = (
    "name: FP32 only\nmemory: {capacity: 40 GB, bandwidth: 1.5 TB/s}\n"
    "matrix: {fp32: 19.5 TFLOPS}\nvector: {fp32: 19.5 TFLOPS}\n"
    "expected: {matrix: {fp32: 0.8}, memory: 0.9}\n"
)


def binary() -> str:
    path = os.environ.get("STEPCOST_BIN", str(ROOT / "target" / "debug" / "stepcost"))
    if not Path(path).is_file():
        pytest.fail(f"no stepcost binary at {path}: run `cargo build` or set STEPCOST_BIN")
    return path


def cli(*args: str) -> str:
    """The command line's stdout; it must succeed."""
    done = subprocess.run([binary(), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_error(*args: str) -> str:
    """The command line's error message (after `error: `); it must fail with status 1."""
    done = subprocess.run([binary(), *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1, done.stdout
    assert done.stderr.startswith("error: "), done.stderr
    return done.stderr[len("error: "):].rstrip("\n")


def cli_refusal(*args: str):
    """How the command line refuses a flag's value, as clap words it (`invalid value 'TEXT'
    for '--flag <V>': REASON`): `(TEXT, REASON)`. It must fail with status 1."""
    message = cli_error(*args)
    clap = r"invalid value '(.*?)' for '--[a-z-]+ <[^>]+>': (.*?)\n\nFor more information"
    found = re.match(clap, message, re.S)
    assert found, message
    return found.group(1), found.group(2)


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def expected_cell(text: str, kind: str):
    """A CSV cell as the typed value it must be in a column of `kind`."""
    if text == "":
        return None
    if kind == "double":
        return float(text)
    if kind == "int64":
        return int(text)
    if kind == "bool":
        assert text in ("true", "false"), text
        return text == "true"
    return text


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return bits(a) == bits(b) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def assert_rows_equal_csv(names, kinds, rows, text: str):
    """`rows` (a list of lists of Python values, column types `kinds`) are the CSV `text`:
    the same header, and every cell the same value (floats to the bit)."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    assert list(names) == header
    records = list(reader)
    assert len(records) == len(rows)
    for r, (record, row) in enumerate(zip(records, rows)):
        for name, kind, cell, value in zip(names, kinds, record, row):
            want = expected_cell(cell, kind)
            assert same(value, want), f"row {r} column `{name}`: {value!r} != {want!r} ({cell!r})"


def assert_table_equals_csv(table, text: str):
    kinds = [str(f.type) for f in table.schema]
    rows = list(zip(*[table.column(i).to_pylist() for i in range(table.num_columns)]))
    assert_rows_equal_csv(table.column_names, kinds, rows, text)
