"""``probe.py``: one entrypoint for every probe; ``probe.family`` (and FairDialogue's
``probe.kind``) picks it from ``probes.registry``.

Compose, validate the run spec (``ProbeRun``), build the probe from its ``probe`` block, run it
over the target, write the run directory: ``responses.parquet``, ``metrics.json``, the probe's
tables and figures (and what the probe wrote as it went). ``dry_run=true`` runs it against recording models and keeps only
``requests.jsonl`` and the request counts in ``metrics.json`` (with ``power.effect``, the items
per arm a comparison needs beside them). ``probe.judge_validation.data`` names labelled items the
probe's judges are checked on in the same run (read here, before any model loads).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Optional

import pandas as pd
from omegaconf import DictConfig
from pydantic import model_validator

from benevaudit.files import write_atomically, write_text_atomically
from benevaudit.asr.spec import AsrSpec
from benevaudit.detectors.evaluation import evaluation_set
from benevaudit.generation.embedded import data_files, load_dialogues
from benevaudit.probes.fairdialogue.wer_figure import wer_figure
from benevaudit.metrics.wer import wer_metrics
from benevaudit.errors import ConfigError
from benevaudit.llm.spec import ModelRun
from benevaudit.pipelines.config import (
    completes, group_choices, note_ran, output_dir, run_logger, validated, write_metrics,
)
from benevaudit.probes.base import ProbeResult, RunSettings
from benevaudit.probes.dry_run import record_probe
from benevaudit.probes.judge_validation import ValidationItem, validation_items
from benevaudit.probes.registry import ProbeSpec, build
from benevaudit.probes.spec import TargetSpec
from benevaudit.pipelines.rescore import RESPONSES, rescore_data, saved_rows, source_of
from benevaudit.pipelines.targets import audio_target_error
from benevaudit.outputs.inputs import add_inputs, write_inputs
from benevaudit.outputs.stand_in_files import write_stand_in
from benevaudit.plotting import write_png
from benevaudit.outputs.power import PowerSpec, dry_run_power, planned_probe_items
from benevaudit.outputs.spoken_replies import write_spoken_replies
from benevaudit.outputs.stimuli import write_stimuli
from benevaudit.outputs.tracking import finish_logger
from benevaudit.specs import PositiveInt

log = logging.getLogger(__name__)


class ProbeRun(ModelRun):
    """probe.py's config: the probe, the target it asks, ``limit``, and the ``asr`` that
    transcribes spoken replies."""

    probe: ProbeSpec
    target: TargetSpec
    limit: Optional[PositiveInt]
    asr: AsrSpec
    power: PowerSpec
    rescore: Optional[str]          # a probe run directory whose replies are judged again

    @model_validator(mode="after")
    def target_readable(self) -> ProbeRun:
        # scoring a CSV of answers, or rescoring saved replies, loads no target
        if self.probe.asks_target() and not self.rescore:
            self.target.llm.check_files("target.llm")
        return self

    @model_validator(mode="after")
    def target_hears(self) -> ProbeRun:
        """Audio mode asks a target that takes ``input_audio`` parts (``llm.audio_in``)."""
        if (self.probe.speaks() and self.probe.asks_target() and not self.rescore
                and not self.target.llm.audio_in):
            raise ConfigError(audio_target_error(self.target.name))
        return self


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    """Check the inputs, run the probe, write its run directory, and mirror its metrics to the
    logger (W&B offline by default: group = the sweep, job type = probe, the config-group
    choices)."""
    run, source = run_spec(cfg)
    probe, target, out = build(run.probe), run.target, output_dir(cfg)
    settings = RunSettings(out, run.seed, run.limit, run.progress, run.llm_cache, run.asr,
                           judge_items(run, cfg.paths.cache_dir, out), write_stand_in(out, probe))
    add_inputs(out, probe.inputs(settings))       # the release a probe reads, with its sha256
    if source is not None:                        # the replies rescored, with their sha256
        add_inputs(out, {"rescore": ("probe_run", [source / RESPONSES])})
    rows = saved_rows(source) if source is not None else None
    dry = run.dry()
    if dry is not None:
        made: list[ProbeResult] = []       # placeholder replies: only the stimuli are kept
        metrics = dry.record(settings.run_dir, f"probe {run.probe.family}",
                             lambda _: made.append(record_probe(probe, target, settings, rows)))
        write_stimuli(settings.run_dir, made[0].stimuli)    # the requests name them
        planned = planned_probe_items(settings.run_dir / "requests.jsonl", run.probe.family)
        metrics.update(dry_run_power(run.power, planned))
        write_metrics(metrics, settings.run_dir / "metrics.json")
        return metrics
    choices = group_choices()
    logger = run_logger(cfg, out, f"probe-{choices.get('probe', run.probe.family)}-{out.name}")
    try:
        started = time.perf_counter()
        result = (probe.run(target, settings) if rows is None else
                  probe.rescore(rows, target, settings))
        log.info("probe %s: %d rows in %.0f s", run.probe.family, len(result.rows),
                 time.perf_counter() - started)
        result.metrics.update(wer_metrics(result.rows))   # Whisper vs the API's transcripts
        if (draw := wer_figure(result.rows, run.target.name, run.seed)) is not None:
            result.figures["wer.png"] = draw
        write_run(out, result)
        note_ran(out, result.ran)
        if logger:
            logger.log_metrics({k: v for k, v in result.metrics.items() if v == v})
        return result.metrics
    finally:
        if logger:
            finish_logger(logger)


def run_spec(cfg: DictConfig) -> tuple[ProbeRun, Path | None]:
    """The run's spec, and the run directory it rescores (None: it asks the target). A
    rescore takes the recorded run's probe block (but its judge keys), target and limit."""
    if not cfg.get("rescore"):
        return validated(ProbeRun, cfg), None
    source = source_of(str(cfg.rescore))
    data = rescore_data(cfg, source, lambda now: build(ProbeRun.of(now).probe).judge_keys)
    log.info("rescore: the replies of %s, judged with this config's %s", source,
             build(ProbeRun.of(data).probe).judge_keys)
    return ProbeRun.of(data), source


def judge_items(run: ProbeRun, cache_dir: str, out: Path) -> tuple[ValidationItem, ...]:
    """``probe.judge_validation``'s items, read and drawn before any model loads: the labelled
    items with an agent turn, ``limit`` of them class-balanced as ``eval.limit`` draws them
    (by item, the run's seed). The files read go in ``inputs.json``."""
    spec = getattr(run.probe, "judge_validation", None)    # FairDialogue has no LLM judge
    if spec is None or spec.data is None:
        return ()
    dialogues = load_dialogues(spec.data, cache_dir)
    items = validation_items(evaluation_set(dialogues, 1.0, spec.limit, run.seed,
                                            by_dialogue=True))
    if not items:
        raise ConfigError(f"probe.judge_validation.data ({spec.data.kind}) holds no labelled "
                          "item (N, OB or BB) with an agent turn to check the judges on")
    write_inputs(out, {"judge_validation": (spec.data.kind, data_files(spec.data, cache_dir))})
    log.info("judge validation: %d of %d %s items (%s)", len(items), len(dialogues),
             spec.data.kind, ", ".join(f"{c} {sum(i.label == c for i in items)}"
                                       for c in ("N", "OB", "BB")))
    return tuple(items)


def write_run(out: Path, result: ProbeResult) -> None:
    """Audio mode's stimuli (``audio/``) and the target's spoken replies (``audio_out/``),
    ``responses.parquet`` that names them, ``metrics.json``, then the tables and figures, by
    file name (a name with a folder, ``annotation/key.csv``, gets its folder)."""
    write_stimuli(out, result.stimuli)
    write_spoken_replies(out, result.stimuli)
    frame = pd.DataFrame(result.rows)
    write_atomically(out / "responses.parquet", lambda tmp: frame.to_parquet(tmp, index=False))
    write_metrics(result.metrics, out / "metrics.json")
    for name, text in result.tables.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(out / name, text)
    for name, draw in result.figures.items():
        write_png(out / name, draw())
