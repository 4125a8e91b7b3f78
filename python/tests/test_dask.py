"""A sweep spread over a Dask LocalCluster: each worker prices its shard of the grid, the
tables come back as Arrow, and, concatenated in shard order, they are the single-process
sweep."""

import pyarrow as pa
import pytest

import stepcost

distributed = pytest.importorskip("distributed")


def test_a_sweep_over_a_local_cluster_is_the_single_process_sweep():
    g = stepcost.grid("llama-3.1-70b", ["h100-sxm", "h200", "mi300x"],
                      set={"batch": range(1, 129), "context": [1024, 4096, 16384]},
                      dtypes={"weight": ["bf16", "fp8"]})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            futures = client.map(lambda shard: shard.sweep(), g.shards(8))
            parts = client.gather(futures)
            workers = {w for f in futures for w in client.who_has(f)[f.key]}
    assert len(workers) >= 1
    assert sum(p.num_rows for p in parts) == len(g) == 3 * 128 * 3 * 2
    assert pa.concat_tables(parts).equals(g.sweep())
