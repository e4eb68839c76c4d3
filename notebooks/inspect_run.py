# %% [markdown]
# # Inspect a benevaudit run directory
# A percent-format notebook (open it in VS Code or Jupyter with jupytext, or run it as a script):
# it reads only the files a run leaves behind, so it works offline on any machine.
# `python notebooks/inspect_run.py outputs/train/runs/<run>`

# %%
import json
import sys
from pathlib import Path

import pandas as pd

run = Path(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-")
           else sorted(Path("outputs/train/runs").iterdir())[-1])
print("run:", run)

# %% [markdown]
# ## Headline metrics

# %%
metrics = json.loads((run / "metrics.json").read_text())
headline = ["test/macro_f1", "test/recall_N", "test/recall_OB", "test/recall_BB",
            "test/precision_BB", "binary/f1"]
print(pd.Series({k: metrics.get(k) for k in headline}).round(3).to_string())

# %% [markdown]
# ## Errors by user demographics

# %%
preds = pd.read_parquet(run / "predictions.parquet")
preds["correct"] = preds["label"] == preds["pred"]
print(pd.crosstab(preds["label"], preds["pred"], margins=True))
for col in ("user_age", "user_gender", "user_ability"):
    print(preds.groupby(col)["correct"].mean().round(3).to_string(), "\n")

# %% [markdown]
# ## The cue lexicon

# %%
lexicon_path = run / "cue_lexicon.json"
if lexicon_path.exists():
    lexicon = json.loads(lexicon_path.read_text())
    print(pd.DataFrame({c: [e["word"] for e in entries[:15]] for c, entries in lexicon.items()}))

# %% [markdown]
# ## Figures
# The run's PNGs, shown inline in a notebook (IPython) and listed when run as a script. Look at
# the relevance heatmap before trusting the lexicon above.

# %%
figures = [run / name for name in ("confusion_matrix.png", "attribution_heatmap.png",
                                   "faithfulness.png", "representation_shift.png")]
try:
    from IPython import get_ipython
    from IPython.display import Image, display
    inline = get_ipython() is not None
except ImportError:
    inline = False
for fig in (f for f in figures if f.exists()):
    if inline:
        display(Image(filename=str(fig)))
    else:
        print("figure:", fig)
