"""``inspect eval benevaudit/detection -T scorer=detector``: any detector of ``conf/detector/``
(a sequence classifier, a guard, a prompted judge or a judges group's ensemble, the audit's
fine-tuned classifier) as the task's scorer, applied to each sample's transcript.

Each dialogue of the evaluation set detect.py draws is one sample whose input is its turns (the
user's as user messages, the agent's as assistant messages). Without a solver the transcript is
the corpus's dialogue, so the detector decides what ``python detect.py`` decides (all of them in
one pass, as detect.py does) and the metric (``score_frame``, the per-judge, per-category and
transfer figures, over the predictions in the evaluation set's order) equals detect.py's
``metrics.json`` but for its timings and its bootstrap. Under ``generate`` the model under test
writes the agent's reply after the last user turn (decoded as Inspect's options say, each
request with its own seed) and the detector decides that transcript alone: the reply is new, so
the transcript is unlabelled (``detect/n_unlabelled``) and the metric adds
``detect/generated_flagged_rate`` and ``detect/generated_invalid_rate``.

The detector is built from the block ``python detect.py`` reads (its judges group, its
``ckpt``) when the first sample is scored, and decides under a lock (one model, shared by the
samples Inspect scores at once).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from dataclasses import replace
from typing import Any

import pandas as pd

from benevaudit.detectors import Detector, reads_corpus
from benevaudit.inspect_tasks import convert
from benevaudit.inspect_tasks.scores import Rows, rates_metric
from benevaudit.llm import Conversation, Sampling
from benevaudit.outputs.detection import category_metrics, per_judge_metrics, score_frame
from benevaudit.outputs.transfer import frame_transfer_metrics
from benevaudit.pipelines.detect import DetectRun, detector_of
from benevaudit.schema import CLASSES, Dialogue, Turn

HEADLINE = ("",)                        # every figure
KEPT = ("id", "label", "flagged", "pred", "stratum", "categories",
        *(f"prob_{c}" for c in CLASSES))          # what the metrics read of a prediction
ROLES = {"user": "user", "agent": "assistant"}


def messages_of(dialogue: Dialogue, generate: bool) -> Conversation:
    """The dialogue's turns as messages; under ``generate`` up to its last user turn."""
    turns = list(dialogue.turns)
    if generate:
        users = [k for k, t in enumerate(turns) if t.speaker == "user"]
        if not users:
            raise ValueError(f"benevaudit/detection: dialogue {dialogue.id} has no user turn "
                             "for the model to answer (generate=true)")
        turns = turns[:users[-1] + 1]
    return [{"role": ROLES[t.speaker], "content": t.text} for t in turns]


def transcript(dialogue: Dialogue, messages: list[Any], generated: bool) -> Dialogue:
    """The sample's transcript as the dialogue the detector decides: its user and assistant
    messages as turns; unlabelled where the model wrote the reply."""
    turns = tuple(Turn("user" if m.role == "user" else "agent", m.text) for m in messages
                  if m.role in ("user", "assistant"))
    return replace(dialogue, turns=turns, label=None if generated else dialogue.label)


def plain(value: Any) -> Any:
    """A predictions-frame cell as a plain value (numbers, lists, None for missing)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    return None if pd.isna(value) else value


class Decider:
    """The detector, built on the first transcript and shared by every sample. A transcript that
    is its corpus dialogue reads the decision of one pass over the whole evaluation set (as
    detect.py decides it: a classifier loaded once, batched); any other is decided alone."""

    def __init__(self, run: DetectRun, corpus: list[Dialogue]) -> None:
        self.run, self.corpus = run, {d.id: d for d in corpus}
        self.detector: Detector | None = None
        self.decided: dict[str, dict[str, Any]] | None = None     # the corpus's rows, by id
        self.lock = threading.Lock()

    def rows(self, dialogues: list[Dialogue]) -> list[dict[str, Any]]:
        """The dialogues' rows of ``predictions.parquet`` (the columns the metrics read)."""
        if self.detector is None:
            self.detector = detector_of(self.run)
            atexit.register(self.detector.close)
        frame = self.detector.predictions(dialogues)
        return [{k: plain(row[k]) for k in frame.columns if k in KEPT or k.startswith("pred_")}
                for _, row in frame.iterrows()]

    def row(self, dialogue: Dialogue) -> dict[str, Any]:
        """The transcript's row (one detector call at a time)."""
        with self.lock:
            if self.corpus.get(dialogue.id) != dialogue:
                return self.rows([dialogue])[0]
            if self.decided is None:
                corpus = list(self.corpus.values())
                self.decided = {d.id: r for d, r in zip(corpus, self.rows(corpus), strict=True)}
            return self.decided[dialogue.id]


def frame_of(rows: Rows, order: dict[str, int]) -> pd.DataFrame:
    """The scored rows in the evaluation set's order (as detect.py's frame)."""
    frame = pd.DataFrame(sorted(rows, key=lambda r: order[str(r["id"])]))
    frame["flagged"] = frame["flagged"].astype("boolean")
    return frame


def metrics_of(order: dict[str, int], seed: int, generated: bool) -> Any:
    """detect.py's figures of the predictions (and the share flagged under ``generate``)."""
    def computed(rows: Rows) -> dict[str, float]:
        frame = frame_of(rows, order)
        metrics = score_frame(frame)
        metrics.update(per_judge_metrics(frame))
        metrics.update(category_metrics(frame))
        metrics.update(frame_transfer_metrics(frame, seed))
        if generated:      # unlabelled: the share of the model's replies flagged
            valid = frame["flagged"].dropna()
            metrics.update({"detect/generated_flagged_rate": float(valid.mean()) if len(valid)
                            else float("nan"),
                            "detect/generated_invalid_rate": 1.0 - len(valid) / len(frame)})
        return metrics
    return computed


def detector_task(run: DetectRun, chosen: list[Dialogue], name: str, generate: bool) -> Any:
    """The task: the dialogues as samples, the detector as the scorer (the model under test
    replying first under ``generate``)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    if not reads_corpus(run.detector):
        raise ValueError(f"benevaudit/detection: detector={run.detector.name} reads its "
                         "predictions from a file, not the transcripts; run it via detect.py")
    samples = [Sample(id=d.id, input=convert.chat_messages(messages_of(d, generate)),
                      metadata={"label": d.label}) for d in chosen]
    # the reply is decoded as Inspect's options say (--temperature, --max-tokens), each request
    # with its own seed under the run's seed, as benevaudit's backends send it
    solver = convert.seeded_generate(Sampling(seed=run.seed)) if generate else []
    return Task(dataset=MemoryDataset(samples, name=name), solver=solver,
                scorer=detector_scorer(run, chosen, generate), name="detection")


def detector_scorer(run: DetectRun, chosen: list[Dialogue], generated: bool) -> Any:
    """The scorer: the detector's decision on the sample's transcript; the prediction kept for
    the metric."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.scorer import Score, scorer

    dialogues = {d.id: d for d in chosen}
    order = {d.id: k for k, d in enumerate(chosen)}
    decider = Decider(run, [] if generated else chosen)
    metric = rates_metric("detection", metrics_of(order, run.seed, generated), HEADLINE)

    @scorer(metrics=[metric], name="benevaudit/detector")
    def decide_scorer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            dialogue = transcript(dialogues[str(state.sample_id)], state.messages, generated)
            row = await asyncio.to_thread(decider.row, dialogue)
            return Score(value=str(row.get("pred") or {True: "flagged", False: "not_flagged"}
                                   .get(row["flagged"], "invalid")),
                         answer=dialogue.turns[-1].text if dialogue.turns else "",
                         metadata={"row": row, "biased": row["flagged"]})
        return score
    return decide_scorer()
