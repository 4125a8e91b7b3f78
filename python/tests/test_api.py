"""The package's own promises: data frames one call away, optional imports named, loaded
objects reused and pickled, shards that cover the grid."""

import pickle
import sys

import pytest

import stepcost


def test_tables_become_data_frames():
    t = stepcost.sweep("llama-3.1-8b", ["h100-sxm", "h200"], set={"batch": range(1, 9)})
    df = t.to_pandas()
    assert list(df.columns) == t.column_names and len(df) == 16
    assert df["batch"].tolist() == [float(b) for b in range(1, 9)] * 2
    import polars as pl
    frame = pl.from_arrow(t)
    assert frame.shape == (16, t.num_columns)
    assert frame["chip"].to_list() == ["h100-sxm"] * 8 + ["h200"] * 8


def test_a_call_that_needs_pyarrow_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    r = stepcost.run("llama-3.1-8b", "h100-sxm")  # no table: no pyarrow needed
    assert r.to_dict()["chip"] == "h100-sxm"
    with pytest.raises(ImportError, match="`pyarrow`"):
        r.kernels()
    with pytest.raises(ImportError, match="`pyarrow`"):
        stepcost.sweep("llama-3.1-8b", "h100-sxm")


def test_loaded_objects_are_reused_and_pickle_as_what_they_were_given_as(tmp_path):
    chip = stepcost.load_chip("h200")
    text = stepcost.load_workload(open(stepcost_workload_path(), encoding="utf-8").read(),
                                  name="my-model.yaml")
    assert text.id == "my-model" and "batch" in text.params
    a = stepcost.run(text, chip, set={"batch": 4})
    b = stepcost.run("llama-3.1-8b", "h200", set={"batch": 4})
    assert a.step_time_us == b.step_time_us and a.workload == "my-model"
    for obj in (chip, text):
        again = pickle.loads(pickle.dumps(obj))
        assert (again.id, again.name) == (obj.id, obj.name)
    g = stepcost.grid(text, [chip, "h100-sxm"], set={"batch": [1, 2, 3]})
    assert pickle.loads(pickle.dumps(g.shard(1, 2))).sweep().equals(g.shard(1, 2).sweep())


def stepcost_workload_path():
    from conftest import ROOT
    return ROOT / "workloads" / "llama-3.1-8b.yaml"


def test_shards_are_the_cli_s_slices():
    g = stepcost.grid("llama-3.1-8b", "h100-sxm", set={"batch": range(1, 11)})
    # Shard i of n holds scenarios i*total//n to (i+1)*total//n: 10 in 4 is 2, 3, 2, 3.
    assert [len(s) for s in g.shards(4)] == [2, 3, 2, 3]
    batches = [s.sweep().column("batch").to_pylist() for s in g.shards(4)]
    assert batches == [[1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0], [8.0, 9.0, 10.0]]


def test_ctrl_c_stops_a_long_sweep():
    # 10^8 scenarios (minutes of pricing) that keep no row; SIGINT half a second in must stop
    # the sweep within a chunk with KeyboardInterrupt. The timeout only guards against a hang.
    import subprocess
    child = """
import os, signal, threading, stepcost
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    stepcost.sweep("llama-3.1-8b", "h100-sxm", set={"batch": range(1, 10001),
                   "context": range(1, 10001)}, where="ms_per_token < 0")
except KeyboardInterrupt:
    print("interrupted")
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "interrupted", done.stderr
