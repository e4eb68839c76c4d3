"""What a trained model's audit leaves in its run directory (:mod:`benevaudit.audit.model_audit`):
the cue lexicons (``cue_lexicon.json``, ``cue_lexicon_<method>.json``), the faithfulness curves
(``faithfulness.png``), the relevance heatmaps of the dialogues it shows
(``attribution_heatmap.html``, ``.png`` for the first few) and the representation shift
(``representation_shift.png``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from benevaudit.audit.attribution.faithfulness import plot_curves
from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.heatmap import heatmap_html, heatmap_png, titled
from benevaudit.audit.attribution.suite import AttributionAudit
from benevaudit.files import write_text_atomically
from benevaudit.plotting import write_png
from benevaudit.outputs.predictions import save_lexicon
from benevaudit.schema import Dialogue
from benevaudit.audit.model_audit import ModelAudit
from benevaudit.audit.representation import plot_shift

log = logging.getLogger(__name__)


def write_heatmap(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                  path: str | Path, title: str = "Attribution heatmap",
                  run: str | None = None) -> Path:
    """The HTML heatmap of the dialogues at ``path``; the title names the run (``run``, else
    the directory the file is written to)."""
    path = Path(path)
    return write_text_atomically(path, heatmap_html(dialogues, attributions,
                                                    titled(title, path, run)))


def write_heatmap_png(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                      path: str | Path, title: str = "Attribution heatmap", width: int = 100,
                      run: str | None = None) -> Path:
    """The PNG heatmap of the dialogues at ``path``; the title names the run (``run``, else
    the directory the file is written to)."""
    path = Path(path)
    return write_png(path, heatmap_png(dialogues, attributions, titled(title, path, run), width))


def write_heatmaps(audit: AttributionAudit, run_dir: Path, png_dialogues: int) -> None:
    """``attribution_heatmap.html`` for every shown dialogue, ``.png`` for the first few."""
    if not audit.shown:
        return
    write_heatmap(audit.shown, audit.attributions, run_dir / "attribution_heatmap.html",
                  title=f"{audit.method} relevance")
    k = min(len(audit.shown), png_dialogues)
    if k:
        write_heatmap_png(audit.shown[:k], audit.attributions[:k],
                          run_dir / "attribution_heatmap.png",
                          title=f"{audit.method} relevance (red: for the explained class, "
                                "blue: against; light italics: truncated)")


def write_attribution(run_dir: Path, audit: AttributionAudit, png_dialogues: int) -> None:
    """The lexicons, the faithfulness curves and the heatmaps of one attribution audit."""
    for name, lexicon in audit.lexicons.items():
        save_lexicon(lexicon, run_dir / name)
    if audit.faithfulness is not None:
        write_png(run_dir / "faithfulness.png",
                  plot_curves(audit.faithfulness, run_dir.resolve().name))
    write_heatmaps(audit, run_dir, png_dialogues)


def write_model_audit(run_dir: Path, made: ModelAudit, png_dialogues: int) -> dict[str, float]:
    """Everything the model's audit found, written; its metrics back, for ``metrics.json``."""
    write_attribution(run_dir, made.attribution, png_dialogues)
    if made.shift is not None:
        write_png(run_dir / "representation_shift.png",
                  plot_shift(made.shift, run_dir.resolve().name))
    log.info("cue lexicon: %s", run_dir / "cue_lexicon.json")
    return made.metrics
