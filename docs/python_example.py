"""Three chips for one model, from Python: tokens per second against batch for Llama-3.1-70B
with fp8 weights on H200, B200 and MI300X, drawn with matplotlib and written as a CSV a
spreadsheet opens. CI runs it (`scripts/python-tests`).

    python docs/python_example.py [OUT_DIR]     # default: docs/out (ignored by git)
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

import stepcost

out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "out")
out.mkdir(parents=True, exist_ok=True)

chips = ["h200", "b200", "mi300x"]
table = stepcost.sweep("llama-3.1-70b", chips, set={"batch": range(1, 257)},
                       dtypes={"weight": "fp8"})
df = table.to_pandas()
fits = df[df["fits"]]

fig, ax = plt.subplots(figsize=(7, 4.5))
for chip, rows in fits.groupby("chip", sort=False):
    ax.plot(rows["batch"], rows["tokens_per_s"], label=chip)
ax.set_xscale("log", base=2)
ax.set_xlabel("batch (sequences decoding together)")
ax.set_ylabel("tokens/s per replica")
ax.set_title("Llama-3.1-70B decode, fp8 weights, context 4096 (expected mode)")
ax.legend(title="chip")
ax.grid(True, which="both", alpha=0.3)
fig.tight_layout()
fig.savefig(out / "tokens-per-s-vs-batch.png", dpi=120)

columns = ["chip", "batch", "step_time_us", "tokens_per_s", "ms_per_token",
           "usd_per_million_tokens", "fits"]
df[columns].to_csv(out / "llama-3.1-70b-fp8.csv", index=False)

best = fits.loc[fits.groupby("chip", sort=False)["tokens_per_s"].idxmax()]
print(best[["chip", "batch", "tokens_per_s", "usd_per_million_tokens"]].to_string(index=False))
print(f"wrote {out / 'tokens-per-s-vs-batch.png'} and {out / 'llama-3.1-70b-fp8.csv'}")
