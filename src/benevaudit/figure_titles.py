"""Titles that stay inside their figure.

A title is centred over its axes (a suptitle over the figure), so a run id or a long model path
runs off both edges of a small figure and ``tight_layout`` cannot help: it moves axes, never
text. :func:`fit_titles` measures every title as drawn and re-wraps it at word boundaries until
it fits the room on either side of its centre, then lays the figure out again for the taller
titles.
"""

from __future__ import annotations

import textwrap
from typing import Any

PAD_PX = 4.0  # kept clear of the figure's edge


def titles_of(fig: Any) -> list[Any]:
    """Every title Text of a figure: each axes' centre, left and right titles and the suptitle."""
    texts = [t for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title)]
    if fig._suptitle is not None:
        texts.append(fig._suptitle)
    return [t for t in texts if t.get_text()]


def _rewrap(text: str, width: int) -> str:
    """Each line wrapped to ``width`` characters at spaces; a longer word (a run id) is split."""
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) or line
                     for line in text.split("\n"))


def _fit(title: Any, fig: Any, renderer: Any) -> bool:
    """Narrow one title until its extent lies within the figure (or no narrower wrap exists);
    True when it was re-wrapped."""
    right_edge = fig.bbox.width - PAD_PX
    changed = False
    for _ in range(12):
        box = title.get_window_extent(renderer)
        if box.x0 >= PAD_PX and box.x1 <= right_edge:
            return changed
        centre = (box.x0 + box.x1) / 2
        room = 2 * max(min(centre - PAD_PX, right_edge - centre), 1.0)   # px, symmetric
        text = title.get_text()
        longest = max(len(line) for line in text.split("\n"))
        width = max(int(longest * room / box.width) - 1, 8)
        wrapped = _rewrap(text, width)
        if wrapped == text:
            return changed
        title.set_text(wrapped)
        changed = True
    return changed


def fit_titles(fig: Any) -> None:
    """Wrap every title of ``fig`` to fit its width, then lay the figure out for them (a new
    layout moves the axes, and with them the titles' centres, so until nothing changes)."""
    renderer = fig.canvas.get_renderer()
    for _ in range(3):
        fig.tight_layout()
        if not any([_fit(title, fig, renderer) for title in titles_of(fig)]):
            return
    fig.tight_layout()
