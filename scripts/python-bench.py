"""The 1M-scenario sweep from Python into a pyarrow.Table, in-process; prints the wall time,
the table's Arrow bytes against what its columns must take, and the process's peak memory.
Run by scripts/python-bench (a report, never a gate)."""

import resource
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

import stepcost

t0 = time.perf_counter()
table = stepcost.sweep("llama-3.1-70b", "h100-sxm",
                       set={"tokens": 1, "batch": range(1, 1001), "context": range(128, 128001, 128)})
seconds = time.perf_counter() - t0
rows, batches = table.num_rows, table.column(0).num_chunks

# What the columns must take as Arrow lays them out: 8 bytes a number or count, a bit a
# boolean, 4 bytes of offset per row (and one per batch) plus the text of a string column,
# and a validity bit per row in a column holding a null.
expected = 0
for field, column in zip(table.schema, table.columns):
    t = field.type
    if pa.types.is_boolean(t):
        expected += sum((len(c) + 7) // 8 for c in column.chunks)
    elif pa.types.is_string(t):
        text = pc.sum(pc.binary_length(column)).as_py() or 0
        expected += 4 * (rows + batches) + text
    else:
        expected += 8 * rows
    expected += sum((len(c) + 7) // 8 for c in column.chunks if c.null_count)

peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(f"python: {rows} rows x {table.num_columns} columns in {batches} batches, {seconds:.3f} s; "
      f"Arrow {table.nbytes / 1e6:.1f} MB (expected {expected / 1e6:.1f} MB, "
      f"{table.nbytes / expected:.3f}x); peak RSS {peak / 1e6:.0f} MB", file=sys.stderr)
print(f"{seconds:.3f}")
