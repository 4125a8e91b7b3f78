"""Results from Python equal the command line's for the same scenario: run, its kernels,
compare, sweep (whole, per kernel, filtered, with a request, sharded) and plan, on built-in
models; every float to the bit, every text the same, column for column."""

import pyarrow.parquet as pq

import pytest
import stepcost
from conftest import FP32_ONLY, assert_rows_equal_csv, assert_table_equals_csv, cli


def test_run_is_the_cli_s_run_row():
    r = stepcost.run("llama-3.1-70b", "h200", set={"batch": 32}, dtypes={"weight": "fp8"})
    text = cli("run", "llama-3.1-70b", "--chip", "h200", "--set", "batch=32",
               "--dtype", "weight=fp8", "--format", "csv", "--raw-text")
    row = r.to_dict()
    kinds = ["double" if isinstance(v, float) else "int64" if isinstance(v, int) and not isinstance(v, bool)
             else "bool" if isinstance(v, bool) else "string" for v in row.values()]
    # A column empty here has no Python type to tell: its CSV cell must be empty too.
    assert_rows_equal_csv(list(row), kinds, [list(row.values())], text)
    assert r.chip == "h200" and r.weight_dtype == "fp8" and r.batch == 32.0


def test_run_kernels_and_request_are_the_cli_s():
    r = stepcost.run("llama-3.1-8b", "h100-sxm", set={"batch": 8, "context": 2048},
                     fusion="none", mode="roofline", request=(512, 128))
    args = ["run", "llama-3.1-8b", "--chip", "h100-sxm", "--set", "batch=8", "--set",
            "context=2048", "--fusion", "none", "--mode", "roofline", "--request",
            "in=512,out=128", "--raw-text"]
    assert_table_equals_csv(r.kernels(), cli(*args, "--per-op", "--format", "csv"))
    one = stepcost.sweep("llama-3.1-8b", "h100-sxm", set={"batch": 8, "context": 2048},
                         fusion="none", mode="roofline", request=(512, 128))
    assert_table_equals_csv(one, cli(*args, "--format", "csv"))
    assert r.ttft_ms == one.column("ttft_ms")[0].as_py()


def test_compare_is_the_cli_s():
    t = stepcost.compare("llama-3.1-70b", ["h100-sxm", "h200", "mi300x"],
                         set={"batch": 16}, dtypes={"weight": "fp8", "kv": "fp8"})
    text = cli("compare", "llama-3.1-70b", "--chip", "h100-sxm,h200,mi300x", "--set",
               "batch=16", "--dtype", "weight=fp8", "--dtype", "kv=fp8", "--format", "csv",
               "--raw-text")
    assert_table_equals_csv(t, text)


def test_the_engine_is_the_cli_s_engine():
    r = stepcost.run("llama-3.1-8b", "h100-sxm", engine="sglang")
    assert r.engine == "sglang"
    t = stepcost.compare("llama-3.1-8b", ["h100-sxm", "mi300x"], engine="vllm@0.7")
    text = cli("compare", "llama-3.1-8b", "--chip", "h100-sxm,mi300x", "--engine", "vllm@0.7",
               "--format", "csv", "--raw-text")
    assert_table_equals_csv(t, text)
    assert t.column("engine").to_pylist() == ["vllm@0.7", "vllm@0.7"]
    t = stepcost.plan("llama-3.1-8b", "h200", max_ms_per_token=50, engine=["vllm", "sglang"])
    text = cli("plan", "llama-3.1-8b", "--chip", "h200", "--max-ms-per-token", "50", "--engine",
               "vllm,sglang", "--format", "csv", "--raw-text")
    assert_table_equals_csv(t, text)
    with pytest.raises(stepcost.InputError, match="sglang"):
        stepcost.run("llama-3.1-8b", "h100-sxm", engine="sglan")


def test_sweep_is_the_cli_s_column_for_column(tmp_path):
    chip = tmp_path / "fp32-only.yaml"
    chip.write_text(FP32_ONLY)
    t = stepcost.sweep("llama-3.1-70b", ["h100-sxm", str(chip), "b200"],
                       set={"batch": range(1, 257, 51), "context": [1024, 8192]},
                       dtypes={"weight": ["bf16", "fp8"], "activation": ["bf16", "fp8"]},
                       fusion="all")
    args = ["sweep", "llama-3.1-70b", "--chip", f"h100-sxm,{chip},b200", "--set",
            "batch=1..=256:+51", "--set", "context=1024,8192", "--dtype", "weight=bf16,fp8",
            "--dtype", "activation=bf16,fp8", "--fusion", "all", "--quiet"]
    assert t.num_rows == 3 * 6 * 2 * 2 * 2 * 3
    assert_table_equals_csv(t, cli(*args, "--raw-text"))
    errors = [e for e in t.column("error").to_pylist() if e]
    # Every scenario on the fp32-only chip, and only those, is an error row.
    assert len(errors) == 6 * 2 * 2 * 2 * 3 and all("lists no" in e for e in errors)
    # The Parquet file the command line writes reads back as the same table, types included.
    out = tmp_path / "sweep.parquet"
    cli(*args, "--format", "parquet", "--out", str(out))
    assert pq.read_table(out).equals(t)


def test_per_op_filtered_and_skipping_sweeps_are_the_cli_s():
    kw = dict(set={"batch": [1, 64]}, dtypes={"weight": ["bf16", "fp8"]})
    base = ["sweep", "mixtral-8x7b", "--chip", "h200,mi300x", "--set", "batch=1,64",
            "--dtype", "weight=bf16,fp8", "--quiet", "--raw-text"]
    per_op = stepcost.sweep("mixtral-8x7b", ["h200", "mi300x"], per_op=True, **kw)
    assert_table_equals_csv(per_op, cli(*base, "--per-op"))
    where = "fits && ms_per_token <= 20"
    kept = stepcost.sweep("mixtral-8x7b", ["h200", "mi300x"], where=where, **kw)
    assert_table_equals_csv(kept, cli(*base, "--where", where))
    assert 0 < kept.num_rows < 8


def test_shards_concatenate_to_the_whole_and_are_the_cli_s_shards():
    g = stepcost.grid("llama-3.1-8b", ["h100-sxm", "h200", "l40s"],
                      set={"batch": [1, 2, 4, 8, 16]}, dtypes={"kv": ["bf16", "fp8"]})
    assert len(g) == 30
    whole = g.sweep()
    parts = [s.sweep() for s in g.shards(7)]
    assert [p.num_rows for p in parts] == [len(s) for s in g.shards(7)]
    import pyarrow as pa
    assert pa.concat_tables(parts).equals(whole)
    text = cli("sweep", "llama-3.1-8b", "--chip", "h100-sxm,h200,l40s", "--set",
               "batch=1,2,4,8,16", "--dtype", "kv=bf16,fp8", "--shard", "3/7", "--header",
               "--quiet", "--raw-text")
    assert_table_equals_csv(parts[3], text)


def test_plan_is_the_cli_s():
    t = stepcost.plan("llama-3.1-70b", ["h100-sxm", "h200", "b200", "mi300x", "l40s"],
                      max_ms_per_token=50)
    text = cli("plan", "llama-3.1-70b", "--max-ms-per-token", "50", "--chip",
               "h100-sxm,h200,b200,mi300x,l40s", "--format", "csv", "--raw-text")
    assert_table_equals_csv(t, text)
    t = stepcost.plan("llama-3.1-70b", "h200", target_tokens_per_s=20000, max_ms_per_token=50,
                      context=8192, dtypes={"weight": ["fp8"], "kv": ["bf16", "fp8"]},
                      sort="chips", include_unfit=True)
    text = cli("plan", "llama-3.1-70b", "--chip", "h200", "--target-tokens-per-s", "20000",
               "--max-ms-per-token", "50", "--context", "8192", "--dtype", "weight=fp8",
               "--dtype", "kv=bf16,fp8", "--sort", "chips", "--include-unfit", "--format",
               "csv", "--raw-text")
    assert_table_equals_csv(t, text)


def test_a_conservative_plan_is_the_cli_s_and_every_table_has_the_band():
    kw = dict(target_tokens_per_s=20000, max_ms_per_token=50, dtypes={"weight": ["fp8"]})
    t = stepcost.plan("llama-3.1-70b", ["h200", "mi300x"], conservative=True, **kw)
    text = cli("plan", "llama-3.1-70b", "--chip", "h200,mi300x", "--target-tokens-per-s",
               "20000", "--max-ms-per-token", "50", "--dtype", "weight=fp8", "--conservative",
               "--format", "csv", "--raw-text")
    assert_table_equals_csv(t, text)
    # Conservative: the slow end of each band meets the bound.
    for high in t.column("step_time_high_us").to_pylist():
        assert high is not None
    # The band columns of the step tables, as the command line writes them; none in roofline
    # mode.
    r = stepcost.run("llama-3.1-8b", "h100-sxm")
    assert r.step_time_low_us < r.step_time_us < r.step_time_high_us
    assert r.tokens_per_s_low < r.tokens_per_s < r.tokens_per_s_high
    c = stepcost.compare("llama-3.1-8b", ["h100-sxm", "mi300x"])
    assert None not in c.column("tokens_per_s_high").to_pylist()
    s = stepcost.sweep("llama-3.1-8b", "h100-sxm", set={"batch": [1, 8]}, mode="roofline")
    assert s.column("step_time_low_us").to_pylist() == [None, None]


def test_a_sweep_s_engine_axis_is_the_cli_s():
    t = stepcost.sweep("llama-3.1-8b", ["h100-sxm", "mi300x"], engine=["vllm", "sglang"],
                       set={"batch": [1, 32]})
    text = cli("sweep", "llama-3.1-8b", "--chip", "h100-sxm,mi300x", "--engine", "vllm,sglang",
               "--set", "batch=1,32", "--format", "csv")
    assert_table_equals_csv(t, text)
    assert t.column("engine").to_pylist() == ["vllm", "vllm", "sglang", "sglang"] * 2
    built_ins = cli("engines", "--format", "csv").strip().splitlines()[1:]
    assert len(stepcost.grid("llama-3.1-8b", "h100-sxm", engine="all")) == len(built_ins)
