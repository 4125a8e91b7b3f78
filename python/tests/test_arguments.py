"""Every argument is read as the command line reads its flag: what the command line refuses,
Python refuses, with its words (`invalid value 'TEXT' for `argument`: REASON`, the reason
the command line's), as an `InputError`, which is a `ValueError`; a value of the wrong type
is a `TypeError`. Each case once passed silently: truncated (`request=(1.5, 2.9)` priced as
`(1, 2)`), out of its range (`plan(context=1e10)`, an empty table), or empty
(`compare(chips=[])`, an empty table). And what is accepted is priced as before."""

import math

import pytest

import stepcost
from conftest import assert_table_equals_csv, cli, cli_error, cli_refusal

W, C = "llama-3.1-8b", "h200"


def refused(call, argument, *cli_args):
    """`call` raises the command line's refusal of `cli_args`, `argument` in the flag's
    place; returns the exception."""
    with pytest.raises(stepcost.InputError) as e:
        call()
    text, reason = cli_refusal(*cli_args)
    assert str(e.value) == f"invalid value '{text}' for `{argument}`: {reason}"
    assert isinstance(e.value, ValueError)
    assert (e.value.file, e.value.line, e.value.field) == (None, None, None)
    return e.value


def csv_column(text: str, name: str):
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(text)))
    return [float(r[name]) for r in rows]


def test_a_request_is_read_as_request_reads_it_not_truncated():
    run_args = ("run", W, "--chip", C, "--request")
    # (1.5, 2.9) was priced as (1, 2); the tuple, the mapping and the text alike are refused.
    for request in [(1.5, 2.9), {"in": 1.5, "out": 2.9}, "in=1.5,out=2.9"]:
        refused(lambda: stepcost.run(W, C, request=request), "request", *run_args,
                "in=1.5,out=2.9")
    refused(lambda: stepcost.run(W, C, request=(0, 2)), "request", *run_args, "in=0,out=2")
    refused(lambda: stepcost.run(W, C, request=(10**10, 2)), "request", *run_args,
            "in=10000000000,out=2")
    refused(lambda: stepcost.run(W, C, request={"in": 1, "out": 2, "x": 3}), "request",
            *run_args, "in=1,out=2,x=3")
    # A sweep's request is read where the grid is described, before anything is priced.
    refused(lambda: stepcost.grid(W, C, request=(1.5, 2.9)), "request",
            "sweep", W, "--chip", C, "--request", "in=1.5,out=2.9", "--quiet")
    with pytest.raises(TypeError, match="`request` needs a number, found True"):
        stepcost.run(W, C, request=(True, 2))
    with pytest.raises(TypeError, match="input_tokens, output_tokens"):
        stepcost.run(W, C, request=(1, 2, 3))
    # Whole tokens in any of the three forms price the command line's request.
    want = csv_column(cli("run", W, "--chip", C, "--request", "in=512,out=128", "--format",
                          "csv"), "ttft_ms")
    for request in [(512, 128), {"in": 512, "out": 128}, "in=512,out=128"]:
        assert [stepcost.run(W, C, request=request).ttft_ms] == want


def test_plan_reads_context_and_its_bounds_as_plan_does():
    plan = ("plan", W, "--chip", C)
    # context=1e10 planned an empty table; 1.5 was taken as it was.
    refused(lambda: stepcost.plan(W, C, context=1e10), "context", *plan, "--context",
            "10000000000.0")
    refused(lambda: stepcost.plan(W, C, context=1.5), "context", *plan, "--context", "1.5")
    refused(lambda: stepcost.plan(W, C, target_tokens_per_s=0), "target_tokens_per_s", *plan,
            "--target-tokens-per-s", "0")
    refused(lambda: stepcost.plan(W, C, max_ms_per_token=2e6), "max_ms_per_token", *plan,
            "--max-ms-per-token", "2000000.0")
    refused(lambda: stepcost.plan(W, C, max_ms_per_token=math.inf), "max_ms_per_token", *plan,
            "--max-ms-per-token", "inf")
    with pytest.raises(TypeError, match="`context` needs a number, found True"):
        stepcost.plan(W, C, context=True)
    with pytest.raises(TypeError, match="`max_ms_per_token` needs a number"):
        stepcost.plan(W, C, max_ms_per_token="50")
    # In range, the command line's plan.
    t = stepcost.plan(W, C, context=8192, max_ms_per_token=20)
    assert t.num_rows > 0
    assert_table_equals_csv(t, cli(*plan, "--context", "8192", "--max-ms-per-token", "20",
                                   "--format", "csv", "--raw-text"))


def test_a_context_set_as_a_param_is_inside_the_contexts_range_as_on_the_command_line():
    # `set={"context": 1e10}` went past --context's range as `--set context=1e10` did: plan
    # answered with an empty table. Both now read it through `--set`'s parser.
    for call, command in [(lambda s: stepcost.run(W, C, set=s), "run"),
                          (lambda s: stepcost.plan(W, C, set=s), "plan")]:
        refused(lambda: call({"context": 10**10}), "set", command, W, "--chip", C, "--set",
                "context=10000000000")
        refused(lambda: call({"context": 100.5}), "set", command, W, "--chip", C, "--set",
                "context=100.5")
    assert stepcost.run(W, C, set={"context": 4096}).to_dict()["chip"] == C


def test_an_empty_chip_list_is_refused_as_a_missing_chip_is():
    assert "--chip <CHIP>" in cli_error("compare", W)
    # compare([]) and plan(chips=[]) answered with empty tables.
    for call, name in [(lambda: stepcost.compare(W, []), "compare"),
                       (lambda: stepcost.plan(W, []), "a plan")]:
        with pytest.raises(stepcost.InputError) as e:
            call()
        assert str(e.value).startswith(f"{name} needs at least one chip, and `chips` is empty")
    with pytest.raises(stepcost.InputError, match="a sweep needs at least one chip"):
        stepcost.sweep(W, [])
    # `run --chip all` is no chip: run priced the first built-in one.
    with pytest.raises(stepcost.InputError) as e:
        stepcost.run(W, "all")
    assert str(e.value) == cli_error("run", W, "--chip", "all")
    with pytest.raises(TypeError, match="`chips` is a chip or a list of them"):
        stepcost.compare(W, 5)
    t = stepcost.compare(W, [C])
    assert_table_equals_csv(t, cli("compare", W, "--chip", C, "--format", "csv", "--raw-text"))


@pytest.mark.parametrize("call, argument, cli_args", [
    (lambda: stepcost.run(W, C, memory_utilization=2), "memory_utilization",
     ("run", W, "--chip", C, "--memory-utilization", "2")),
    (lambda: stepcost.compare(W, [C], memory_utilization=0), "memory_utilization",
     ("compare", W, "--chip", C, "--memory-utilization", "0")),
    # A sweep took any memory utilisation.
    (lambda: stepcost.sweep(W, C, memory_utilization=2), "memory_utilization",
     ("sweep", W, "--chip", C, "--memory-utilization", "2")),
    (lambda: stepcost.plan(W, C, memory_utilization=math.nan), "memory_utilization",
     ("plan", W, "--chip", C, "--memory-utilization", "nan")),
    # max_scenarios=1.5 was truncated to 1.
    (lambda: stepcost.sweep(W, C, max_scenarios=1.5), "max_scenarios",
     ("sweep", W, "--chip", C, "--max-scenarios", "1.5")),
    (lambda: stepcost.sweep(W, C, max_scenarios=0), "max_scenarios",
     ("sweep", W, "--chip", C, "--max-scenarios", "0")),
    (lambda: stepcost.sweep(W, C, shard=(0, 1.0)), "shard",
     ("sweep", W, "--chip", C, "--shard", "0/1.0")),
    (lambda: stepcost.grid(W, C).shard(4, 4), "shard",
     ("sweep", W, "--chip", C, "--shard", "4/4")),
    # shards(0) was an empty list.
    (lambda: stepcost.grid(W, C).shards(0), "shard",
     ("sweep", W, "--chip", C, "--shard", "0/0")),
    (lambda: stepcost.run(W, C, set={"batch": math.nan}), "set",
     ("run", W, "--chip", C, "--set", "batch=nan")),
    (lambda: stepcost.sweep(W, C, set={"batch": [1, math.inf]}), "set",
     ("sweep", W, "--chip", C, "--set", "batch=1,inf")),
    (lambda: stepcost.sweep(W, C, set={"batch": []}), "set",
     ("sweep", W, "--chip", C, "--set", "batch=")),
    (lambda: stepcost.sweep(W, C, set={"batch": "1..=256:y2"}), "set",
     ("sweep", W, "--chip", C, "--set", "batch=1..=256:y2")),
    # A range is not made into a list of a billion values first.
    (lambda: stepcost.sweep(W, C, set={"batch": range(1, 10**9)}), "set",
     ("sweep", W, "--chip", C, "--set", "batch=1..1000000000:+1")),
])
def test_every_number_is_read_by_its_flag_s_parser(call, argument, cli_args):
    refused(call, argument, *cli_args, *(["--quiet"] if cli_args[0] == "sweep" else []))


def test_values_of_the_wrong_type_are_type_errors_and_nothing_is_coerced():
    cases = [
        (lambda: stepcost.run(W, C, memory_utilization=True),
         "`memory_utilization` needs a number"),
        (lambda: stepcost.run(W, C, set={"batch": "8"}), "param `batch` needs a number"),
        (lambda: stepcost.run(W, C, dtypes={"weight": 8}), "needs a format's name"),
        (lambda: stepcost.run(W, C, overlap_comm="no"), "`overlap_comm` is True or False"),
        (lambda: stepcost.run(W, C, mode=None), "`mode` needs a str"),
        (lambda: stepcost.sweep(W, C, per_op=0), "`per_op` is True or False"),
        (lambda: stepcost.sweep(W, C, skip_invalid="false"), "`skip_invalid` is True or False"),
        (lambda: stepcost.sweep(W, C, max_scenarios=True), "`max_scenarios` needs a number"),
        (lambda: stepcost.sweep(W, C, where=1), "`where` needs a str"),
        (lambda: stepcost.sweep(W, C, set={"batch": [1, "2"]}), "param `batch` needs a number"),
        (lambda: stepcost.sweep(W, C, shard=(0,)), "`shard` is (i, n)"),
        (lambda: stepcost.sweep(W, C, shard=(True, 1)), "`shard` needs a number"),
        (lambda: stepcost.plan(W, C, conservative="yes"), "`conservative` is True or False"),
        (lambda: stepcost.plan(W, C, dtypes={"weight": 8}), "needs a format's name"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call()
    # Empty lists are refused as a sweep refuses them, not taken for the default.
    with pytest.raises(stepcost.InputError, match="`fusion` is an empty list"):
        stepcost.sweep(W, C, fusion=[])
    with pytest.raises(stepcost.InputError) as e:
        stepcost.plan(W, C, dtypes={"weight": []})
    with pytest.raises(stepcost.InputError) as same:
        stepcost.sweep(W, C, dtypes={"weight": []})
    assert str(e.value) == str(same.value) == "`weight` has no data types"


def test_the_command_line_s_lists_and_numpy_s_numbers_are_read_alike():
    a = stepcost.sweep(W, C, set={"batch": "1..=64:x4"})
    b = stepcost.sweep(W, C, set={"batch": [1, 4, 16, 64]})
    c = stepcost.sweep(W, C, set={"batch": range(1, 65, 21)})
    assert a.equals(b) and a.column("batch").to_pylist() == [1.0, 4.0, 16.0, 64.0]
    assert c.column("batch").to_pylist() == [1.0, 22.0, 43.0, 64.0]
    np = pytest.importorskip("numpy")
    d = stepcost.sweep(W, C, set={"batch": np.array([1, 4, 16, 64])})
    assert d.equals(a)
    r = stepcost.run(W, C, set={"batch": np.float64(8)}, memory_utilization=np.float32(0.5))
    assert r.batch == 8.0


def test_a_grid_past_max_scenarios_has_a_length_and_is_refused_only_when_swept():
    g = stepcost.grid(W, C, set={"batch": range(1, 11)}, max_scenarios=9)
    assert len(g) == 10
    with pytest.raises(stepcost.InputError) as e:
        g.sweep()
    assert str(e.value) == ("the sweep has 10 scenarios, more than max_scenarios 9; narrow an "
                            "axis, cut it into shards or raise the limit")
    assert cli_error("sweep", W, "--chip", C, "--set", "batch=1..=10", "--max-scenarios",
                     "9") == ("the sweep has 10 scenarios, more than --max-scenarios 9; narrow "
                              "an axis or raise the limit")
    # A shard within the limit is priced.
    assert g.shard(1, 2).sweep().column("batch").to_pylist() == [6.0, 7.0, 8.0, 9.0, 10.0]
