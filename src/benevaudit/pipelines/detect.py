"""``python detect.py``: a detector or LLM judge over an evaluation set (the study's Table 3).

``detector=<name>`` picks a config of ``conf/detector/``: a sequence classifier, a generative
guard, a prompted judge (``judges`` lists its models), the audit's own classifier
(``detector=finetuned ckpt=…``) or predictions made elsewhere (``detector=external
predictions.path=…``). Every run writes ``predictions.parquet`` (decisions and every unit's
score), ``metrics.json`` (``binary/*``, ``trigger/*``, ``detect/*``, ``test/*`` where a three-way
prediction exists), ``confusion_matrix.png``, and the bootstrap stability table and figure.
``flips.with=<run> flips.without=<run>`` instead compares two judge runs (Figure 4).
``data=probe_run data.path=<probe run>`` scores a probe run's replies, each with its
conversation (``replies``), and adds ``probe_run/<task>/turn_<k>/*`` (``outputs.probe_run``);
``data=inspect_log data.path=<log or folder>`` does the same for an Inspect AI run's replies.
``dry_run=true`` writes every request the run would send to ``requests.jsonl`` and loads no model;
with ``power.effect`` it also says how many dialogues per class a comparison needs.
"""

from __future__ import annotations

import logging
import time
from typing import Annotated, Optional, Union

import pandas as pd
from omegaconf import DictConfig
from pydantic import Field, model_validator

from benevaudit.audit import checkpoints
from benevaudit.detectors import (
    Checkpoint, Detector, build_detector, evaluation_set, reads_corpus,
)
from benevaudit.detectors.dry_run import record_detector
from benevaudit.detectors.spec import DetectorSpec, EvalSpec, JudgesSpec, PredictionsSpec
from benevaudit.encoders.models import set_offline_defaults
from benevaudit.files import check_located
from benevaudit.generation.embedded import data_files, load_dialogues
from benevaudit.generation.spec import CorpusDataSpec, EmbeddedDataSpec
from benevaudit.gold import DiaSafetyDataSpec, EdosDataSpec, LabelledDataSpec, is_gold
from benevaudit.llm.spec import ModelRun
from benevaudit.pipelines.config import completes, output_dir, run_logger, validated, write_metrics
from benevaudit.outputs.detection import write_bootstrap, write_detection, write_flips
from benevaudit.outputs.spec import FlipsSpec, StabilitySpec
from benevaudit.outputs.inputs import write_inputs
from benevaudit.outputs.power import PowerSpec, dry_run_power, planned_per_class
from benevaudit.outputs.probe_run import probe_columns, probe_run_metrics, unseen_summary
from benevaudit.outputs.tracking import finish_logger
from benevaudit.outputs.transfer import frame_transfer_metrics
from benevaudit.replies import (
    InspectLogDataSpec, ProbeRunDataSpec, inspect_log_files, probe_run_files, read_inspect_log,
    read_probe_run,
)
from benevaudit.schema import Dialogue

log = logging.getLogger(__name__)
# the data group's kinds, and a probe run's or an Inspect run's replies (read by detect.py alone)
DetectData = Annotated[Union[EmbeddedDataSpec, CorpusDataSpec, EdosDataSpec, DiaSafetyDataSpec,
                             LabelledDataSpec, ProbeRunDataSpec, InspectLogDataSpec],
                       Field(discriminator="kind")]
REPLIES = (ProbeRunDataSpec, InspectLogDataSpec)     # replies, each with its conversation


class DetectRun(ModelRun):
    """detect.py's config: the corpus, the detector and the judges group, the evaluation set,
    the trained classifier (``ckpt``) or the external predictions, the bootstrap, the flips."""

    data: DetectData
    detector: DetectorSpec
    judges: JudgesSpec
    eval: EvalSpec
    ckpt: Optional[str]
    predictions: PredictionsSpec
    bootstrap: StabilitySpec
    flips: FlipsSpec
    power: PowerSpec

    @model_validator(mode="after")
    def checkpoint_readable(self) -> DetectRun:
        if self.detector.kind == "finetuned" and self.ckpt:
            check_located("ckpt", checkpoints.locate(self.ckpt))
        return self


def evaluation_dialogues(cfg: DictConfig, run: DetectRun) -> tuple[list[Dialogue], int]:
    """(the evaluation set, the corpus size). A probe run's replies are scored all (``eval.limit``
    keeps the first N in seeded order): they are no corpus to cut a test share from."""
    if isinstance(run.data, REPLIES):
        replies = (read_probe_run(run.data) if isinstance(run.data, ProbeRunDataSpec)
                   else read_inspect_log(run.data))
        chosen = evaluation_set(replies, 1.0, run.eval.limit, run.eval.seed, by_dialogue=True)
        log.info("probe run replies: %d of %d scored (eval.fraction does not apply)",
                 len(chosen), len(replies))
        return chosen, len(replies)
    dialogues = load_dialogues(run.data, cfg.paths.cache_dir)
    chosen = evaluation_set(dialogues, run.eval.fraction, run.eval.limit, run.eval.seed,
                            by_dialogue=is_gold(run.data))
    log.info("evaluation set: %d of %d dialogues", len(chosen), len(dialogues))
    return chosen, len(dialogues)


def detector_of(run: DetectRun) -> Detector:
    """The run's detector, given what its kind reads: the judges group's models, the trained
    classifier (``ckpt``) or the predictions file."""
    checkpoint = (Checkpoint(run.ckpt, checkpoints.locate, checkpoints.load_frozen)
                  if run.ckpt else None)
    return build_detector(run.detector, run.judges.models, cache=run.llm_cache,
                          checkpoint=checkpoint, predictions=run.predictions, seed=run.seed)


def detect(run: DetectRun, chosen: list[Dialogue]) -> tuple[pd.DataFrame, float]:
    """(predictions frame, seconds of detection, the model's loading included)."""
    start = time.perf_counter()
    detector = detector_of(run)
    try:
        frame = detector.predictions(chosen, progress=run.progress)
    finally:
        detector.close()
    # a detector that reads its decisions from a file detected nothing here
    return frame, time.perf_counter() - start if reads_corpus(run.detector) else 0.0


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    set_offline_defaults()
    run = validated(DetectRun, cfg)
    out = output_dir(cfg)
    if run.flips.wanted:            # Figure 4 from two judge runs' predictions: no detection
        metrics = write_flips(str(run.flips.with_), str(run.flips.without), out)
        write_metrics(metrics, out / "metrics.json")
        return metrics
    name = run.detector.name
    # the corpus is read before any model is loaded, so a bad one fails first
    chosen, corpus_size = (evaluation_dialogues(cfg, run) if reads_corpus(run.detector)
                           else ([], None))
    dry = run.dry()
    if dry is not None:
        what = name + (f" on {len(chosen)} dialogues" if corpus_size is not None else "")
        metrics = dry.record(out, what, lambda requests: record_detector(
            run.detector, run.judges.models, chosen, run.ckpt, requests, run.predictions))
        metrics.update(dry_run_power(run.power, planned_per_class([d.label for d in chosen])))
        write_metrics(metrics, out / "metrics.json")
        return metrics
    # a probe run's replies, read here (a detector=external run reads its own file instead)
    replies = isinstance(run.data, REPLIES) and corpus_size is not None
    if corpus_size is not None:
        files = (probe_run_files(run.data) if isinstance(run.data, ProbeRunDataSpec)
                 else inspect_log_files(run.data) if isinstance(run.data, InspectLogDataSpec)
                 else data_files(run.data, cfg.paths.cache_dir))
        write_inputs(out, {"data": (run.data.kind, files)})
    logger = run_logger(cfg, out, f"detect-{name}-{out.name}")
    try:
        frame, seconds = detect(run, chosen)
        frame = probe_columns(frame, chosen) if replies else frame
        title = f"{name} · n={len(frame)}"
        metrics = write_detection(frame, out, title, seconds)
        metrics.update(frame_transfer_metrics(frame, run.seed))
        if replies:      # unlabelled: what the probe's judge called fair, seen by the detector
            metrics.update({**probe_run_metrics(frame), "detect/n": float(len(frame))})
            log.info("probe run replies: %s", unseen_summary(metrics))
        if run.bootstrap.enabled and (is_gold(run.data) or replies):
            log.info("bootstrap skipped: %s has no matched triplets to resample",
                     "a probe run" if replies else "a gold set")
        elif run.bootstrap.enabled:
            metrics.update(write_bootstrap(frame, run.bootstrap, corpus_size, out, title,
                                           run.seed))
        if logger:
            logger.log_metrics({k: v for k, v in metrics.items() if v == v})
        write_metrics(metrics, out / "metrics.json")
        return metrics
    finally:
        finish_logger(logger)
