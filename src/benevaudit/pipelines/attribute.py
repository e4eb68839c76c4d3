"""``python attribute.py ckpt=…``: the cue lexicon and attribution audit of any saved classifier.

Reuses the training run's data and split when ``ckpt`` points into a run directory, so the lexicon
is computed over the same test split that ``train.py`` would have used.
"""

from __future__ import annotations

from omegaconf import DictConfig

from benevaudit.audit.attribution.spec import AttributionSpec
from benevaudit.audit.model_audit import audit_model
from benevaudit.outputs.attribution import write_model_audit
from benevaudit.pipelines.config import completes, write_metrics
from benevaudit.pipelines.frozen import FrozenRun, open_frozen


class AttributeRun(FrozenRun):
    attribution: AttributionSpec      # run whatever its ``enabled`` says: asked for by name


@completes
def run(cfg: DictConfig) -> dict[str, float]:
    frozen = open_frozen(AttributeRun, cfg)   # every file and number, before any model work
    spec, out = frozen.spec, frozen.out
    made = audit_model(frozen.model, frozen.tokenizer, frozen.splits, spec.attribution,
                       spec.model, spec.seed, frozen.precision)
    metrics = write_model_audit(out, made, spec.attribution.heatmap_png_dialogues)
    write_metrics(metrics, out / "metrics.json")
    return metrics
