# %% [markdown]
# # Compare a sweep (or any set of runs)
# A percent-format notebook (VS Code, or Jupyter with jupytext; it also runs as a script). It
# reads run directories only and never re-runs an experiment:
# `python notebooks/compare_sweep.py outputs/train/multiruns/<sweep> [metric]`

# %%
import sys
from pathlib import Path

import pandas as pd

from benevaudit.report.context import Context
from benevaudit.report.html import runs_frame
from benevaudit.report.runs import collect
from benevaudit.report.sections import render_sections

args = [a for a in sys.argv[1:] if not a.startswith("-")]
sweep = Path(args[0] if args else sorted(Path("outputs/train/multiruns").iterdir())[-1])
metric = args[1] if len(args) > 1 else "test/macro_f1"
print("runs under:", sweep)

# %% [markdown]
# ## One row per run: choices as columns
# Runs that failed or were half written stay in the table with their reason.

# %%
runs = collect([sweep])
table = runs_frame(runs)
choices = [c for c in table.columns if c not in ("run", "status", "reason", "task", "seed", "path")
           and "/" not in c]
varying = [c for c in choices if table[c].nunique(dropna=False) > 1]
print(table[["run", "status", "seed", *choices]].to_string(index=False))
print("\nchoices that vary:", varying or "none")
print(table.loc[table["status"] != "ok", ["run", "status", "reason"]].to_string(index=False))

# %% [markdown]
# ## The metric by choice: mean ± std over seeds, n

# %%
if metric in table.columns:
    by = varying or ["task"]
    summary = table[table["status"] == "ok"].groupby(by, dropna=False)[metric].agg(
        ["mean", "std", "count"]).round(4)
    print(f"{metric} by {', '.join(by)}\n{summary.to_string()}")
else:
    print(f"{metric} is not among the metrics; some: {[c for c in table.columns if '/' in c][:8]}")

# %% [markdown]
# ## The study tables, with 95% bootstrap intervals

# %%
for section in render_sections(runs, Context(n_resamples=200)):
    for t in section.tables:
        print(f"\n== {section.title}: {t.title}")
        print(pd.DataFrame(t.text_rows(), columns=t.headers).to_string(index=False))

# %% [markdown]
# ## A bar chart of the metric per run (inline in a notebook, saved next to nothing)

# %%
import matplotlib

try:
    from IPython import get_ipython
    inline = get_ipython() is not None
except ImportError:
    inline = False
if not inline:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt

ok = table[(table["status"] == "ok")]
if metric in ok.columns and not ok.empty:
    labels = [" ".join(str(r[c]) for c in varying) or r["run"] for _, r in ok.iterrows()]
    fig, ax = plt.subplots(figsize=(max(4, 0.5 * len(ok)), 3))
    ax.bar(range(len(ok)), ok[metric])
    ax.set_xticks(range(len(ok)), labels, rotation=45, ha="right")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} per run of {sweep.name}")
    fig.tight_layout()
    plt.show() if inline else print(f"figure: {metric} per run of {sweep.name} ({len(ok)} bars)")
