"""The fine-tuning audit (the study's Table 4): clean baseline, evaluation-side edits of the test
set, training-side edits of the training data, and the random-mask controls (RM, P+RM).

The side comes from the task (``evaluate`` = the frozen baseline on an edited test set; ``train``
with an intervention = retrained on edited data, tested clean) and the condition from the
intervention's steps. Seeds of one (side, condition, model) are one row, mean ± std with n.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benevaudit.audit.interventions import code_for, steps_from_config
from benevaudit.errors import ConfigError
from benevaudit.files import read_json
from benevaudit.report.context import Context, by_condition, figures_of
from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.gold import is_gold
from benevaudit.report.intervals import classification_replicates, wanted
from benevaudit.report.runs import Run
from benevaudit.report.stand_ins import marked

KEY = "finetune_audit"
TITLE = "Fine-tuning audit (Table 4)"
ORDER = 10
COLUMNS = ("test/macro_f1", "test/recall_N", "test/recall_OB", "test/recall_BB",
           "test/precision_BB")
HEADERS = ["Side", "Condition", "Macro-F1", "Recall N", "Recall OB", "Recall BB", "Precision BB"]
SIDES = ("clean", "evaluation", "training")
EVAL_ORDER = ("—", "P", "M", "P+M", "SH", "RM", "P+RM")
TRAIN_ORDER = ("P+F", "P+S", "SH", "P+F+SH", "P+S+SH", "RM", "P+RM")
FIGURES = ("confusion_matrix*.png", "attribution_heatmap*.png", "faithfulness*.png",
           "representation_shift*.png")
LEXICON_TOP = 10


def claims(run: Run) -> bool:
    """Corpus runs only: an evaluate run on human-labelled data is External validity's (a train
    run stays whatever it trained on: its test/* is in-distribution)."""
    if run.task == "evaluate" and is_gold(run):
        return False
    return run.task in ("train", "evaluate") and "test/macro_f1" in run.metrics


def side_and_code(run: Run) -> tuple[str, str]:
    """(side, short code) of a run, e.g. ("evaluation", "P+M")."""
    node = run.settings.intervention or {}
    try:
        code = code_for(steps_from_config(node))   # also right for list syntax [a,b]
    except ConfigError:
        code = str(node.get("code") or node.get("name") or "?")
    if run.task == "evaluate":
        return "evaluation", code
    return ("clean" if code == "—" else "training"), code


def _sort_key(key: tuple) -> tuple:
    side, code, model = key
    order = EVAL_ORDER if side == "evaluation" else TRAIN_ORDER
    return (SIDES.index(side), order.index(code) if code in order else len(order), code, model)


def lexicon_table(runs: Sequence[Run]) -> Table | None:
    """The top cue words per class of the clean baselines' lexicons (first baseline shown)."""
    for run in runs:
        path = run.path / "cue_lexicon.json"
        if side_and_code(run)[0] == "clean" and path.is_file():
            lexicon = read_json(path, expected="the cue_lexicon.json a training run wrote")
            classes = list(lexicon)
            rows = [[i + 1] + [f"{lexicon[c][i]['word']} ({lexicon[c][i]['score']:.3g})"
                               if i < len(lexicon[c]) else "" for c in classes]
                    for i in range(LEXICON_TOP)]
            return Table(f"Cue lexicon of {run.name} (top {LEXICON_TOP} per class, rollout)",
                         ["rank", *classes], rows)
    return None


def model_of(run: Run, by_path: dict[Path, Run]) -> str:
    """The model a run tested: its own choice when it trained, the checkpoint's when it only
    evaluated (evaluate.py's ``model`` group is not the checkpoint's architecture)."""
    if run.task != "evaluate":
        return run.choices.get("model", "")
    ckpt = run.settings.ckpt
    if not ckpt:
        return run.choices.get("model", "")
    source = by_path.get(Path(str(ckpt)).resolve())
    return source.choices.get("model", "") if source else Path(str(ckpt)).name


def render(runs: Sequence[Run], context: Context) -> SectionOutput:
    by_path = {r.path.resolve(): r for r in runs}
    model_by_run = {r.path: model_of(r, by_path) for r in runs}
    groups = by_condition(runs, lambda r: (*side_and_code(r), model_by_run[r.path]))
    models = {k[2] for k in groups}
    headers = HEADERS[:2] + (["Model"] if len(models) > 1 else []) + HEADERS[2:]
    rows = []
    for key in sorted(groups, key=_sort_key):
        members = groups[key]
        reps = [context.replicates(r, "predictions.parquet", "classification",
                                   lambda f, n, s: classification_replicates(f, "test", n, s),
                                   wanted)
                for r in members]
        cells = [context.cell(members, m, reps) for m in COLUMNS]
        rows.append([marked(key[0], members[0].record), key[1]]
                    + ([key[2]] if len(models) > 1 else []) + cells)
    table = Table("Table 4: macro-F1, per-class recall and BB precision on the test set", headers,
                  rows, note="Cells: mean ± std over seeds (n), [95% bootstrap interval over "
                  "the test dialogues, matched triplets resampled together]. Evaluation side: "
                  "the frozen baseline on an edited test set; training side: retrained on "
                  "edited data, tested clean. RM and P+RM are the random-mask controls of M "
                  "and P+M.")
    out = SectionOutput(KEY, TITLE, tables=[table])
    lexicon = lexicon_table(runs)
    if lexicon is not None:
        out.tables.append(lexicon)
    out.figures = figures_of(sorted(runs, key=lambda r: _sort_key(
        (*side_and_code(r), model_by_run[r.path]))), FIGURES,
        lambda r: "{} {}".format(*side_and_code(r)))
    return out
