"""Relevance heatmaps: a self-contained HTML page showing dialogues word by word, each agent
word shaded by its attribution relevance, so a reader can check a lexicon against the text it
came from. User turns are printed in grey (they are not attributed); agent words that were cut
by truncation have no relevance and are left unshaded.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benevaudit.audit.attribution.words import DialogueAttribution
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import word_spans

_STYLE = """body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.7}
.d{border:1px solid #ccc;border-radius:6px;padding:.8em 1em;margin:1.2em 0}
.h{font-size:.9em;color:#333;margin-bottom:.5em}.user{color:#999}.agent{color:#111}
.t{margin:.2em 0}.s{font-weight:600;margin-right:.4em}.w{border-radius:3px;padding:0 1px}"""


def shade(value: float, scale: float) -> str:
    """Background colour for a relevance: red for positive, blue for negative, alpha by size."""
    alpha = 0.0 if scale <= 0 else min(abs(value) / scale, 1.0)
    rgb = "220,40,40" if value >= 0 else "40,90,220"
    return f"rgba({rgb},{alpha:.3f})"


def dialogue_html(dialogue: Dialogue, attribution: DialogueAttribution) -> str:
    """One dialogue as an HTML block; relevance is scaled to the dialogue's largest |value|."""
    rel = {(s.start, s.end): r for s, r in zip(attribution.spans, attribution.relevance)}
    scale = float(np.abs(attribution.relevance).max()) if len(attribution.relevance) else 0.0
    by_turn: dict[int, list] = {}
    for s in word_spans(dialogue.turns):
        by_turn.setdefault(s.turn, []).append(s)
    label = dialogue.label or "unlabelled"
    pred = CLASSES[attribution.pred]
    lines = [f'<div class="d"><div class="h">{html.escape(dialogue.id)} · label '
             f'<b>{label}</b> · predicted <b>{pred}</b> ({attribution.probs.max():.2f}) · '
             f'explained class <b>{CLASSES[attribution.target]}</b></div>']
    for i, turn in enumerate(dialogue.turns):
        parts = []
        for s in by_turn.get(i, []):
            word = html.escape(s.word)
            if turn.speaker == "agent" and (s.start, s.end) in rel:
                r = rel[(s.start, s.end)]
                parts.append(f'<span class="w" style="background:{shade(r, scale)}" '
                             f'title="{r:.3f}">{word}</span>')
            else:
                parts.append(word)
        lines.append(f'<div class="t {turn.speaker}"><span class="s">[{turn.speaker}]</span>'
                     f'{" ".join(parts)}</div>')
    lines.append("</div>")
    return "\n".join(lines)


def write_heatmap(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                  path: str | Path, title: str = "Attribution heatmap") -> Path:
    """Write one HTML file (inline CSS, no scripts or external assets) for the given dialogues."""
    if len(dialogues) != len(attributions):
        raise ValueError(f"write_heatmap: {len(dialogues)} dialogues but "
                         f"{len(attributions)} attributions")
    for d, a in zip(dialogues, attributions):
        if d.id != a.id:
            raise ValueError(f"write_heatmap: dialogue {d.id!r} paired with attribution {a.id!r}")
    body = "\n".join(dialogue_html(d, a) for d, a in zip(dialogues, attributions))
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            "<p>Agent words shaded by relevance for the explained class (red: for, blue: "
            f"against; hover for the value). User turns in grey.</p>\n{body}\n</body></html>\n")
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path
