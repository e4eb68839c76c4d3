"""Sequence classifiers as detectors: Regard, ToxiGen-HateBERT, BeaverTails (beaver-dam-7b).

All load through transformers' stock ``AutoModelForSequenceClassification`` with
``trust_remote_code=False``. beaver-dam-7b is a Llama backbone with a 14-label head whose
config declares ``problem_type: multi_label_classification``, which the stock
``LlamaForSequenceClassification`` reads: its categories are scored with a sigmoid each and a
unit is flagged when any category is above 0.5 (the study's threshold; PKU's moderation example
defaults to 0.4). As in that example, every input ends with the tokenizer's EOS token and is
truncated at 512 tokens (``append_eos``, ``max_length``): the head pools the last token, so the
EOS is what it reads. Single-label models (Regard, ToxiGen) use a
softmax and flag a unit when the arg-max label is a trigger label (``negative``, ``toxic``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from benevaudit.detectors.base import Detector, UnitVerdict
from benevaudit.detectors.registry import DETECTORS, BuildContext, DetectorKind
from benevaudit.detectors.spec import ClassifierSpec
from benevaudit.detectors.units import Unit, make_units
from benevaudit.errors import ConfigError
from benevaudit.llm.dry_run import RequestLog
from benevaudit.schema import Dialogue



def load_sequence_classifier(source: str, device: str = "cpu") -> tuple[Any, Any]:
    """(model, tokenizer) from a hub id or a local directory, or an error saying what to do."""
    # transformers is heavy and loads on first use
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(source,
                                                                   trust_remote_code=False)
    except OSError as err:
        offline = " (HF_HUB_OFFLINE=1: a hub id must already be cached)" \
            if os.environ.get("HF_HUB_OFFLINE") == "1" else ""
        raise ConfigError(f"cannot load classifier {source!r}{offline}: "
                          f"{str(err).splitlines()[0]}. Point detector.source at a local "
                          "directory with config.json, weights and tokenizer files.") from None
    if tokenizer.pad_token is None:  # Llama tokenizers ship none; the head pools the last token
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return model.to(device).eval(), tokenizer


class SequenceClassifierDetector(Detector):
    """Scores each unit's text with a sequence classifier, as its spec says:

        trigger: label names that flag a unit (after ``label_names`` renaming), or ``["any"]``
            for multi-label models: any label above ``threshold``.
        label_names: renames the checkpoint's labels (``LABEL_1: toxic``).
        text_format: how a unit becomes text; ``{user}`` and ``{agent}`` are filled in
            (BeaverTails: ``BEGINNING OF CONVERSATION: USER: {user} ASSISTANT:{agent}``).
        append_eos: end every text with the tokenizer's EOS token (BeaverTails).
        eos_token: that EOS as the option writes it out (for dry runs); checked against the
            tokenizer's.

    PKU's moderation code loads beaver-dam-7b's tokenizer with ``use_fast=False``. transformers
    5 has no slow Llama tokenizer (``AutoTokenizer`` ignores ``use_fast``) and builds the
    ``tokenizers`` form from the same ``tokenizer.model``; on these inputs (text that opens with
    ``BEGINNING OF CONVERSATION``, EOS appended) its ids equal sentencepiece's own encoding with
    BOS and EOS, which is what the slow tokenizer gives (tests/test_detectors_classifiers.py).
    """

    def __init__(self, spec: ClassifierSpec, multi_label: bool | None = None) -> None:
        import torch  # torch is heavy and loads on first use

        self.name, self.unit, self.aggregation = spec.name, spec.unit, spec.aggregation
        self.threshold = spec.threshold
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if spec.device == "auto" \
            else spec.device
        source = spec.source
        self.model, self.tokenizer = load_sequence_classifier(source, self.device)
        cfg = self.model.config
        self.labels = [spec.label_names.get(cfg.id2label[i], cfg.id2label[i])
                       for i in range(cfg.num_labels)]
        self.multi_label = (cfg.problem_type == "multi_label_classification"
                            if multi_label is None else multi_label)
        self.any_label = spec.trigger == ["any"]
        missing = [t for t in spec.trigger if t not in self.labels and not self.any_label]
        if missing:
            raise ConfigError(f"detector {spec.name}: trigger labels {missing} are not labels of "
                              f"{source} (its labels: {self.labels}); set detector.label_names")
        self.trigger_idx = list(range(len(self.labels))) if self.any_label else \
            [self.labels.index(t) for t in spec.trigger]
        self.text_format, self.max_length = spec.text_format, spec.max_length
        self.batch_size, self.append_eos = spec.batch_size, spec.append_eos
        self.check_eos(spec)
        # an appended EOS that is also the pad token would be skipped by last-token pooling:
        # such inputs run one at a time, unpadded, with no pad id for the head to skip
        tokenizer = self.tokenizer
        self.unpadded = self.append_eos and tokenizer.pad_token_id == tokenizer.eos_token_id
        if self.unpadded:
            self.model.config.pad_token_id = None

    def check_eos(self, spec: ClassifierSpec) -> None:
        """An appended EOS is the tokenizer's, and the one the option writes out (dry runs)."""
        eos = self.tokenizer.eos_token
        if spec.append_eos and not eos:
            raise ConfigError(f"detector {spec.name}: append_eos=true but {spec.source}'s "
                              "tokenizer has no EOS token")
        if spec.append_eos and spec.eos_token is not None and spec.eos_token != eos:
            raise ConfigError(f"detector.eos_token={spec.eos_token!r}, but {spec.source}'s "
                              f"tokenizer's EOS is {eos!r}: set detector.eos_token to it (or null)")

    def text(self, unit: Unit) -> str:
        text = self.text_format.format(user=unit.user_text, agent=unit.agent_text)
        return text + self.tokenizer.eos_token if self.append_eos else text

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """Per-label probabilities ``[N, L]``: sigmoid for multi-label heads, else softmax."""
        import torch  # torch is heavy and loads on first use

        step = 1 if self.unpadded else self.batch_size
        out = []
        for start in range(0, len(texts), step):
            batch = self.tokenizer(list(texts[start:start + step]), padding=True,
                                   truncation=True, max_length=self.max_length,
                                   return_tensors="pt").to(self.device)
            with torch.inference_mode():
                logits = self.model(**batch).logits.float()  # [B, L]
            probs = torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, -1)
            out.append(probs.cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.labels)))

    def score_units(self, units: Sequence[Unit]) -> list[UnitVerdict]:
        probs = self.probabilities([self.text(u) for u in units])  # [N, L]
        verdicts = []
        for row in probs:
            trig = row[self.trigger_idx]
            if self.multi_label:
                score, flag = float(trig.max()), bool((trig > self.threshold).any())
            else:
                score, flag = float(trig.sum()), int(row.argmax()) in self.trigger_idx
            verdicts.append(UnitVerdict(score, flag))
        return verdicts


def build_classifier(spec: ClassifierSpec, context: BuildContext) -> SequenceClassifierDetector:
    return SequenceClassifierDetector(spec)


def record_classifier(spec: ClassifierSpec, context: BuildContext,
                      dialogues: Sequence[Dialogue], request_log: RequestLog) -> None:
    """Each unit's text as the classifier's tokenizer would read it (no chat request)."""
    for d in dialogues:
        for k, u in enumerate(make_units(d, spec.unit)):
            request_log.record_text(spec.source, spec.text_format.format(
                user=u.user_text, agent=u.agent_text), spec.max_length,
                append_eos=spec.append_eos, eos_token=spec.eos_token, id=d.id,
                unit=k, detector=spec.name)


KIND = DetectorKind(build_classifier, record_classifier)
DETECTORS.add("sequence_classifier", ClassifierSpec, KIND)
