"""What the report's files hold: the table of ``runs.parquet``/``runs.csv`` (one row per run),
the text of ``report.md`` and of a self-contained ``report.html`` (figures inlined as base64,
inline CSS, no scripts, no network), a single file a user can mail.
"""

from __future__ import annotations

import base64
import html
import math
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from benevaudit.report.document import SectionOutput, Table
from benevaudit.report.runs import OK, Run

FIXED = ("run", "status", "reason", "task", "seed")
_CSS = """body{font-family:system-ui,sans-serif;max-width:75em;margin:2em auto;padding:0 1em;
color:#111}table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.88em}
th,td{border:1px solid #ccc;padding:.25em .55em;text-align:left;vertical-align:top}
th{background:#f2f2f2}caption{text-align:left;font-weight:600;padding:.3em 0}
figure{display:inline-block;margin:.5em 1em 1em 0;max-width:48%;vertical-align:top}
figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.82em;color:#444}
.note{font-size:.85em;color:#555}.problem td{background:#fff4f0}"""


def runs_frame(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per run: identity, status, config-group choices as columns, then every metric."""
    choice_keys = sorted({k for r in runs for k in r.choices if k not in FIXED})
    metric_keys = sorted({k for r in runs for k in r.metrics} - set(FIXED) - set(choice_keys))
    data: dict[str, list] = {c: [] for c in (*FIXED, "path", *choice_keys, *metric_keys)}
    for r in runs:
        data["run"].append(r.name)
        data["status"].append(r.status)
        data["reason"].append(r.reason)
        data["task"].append(r.task)
        data["seed"].append(r.seed)
        data["path"].append(str(r.path))
        for k in choice_keys:
            data[k].append(r.choices.get(k))
        for k in metric_keys:
            data[k].append(r.metrics.get(k, math.nan))
    frame = pd.DataFrame(data)
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


def problems(runs: Sequence[Run]) -> list[Run]:
    """Runs the tables could not use, or used with a caveat."""
    return [r for r in runs if r.status != OK or r.reason]


def _md_table(table: Table) -> list[str]:
    lines = [f"**{table.title}**", "", "| " + " | ".join(table.headers) + " |",
             "|" + "---|" * len(table.headers)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
              for row in table.text_rows()]
    return lines + ([f"", f"_{table.note}_"] if table.note else []) + [""]


def markdown(title: str, sections: Sequence[SectionOutput], runs: Sequence[Run],
             notes: Sequence[str], out: Path) -> str:
    """``report.md``: the same tables; figures linked by their path relative to ``out``."""
    lines = [f"# {title}", "", _summary(runs), ""]
    for s in sections:
        lines += [f"## {s.title}", ""] + ([s.intro, ""] if s.intro else [])
        for t in s.tables:
            lines += _md_table(t)
        for f in s.figures:
            lines += [f"![{f.caption}]({_rel(f.path, out)})", f"_{f.caption}_", ""]
    bad = problems(runs)
    if bad or notes:
        lines += ["## Runs left out or with caveats", ""]
        lines += [f"- `{r.name}` ({r.status}): {r.reason}" for r in bad]
        lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _rel(path: Path, out: Path) -> str:
    """``path`` as a link from ``out`` (both made absolute, without resolving links)."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(out))


def _summary(runs: Sequence[Run]) -> str:
    tasks: dict[str, int] = {}
    for r in runs:
        tasks[r.task] = tasks.get(r.task, 0) + 1
    ok = sum(r.status == OK for r in runs)
    per = ", ".join(f"{n} {t}" for t, n in sorted(tasks.items()))
    return f"{len(runs)} run directories ({per}); {ok} complete, {len(runs) - ok} left out."


def _html_table(table: Table, css_class: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                   for row in table.text_rows())
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return (f'<table class="{css_class}"><caption>{html.escape(table.title)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}")


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:image/png;base64,{data}"


def html_page(title: str, sections: Sequence[SectionOutput], runs: Sequence[Run],
              notes: Sequence[str]) -> str:
    """``report.html``: every figure embedded, so the file stands alone."""
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1><p>{html.escape(_summary(runs))}</p>"]
    for s in sections:
        parts.append(f"<section id='{html.escape(s.key)}'><h2>{html.escape(s.title)}</h2>")
        if s.intro:
            parts.append(f"<p>{html.escape(s.intro)}</p>")
        parts += [_html_table(t) for t in s.tables]
        for f in s.figures:
            parts.append(f"<figure><img src='{_img(f.path)}' alt='{html.escape(f.caption)}'>"
                         f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
        parts.append("</section>")
    bad = problems(runs)
    if bad or notes:
        rows = [[r.name, r.status, r.reason] for r in bad] + [["", "note", n] for n in notes]
        parts.append("<section id='problems'><h2>Runs left out or with caveats</h2>"
                     + _html_table(Table("Not used, or used with a caveat",
                                         ["run", "status", "reason"], rows), "problem")
                     + "</section>")
    parts.append("</body></html>\n")
    return "".join(parts)
