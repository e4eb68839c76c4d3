"""What a model's attribution audit looks like: the relevance heatmaps of the dialogues it
shows (the audit itself is :mod:`benevaudit.audit.model_audit`)."""

from __future__ import annotations

from pathlib import Path

from benevaudit.audit.attribution.suite import AttributionAudit
from benevaudit.report.heatmap import write_heatmap, write_heatmap_png


def write_heatmaps(audit: AttributionAudit, out: Path, png_dialogues: int) -> None:
    """``attribution_heatmap.html`` for every shown dialogue, ``.png`` for the first few."""
    if not audit.shown:
        return
    write_heatmap(audit.shown, audit.attributions, out / "attribution_heatmap.html",
                  title=f"{audit.method} relevance")
    k = min(len(audit.shown), png_dialogues)
    if k:
        write_heatmap_png(audit.shown[:k], audit.attributions[:k], out / "attribution_heatmap.png",
                          title=f"{audit.method} relevance (red: for the explained class, "
                                "blue: against; light italics: truncated)")
