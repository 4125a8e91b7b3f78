//! `sweep --help`'s long text: its axes, its rows and examples.

pub(crate) const SWEEP_HELP: &str = "\
Axes (the sweep is their cartesian product):
  --set NAME=LIST     values of a param; LIST is comma-separated numbers and ranges:
                        1,2,4            a list
                        1..=256          1, 2, ..., 256 (inclusive; `1..256` excludes 256)
                        1..=256:x2       1, 2, 4, ..., 256 (geometric)
                        128..=4096:+128  128, 256, ..., 4096 (arithmetic)
                        1,8..=64:x2,100  lists and ranges mixed
  --dtype KEY=LIST    formats of a key, e.g. weight=bf16,fp8,int4-g128 or experts.weight=mxfp4
  --fusion LIST|all   fusion plans of the workload
  --chip LIST|all     chips (built-in names or files), `all` for every built-in chip that
                      ships (--include-announced adds the announced ones)
  --chip-set FIELD=LIST
                      what-if chips: each --chip with a field of its own changed, values
                      with units as chip files write them (memory.capacity=80GB..=288GB:+16GB,
                      memory.bandwidth=3.35TB/s,8TB/s, matrix.fp8=1979TFLOPS..=7916TFLOPS:x2);
                      fields: memory.capacity (usable), memory.bandwidth, matrix.TYPE,
                      vector.TYPE, cache.size, cache.bandwidth, interconnect.bandwidth, launch,
                      price.cloud (USD/h), price.purchase (USD per GPU), power

Rows come in product order: chip (each base chip's what-if chips in the order of the
--chip-set values, the first --chip-set outermost), then params in the order given, then data
types, then fusion plan. Columns: workload, chip (a what-if chip's names its derivation:
h200{memory.bandwidth=8TB/s}), mode, fusion, the data types, the totals of `stepcost run
--format csv`, one per param, one per --chip-set field (chip_memory_bandwidth_tb_s, ...) and
`error` (filled when a scenario cannot be priced, e.g. a data type the chip lacks). With
--per-op, one row per kernel.

Examples:
  stepcost sweep llama-3.1-70b --chip h100-sxm,h200 --set batch=1..=256:x2 \\
      --dtype weight=bf16,fp8 --fusion none,flash --out sweep.csv
  stepcost sweep llama-3.1-70b --chip all --set batch=1..=1024 --set context=1024,8192 \\
      --skip-invalid --format json --out sweep.jsonl
  stepcost sweep llama-3.1-70b --chip h200 --set batch=64 \\
      --chip-set memory.bandwidth=4.8TB/s,8TB/s --chip-set memory.capacity=141GB,192GB";
