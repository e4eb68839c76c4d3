# %% [markdown]
# # Explore cue lexicons
# Which words does a classifier lean on, how stable are they across seeds and interventions,
# and where do they sit in the relevance heatmap? Reads `cue_lexicon.json` files of finished
# runs (percent format; runs as a script too):
# `python notebooks/lexicon_explorer.py outputs/finetune_audit/<dir> [word]`

# %%
import json
import sys
from itertools import combinations
from pathlib import Path

import pandas as pd

from benevaudit.report.runs import find_runs

args = [a for a in sys.argv[1:] if not a.startswith("-")]
root = Path(args[0] if args else "outputs")
word = args[1].lower() if len(args) > 1 else None
lexicons = {str(p.relative_to(root)) or p.name: json.loads((p / "cue_lexicon.json").read_text())
            for p in find_runs(root) if (p / "cue_lexicon.json").is_file()}
print(f"{len(lexicons)} lexicon(s) under {root}: {sorted(lexicons)}")

# %% [markdown]
# ## Top words per class

# %%
TOP = 15
for name, lexicon in lexicons.items():
    frame = pd.DataFrame({c: [f"{e['word']} ({e['score']:.3g})" for e in entries[:TOP]]
                          for c, entries in lexicon.items()})
    print(f"\n== {name}\n{frame.to_string()}")

# %% [markdown]
# ## Stability: Jaccard overlap of each class's top words between runs

# %%
rows = []
for (a, la), (b, lb) in combinations(lexicons.items(), 2):
    for c in la:
        wa = {e["word"] for e in la[c][:TOP]}
        wb = {e["word"] for e in lb.get(c, [])[:TOP]}
        rows.append({"run a": a, "run b": b, "class": c,
                     "jaccard": len(wa & wb) / len(wa | wb) if wa | wb else float("nan")})
print(pd.DataFrame(rows).round(3).to_string(index=False) if rows else "one lexicon: nothing to compare")

# %% [markdown]
# ## One word across runs and classes (rank, score)

# %%
if word:
    hits = [{"run": n, "class": c, "rank": i + 1, "score": e["score"]}
            for n, lex in lexicons.items() for c, entries in lex.items()
            for i, e in enumerate(entries) if e["word"].lower() == word]
    print(pd.DataFrame(hits).to_string(index=False) if hits else f"{word!r}: in no lexicon")

# %% [markdown]
# ## Words shared by every class (likely not class cues at all)

# %%
for name, lexicon in lexicons.items():
    shared = set.intersection(*[{e["word"] for e in entries} for entries in lexicon.values()])
    print(f"{name}: {sorted(shared)[:20] or 'none'}")
