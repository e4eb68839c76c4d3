"""``inspect eval benevaudit/detection``: benevaudit's detection sweep over an evaluation set,
scored with benevaudit's detection metrics, in one of two ways (``-T scorer=``).

The task composes the block ``python detect.py`` would read (``data``, ``detector``, ``eval``,
with the ``-T`` arguments as overrides) and takes the evaluation set detect.py draws
(``evaluation_dialogues``: ``eval.fraction`` and ``eval.limit`` of the corpus, a gold set or a
probe run's replies). Under ``scorer=model`` (the default) the model under test is an LLM judge
of ``conf/detector/``: each dialogue is one sample whose input is the judge's prompt under the
detector's strategy (``judge_prompt``, the reasoned form of ``mode: generate``), decoded with
the detector's sampling. The scorer reads the reply's label with the judge's parser and decides
the dialogue as ``JudgeDetector`` does (one judge: the model under test); the metric is
``score_frame`` over the predictions (``binary/*``, ``trigger/*``, ``test/*``,
``detect/invalid_rate``), so on the same replies it gives what ``python detect.py`` gives. Under
``scorer=detector`` any detector scores each sample's transcript (``detector_scoring``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from benevaudit.detectors.judge_prompts import judge_prompt, parse_label
from benevaudit.detectors.base import UnitVerdict, predictions_frame
from benevaudit.detectors.judges import JudgeDetector, verdict_from_probs
from benevaudit.detectors.spec import JudgeSpec
from benevaudit.detectors.units import make_units
from benevaudit.inspect_tasks import convert
from benevaudit.inspect_tasks.arguments import overrides
from benevaudit.inspect_tasks.detector_scoring import detector_task
from benevaudit.inspect_tasks.scores import Rows, rates_metric
from benevaudit.llm import Sampling
from benevaudit.outputs.detection import score_frame
from benevaudit.pipelines.detect import DetectRun, evaluation_dialogues
from benevaudit.pipelines.inspect_config import detect_run
from benevaudit.schema import CLASSES, Dialogue

HEADLINE = ("",)                       # every key of score_frame
JUDGE = "model"                        # the judge's name: the model under test
KEPT = ("id", "label", "flagged", "pred")   # what score_frame reads of a prediction
SCORERS = ("model", "detector")     # who decides: the model under test as the judge, a detector


def detection(detector: str = "judge_plain", data: str = "embedded",
              data_path: str | None = None, limit: int | None = None,
              options: str | Sequence[str] | None = None, scorer: str = "model",
              generate: bool = False) -> Any:
    """The detection sweep on ``data`` (a ``conf/data/`` option; ``data_path`` its path),
    ``limit`` dialogues (``eval.limit``), ``options`` any detect.py override. ``scorer=model``:
    the model under test is the judge ``detector``; ``scorer=detector``: the detector scores
    each transcript (the corpus's dialogue, or under ``generate`` the model's reply to it)."""
    if scorer not in SCORERS:
        raise ValueError(f"benevaudit/detection: scorer={scorer}; expected one of {SCORERS}")
    if generate and scorer == "model":
        raise ValueError("benevaudit/detection: generate=true needs scorer=detector (under "
                         "scorer=model the model under test is the judge)")
    forced = ["detector.mode=generate"] if scorer == "model" else []
    run, cfg, _ = detect_run([f"data={data}", *forced, *overrides(
        "detector", detector, "data.path", data_path, limit, options)])
    chosen, _ = evaluation_dialogues(cfg, run)
    if scorer == "detector":
        return detector_task(run, chosen, f"detection_{data}", bool(generate))
    return judge_task(run, chosen, data, detector)


def judge_task(run: DetectRun, chosen: list[Dialogue], data: str, detector: str) -> Any:
    """The task whose model under test is the judge: its prompt as each sample's input."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    spec = run.detector
    if not isinstance(spec, JudgeSpec) or spec.mode != "generate":
        raise ValueError(f"benevaudit/detection: scorer=model runs an LLM judge detector in "
                         f"mode generate (judge_plain, judge_conceptual, judge_operational), "
                         f"not detector={detector} (kind {spec.kind}); score with any detector "
                         f"under scorer=detector")
    judge = JudgeDetector(spec, [(JUDGE, refuse_loading)])
    samples = [Sample(id=d.id, input=convert.chat_messages(judge_prompt(
        d, spec.strategy, spec.demographics, reasoned=True)), metadata={"label": d.label})
        for d in chosen]
    s = spec.sampling
    sampling = Sampling(temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens,
                        seed=s.seed)
    return Task(dataset=MemoryDataset(samples, name=f"detection_{data}"),
                solver=convert.seeded_generate(sampling),
                scorer=label_reader(judge, {d.id: d for d in chosen}),
                config=convert.generate_config(sampling), name="detection")


def refuse_loading() -> Any:
    """The judge's model in Inspect is the model under test: nothing is loaded here."""
    raise RuntimeError("benevaudit/detection asks Inspect's model, never a benevaudit backend")


def unit_verdict(reply: str) -> UnitVerdict:
    """The judge's reading of its reply, as ``JudgeDetector.judge_units`` reads it."""
    label = parse_label(reply)
    if label is None:
        return UnitVerdict.invalid(reply)
    return verdict_from_probs([float(c == label) for c in CLASSES], reply)


def prediction(judge: JudgeDetector, dialogue: Dialogue, reply: str) -> dict[str, Any]:
    """The dialogue's row of ``predictions.parquet`` (the columns the metrics read)."""
    result = judge.combine(dialogue, make_units(dialogue, "dialogue")[0],
                           {JUDGE: unit_verdict(reply)})
    row = predictions_frame([dialogue], [result], judge.name).iloc[0]
    return {k: (None if pd.isna(row[k]) else row[k].item() if hasattr(row[k], "item")
                else row[k]) for k in KEPT}


def frame_metrics(rows: Rows) -> dict[str, float]:
    """``score_frame`` of the predictions."""
    frame = pd.DataFrame(rows, columns=list(KEPT))
    frame["flagged"] = frame["flagged"].astype("boolean")
    return score_frame(frame)


def label_reader(judge: JudgeDetector, dialogues: dict[str, Dialogue]) -> Any:
    """The scorer: the reply's label, the dialogue decided; the prediction kept for the
    metric."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.scorer import Score, scorer

    metric = rates_metric("detection", frame_metrics, HEADLINE)

    @scorer(metrics=[metric], name="benevaudit/detection_judge")
    def judge_scorer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            reply = state.output.completion if state.output else ""
            row = prediction(judge, dialogues[str(state.sample_id)], reply)
            return Score(value=str(row["pred"] or "invalid"), answer=reply,
                         metadata={"row": row, "biased": row["flagged"]})
        return score
    return judge_scorer()
