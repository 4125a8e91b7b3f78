"""Errors are Python exceptions with the command line's message: `InputError` (a
`ValueError`) with the file, line and field of the first problem; `UnsupportedError` for a
chip that lacks a type. They pickle, as a cluster's worker sends them back."""

import pickle

import pytest

import stepcost
from conftest import FP32_ONLY, cli_error

BAD_CHIP = "name: x\nmemory: {capacity: 80 GB}\nmatrix: {bf16: 1 PFLOPS}\n"


def test_a_bad_chip_file_says_file_line_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_CHIP)
    with pytest.raises(stepcost.InputError) as e:
        stepcost.load_chip(str(path))
    assert (e.value.file, e.value.line, e.value.field) == (str(path), 2, "bandwidth")
    assert str(e.value) == cli_error("run", "llama-3.1-8b", "--chip", str(path))
    # The same error from a call that takes the path, and from YAML text with a name.
    with pytest.raises(stepcost.InputError) as again:
        stepcost.run("llama-3.1-8b", path)
    assert str(again.value) == str(e.value)
    with pytest.raises(stepcost.InputError) as text:
        stepcost.load_chip(BAD_CHIP, name="mine.yaml")
    assert (text.value.file, text.value.line, text.value.field) == ("mine.yaml", 2, "bandwidth")


def test_a_bad_workload_value_and_names_say_what_was_wrong(tmp_path):
    with pytest.raises(stepcost.InputError) as e:
        stepcost.run("llama-3.1-8b", "h100-sxm", set={"batchh": 4})
    assert str(e.value) == cli_error("run", "llama-3.1-8b", "--chip", "h100-sxm", "--set",
                                     "batchh=4")
    assert "`batch`?" in str(e.value) and e.value.file is None and e.value.line is None
    with pytest.raises(stepcost.InputError) as e:
        stepcost.run("llama-3.1-8b", "h100-sxmm")
    assert str(e.value) == cli_error("run", "llama-3.1-8b", "--chip", "h100-sxmm")
    with pytest.raises(stepcost.InputError) as e:
        stepcost.run("llama-3.1-8b", "h100-sxm", dtypes={"weight": "fp9"})
    assert "unknown data type `fp9`" in str(e.value)
    with pytest.raises(stepcost.InputError) as e:
        stepcost.sweep("llama-3.1-8b", "h100-sxm", set={"batch": [1, 0]})
    assert str(e.value) == cli_error("sweep", "llama-3.1-8b", "--chip", "h100-sxm", "--set",
                                     "batch=1,0", "--quiet")
    with pytest.raises(stepcost.InputError, match="from 0 to 3"):
        stepcost.grid("llama-3.1-8b", "h100-sxm").shard(4, 4)
    with pytest.raises(stepcost.InputError, match="max_scenarios"):
        stepcost.sweep("llama-3.1-8b", "h100-sxm", set={"batch": range(1, 11)}, max_scenarios=9)


def test_a_chip_that_lacks_a_type_is_unsupported(tmp_path):
    path = tmp_path / "fp32-only.yaml"
    path.write_text(FP32_ONLY)
    fp8 = {"weight": "fp8", "activation": "fp8"}
    with pytest.raises(stepcost.UnsupportedError) as e:
        stepcost.run("gemm", str(path), dtypes=fp8)
    assert isinstance(e.value, stepcost.StepcostError)
    assert not isinstance(e.value, stepcost.InputError)
    assert str(e.value) == cli_error("run", "gemm", "--chip", str(path), "--dtype", "weight=fp8",
                                     "--dtype", "activation=fp8")
    # In a sweep it is an `error` row, or no row with skip_invalid.
    t = stepcost.sweep("gemm", [str(path), "h100-sxm"], dtypes=fp8)
    assert str(e.value).startswith(t.column("error")[0].as_py())
    assert stepcost.sweep("gemm", [str(path), "h100-sxm"], dtypes=fp8, skip_invalid=True).num_rows == 1


def test_a_conservative_plan_in_roofline_mode_is_the_cli_s_error():
    with pytest.raises(stepcost.InputError) as e:
        stepcost.plan("llama-3.1-8b", "h200", mode="roofline", conservative=True)
    assert str(e.value) == cli_error("plan", "llama-3.1-8b", "--chip", "h200", "--mode",
                                     "roofline", "--conservative")
    assert "conservative" in str(e.value)


def test_an_input_error_is_a_value_error_that_pickles_with_its_place(tmp_path):
    assert issubclass(stepcost.InputError, ValueError)
    assert issubclass(stepcost.InputError, stepcost.StepcostError)
    assert not issubclass(stepcost.UnsupportedError, ValueError)
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nmemory: {capacity: 80 GB}\nmatrix: {bf16: 1 PFLOPS}\n")
    with pytest.raises(ValueError) as e:
        stepcost.load_chip(str(path))
    # A cluster's worker sends its errors back pickled.
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is stepcost.InputError and str(again) == str(e.value)
    assert (again.file, again.line, again.field) == (str(path), 2, "bandwidth")
    with pytest.raises(stepcost.UnsupportedError) as unsupported:
        stepcost.run("gemm", FP32_ONLY, dtypes={"weight": "fp8", "activation": "fp8"})
    again = pickle.loads(pickle.dumps(unsupported.value))
    assert type(again) is stepcost.UnsupportedError and str(again) == str(unsupported.value)
