"""Relevance heatmaps: dialogues word by word, each agent word shaded by its attribution
relevance, so a reader can check a lexicon against the text it came from. Two views of the
same shading: a self-contained HTML page (hover for values) and a PNG for papers and
notebooks. User turns are printed in grey (they are not attributed); agent words that were cut
by truncation have no relevance and are left unshaded.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from matplotlib.patches import Rectangle

from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.plotting import plt, png
from benevaudit.schema import CLASSES, Dialogue
from benevaudit.text import SPEAKER_PREFIX, Span, word_spans

_STYLE = """body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.7}
.d{border:1px solid #ccc;border-radius:6px;padding:.8em 1em;margin:1.2em 0}
.h{font-size:.9em;color:#333;margin-bottom:.5em}.user{color:#999}.agent{color:#111}
.t{margin:.2em 0}.cut{color:#bbb;font-style:italic}.s{font-weight:600;margin-right:.4em}
.w{border-radius:3px;padding:0 1px}"""


def shade(value: float, scale: float) -> str:
    """Background colour for a relevance: red for positive, blue for negative, alpha by size."""
    alpha = 0.0 if scale <= 0 else min(abs(value) / scale, 1.0)
    rgb = "220,40,40" if value >= 0 else "40,90,220"
    return f"rgba({rgb},{alpha:.3f})"


def turn_pieces(dialogue: Dialogue) -> list[list[tuple[str, Span | None]]]:
    """Each turn as its text in order: ``(text, span)`` for a word, ``(text, None)`` for what
    lies between words. Joining the texts gives the turn as the model read it (whitespace runs
    folded to one space), so "72-year-old" and "Okay." keep their spacing."""
    spans = word_spans(dialogue.turns)
    out: list[list[tuple[str, Span | None]]] = []
    offset = 0
    for i, turn in enumerate(dialogue.turns):
        body = " ".join(turn.text.split())
        base = offset + len(SPEAKER_PREFIX[turn.speaker])
        pieces: list[tuple[str, Span | None]] = []
        at = 0
        for s in (s for s in spans if s.turn == i):
            if s.start - base > at:
                pieces.append((body[at:s.start - base], None))
            pieces.append((body[s.start - base:s.end - base], s))
            at = s.end - base
        if at < len(body):
            pieces.append((body[at:], None))
        out.append(pieces)
        offset = base + len(body) + 1
    return out


def dialogue_html(dialogue: Dialogue, attribution: DialogueAttribution) -> str:
    """One dialogue as an HTML block; relevance is scaled to the dialogue's largest |value|."""
    rel = {(s.start, s.end): r for s, r in zip(attribution.spans, attribution.relevance)}
    scale = float(np.abs(attribution.relevance).max()) if len(attribution.relevance) else 0.0
    label = dialogue.label or "unlabelled"
    pred = CLASSES[attribution.pred]
    lines = [f'<div class="d"><div class="h">{html.escape(dialogue.id)} · label '
             f'<b>{label}</b> · predicted <b>{pred}</b> ({attribution.probs.max():.2f}) · '
             f'explained class <b>{CLASSES[attribution.target]}</b></div>']
    for turn, pieces in zip(dialogue.turns, turn_pieces(dialogue)):
        parts = []
        for text, s in pieces:
            word = html.escape(text)
            if s is None or turn.speaker != "agent":
                parts.append(word)
            elif (s.start, s.end) in rel:
                r = rel[(s.start, s.end)]
                parts.append(f'<span class="w" style="background:{shade(r, scale)}" '
                             f'title="{r:.3f}">{word}</span>')
            else:
                parts.append(f'<span class="cut">{word}</span>')  # truncated: not seen
        lines.append(f'<div class="t {turn.speaker}"><span class="s">[{turn.speaker}]</span>'
                     f'{"".join(parts)}</div>')
    lines.append("</div>")
    return "\n".join(lines)


def check_pairs(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                caller: str) -> None:
    """Each dialogue must come with its own attribution, in the same order."""
    if len(dialogues) != len(attributions):
        raise ValueError(f"{caller}: {len(dialogues)} dialogues but "
                         f"{len(attributions)} attributions")
    for d, a in zip(dialogues, attributions):
        if d.id != a.id:
            raise ValueError(f"{caller}: dialogue {d.id!r} paired with attribution {a.id!r}")


def titled(title: str, path: Path, run: str | None) -> str:
    """The title with the run it belongs to (by default the run directory holding the file)."""
    name = run if run is not None else path.resolve().parent.name
    return f"{title} · run {name}" if name and name not in title else title


def heatmap_html(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                 title: str) -> str:
    """One HTML page (inline CSS, no scripts or external assets) of the given dialogues."""
    check_pairs(dialogues, attributions, "heatmap_html")
    body = "\n".join(dialogue_html(d, a) for d, a in zip(dialogues, attributions))
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            "<p>Agent words shaded by relevance for the explained class (red: for, blue: "
            "against; hover for the value). User turns in grey; agent words the model did not see "
            f"(cut by head-and-tail truncation) in light grey italics.</p>\n{body}\n</body></html>\n")
    return page


class Placed(NamedTuple):
    """A word of the PNG view: its line and column (in characters) and relevance, if any."""

    line: int
    col: int
    word: str
    speaker: str
    relevance: float | None


def layout(dialogue: Dialogue, attribution: DialogueAttribution, width: int = 100) -> list[Placed]:
    """Lay a dialogue out in lines of at most ``width`` characters (monospace), keeping the
    text's own spacing: each turn starts a line with its ``[speaker]`` tag, lines wrap only
    where the text has a space, a space-free run longer than a line gets one of its own and is
    cut with an ellipsis. Agent words carry their relevance (None when they have none)."""
    rel = {(s.start, s.end): float(r) for s, r in zip(attribution.spans, attribution.relevance)}
    placed: list[Placed] = []
    line = -1
    for turn, pieces in zip(dialogue.turns, turn_pieces(dialogue)):
        line += 1
        tag = f"[{turn.speaker}]"
        placed.append(Placed(line, 0, tag, turn.speaker, None))
        col = len(tag) + 1
        for chunk in _chunks(pieces):
            size = sum(len(t) for t, _ in chunk)
            if col + min(size, width - 2) > width:
                line, col = line + 1, 2  # continuation lines are indented
            room = width - col
            for text, s in chunk:
                if room <= 0:
                    break
                if len(text) > room or (len(text) == room and size > room + 1):
                    text = text[: max(room - 1, 0)] + "…"   # a run longer than a line: cut
                if s is not None:
                    r = rel.get((s.start, s.end)) if turn.speaker == "agent" else None
                    placed.append(Placed(line, col, text, turn.speaker, r))
                col, room = col + len(text), room - len(text)
                if text.endswith("…"):
                    break
            col += 1
    return placed


def _chunks(pieces: list[tuple[str, Span | None]]) -> list[list[tuple[str, Span | None]]]:
    """Pieces grouped into space-free runs (a line may break only between runs)."""
    chunks: list[list[tuple[str, Span | None]]] = [[]]
    for text, s in pieces:
        if s is None:
            parts = text.split(" ")
            for k, part in enumerate(parts):
                if k > 0:
                    chunks.append([])
                if part:
                    chunks[-1].append((part, None))
        else:
            chunks[-1].append((text, s))
    return [c for c in chunks if c]


def heatmap_png(dialogues: Sequence[Dialogue], attributions: Sequence[DialogueAttribution],
                title: str = "Attribution heatmap", width: int = 100) -> bytes:
    """The HTML view's shading as one PNG, dialogues stacked; each dialogue scaled to its own
    largest |relevance| (red: for the explained class, blue: against). Agent words the model
    did not see (cut by truncation) are light grey italics."""
    check_pairs(dialogues, attributions, "heatmap_png")
    blocks = [(d, a, layout(d, a, width)) for d, a in zip(dialogues, attributions)]
    title_lines = textwrap.wrap(title, width) or [""]          # a long title wraps, never clips
    rows = sum(p[-1].line + 1 + 3 for _, _, p in blocks) + len(title_lines)  # + header, gaps
    inch_per_char, inch_per_line = 0.075, 0.19
    fig = plt.figure(figsize=(width * inch_per_char + 0.4, rows * inch_per_line + 0.3))
    ax = fig.add_axes((0.02, 0.0, 0.96, 1.0))
    ax.set_xlim(0, width)
    ax.set_ylim(rows, 0)
    ax.axis("off")
    # monospace glyphs advance 0.6 em: a font size that makes one character one x unit
    size = width * inch_per_char * 0.96 * 72 / (width * 0.6)
    text = dict(family="monospace", fontsize=size, va="center", ha="left")
    y = 0.5
    for line in title_lines:
        ax.text(0, y, line, fontweight="bold", **text)
        y += 1
    y += 0.5
    for d, a, placed in blocks:
        scale = float(np.abs(a.relevance).max()) if len(a.relevance) else 0.0
        ax.text(0, y, f"{d.id} · label {d.label or 'unlabelled'} · predicted "
                f"{CLASSES[a.pred]} ({a.probs.max():.2f}) · explained {CLASSES[a.target]}",
                color="#333", fontweight="bold", **text)
        y += 1
        for p in placed:
            if p.relevance is not None and scale > 0:
                alpha = min(abs(p.relevance) / scale, 1.0)
                colour = (0.86, 0.16, 0.16, alpha) if p.relevance >= 0 else (0.16, 0.35, 0.86, alpha)
                ax.add_patch(Rectangle((p.col - 0.1, y + p.line - 0.45), len(p.word) + 0.2, 0.9,
                                       facecolor=colour, edgecolor="none"))
            unseen = p.speaker == "agent" and p.col > 0 and p.relevance is None
            grey = p.speaker == "user" or p.col == 0
            ax.text(p.col, y + p.line, p.word, color="#bbb" if unseen else "#999" if grey else "#111",
                    style="italic" if unseen else "normal", **text)
        y += placed[-1].line + 1 + 1.5
    return png(fig, dpi=130, fit=False)   # its axes placed by hand: no layout
