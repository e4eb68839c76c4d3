"""The W&B Report of a comparison: the report's tables as panels, runs grouped by choice.

Built in two steps so the part that matters can be checked offline: :func:`report_spec` turns
the report's sections into a plain specification (title, run filter, grouping, one bar-chart
panel per table column), and :func:`push` sends it through the pinned reports API
(``wandb-workspaces``), which needs an online W&B account. Runs find each other through the
``group`` (the sweep) and ``config.choices.<group>`` that every benevaudit run logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benevaudit.errors import DependencyError
from benevaudit.report.document import SectionOutput
from benevaudit.report.runs import OK, Run
from benevaudit.report.sections import section_modules

MAX_PANELS = 24    # per section: a study with many categories or groups stays readable


def _section_metrics(section: SectionOutput, runs: Sequence[Run] = ()) -> list[str]:
    """The metrics behind a section's panels: its table columns (Table 4, Table 3), else the
    metric names its patterns match in the runs it claims (CoBia's rates, FairDialogue's GUS,
    SNSR, SNSV, RST and ANR, the analysis effects)."""
    for mod in section_modules():
        if mod.KEY != section.key:
            continue
        if getattr(mod, "COLUMNS", ()):
            return list(mod.COLUMNS)
        patterns = getattr(mod, "PANELS", ())
        names = sorted({k for r in runs if mod.claims(r) for k in r.metrics
                        if any(p.match(k) for p in patterns)})
        return names[:MAX_PANELS]
    return []


def varying_choices(runs: Sequence[Run]) -> list[str]:
    """Config groups whose choice differs between the runs: what the comparison is about."""
    keys = sorted({k for r in runs for k in r.choices})
    return [k for k in keys if len({r.choices.get(k) for r in runs}) > 1]


def run_ids(run: Run) -> list[str]:
    """The W&B run ids of a run directory (``wandb/offline-run-<time>-<id>``, ``run-…``)."""
    folder = run.path / "wandb"
    if not folder.is_dir():
        return []
    return sorted({p.name.rsplit("-", 1)[-1] for p in folder.iterdir()
                   if p.is_dir() and p.name.startswith(("offline-run-", "run-"))})


def run_filter(runs: Sequence[Run]) -> str:
    """Exactly the report's runs: by W&B run id where the run directory holds its W&B run,
    else by the sweep group it was logged under (a single run without either cannot be
    selected and is left out rather than letting the filter match the whole project)."""
    ids_of = {r.path: run_ids(r) for r in runs}                 # each run directory read once
    ids = sorted({i for found in ids_of.values() for i in found})
    groups = sorted({r.sweep for r in runs if r.sweep and not ids_of[r.path]})
    parts = []
    if ids:
        parts.append("Metric('ID') in [" + ", ".join(f"'{i}'" for i in ids) + "]")
    if groups:
        parts.append("Metric('group') in [" + ", ".join(f"'{g}'" for g in groups) + "]")
    return " or ".join(parts)


def report_spec(sections: Sequence[SectionOutput], runs: Sequence[Run], project: str,
                entity: str | None, title: str) -> dict[str, Any]:
    """The Report as plain data: blocks of headings, markdown notes and panel grids."""
    done = [r for r in runs if r.status == OK]
    groupby = [f"config.choices.{k}" for k in varying_choices(done)] or ["group"]
    filters = run_filter(done)
    blocks: list[dict[str, Any]] = [{"type": "markdown", "text": (
        f"{len(done)} runs compared; grouped by {', '.join(groupby)}. Tables with intervals "
        "are in the offline report.html written next to this report.")}]
    for section in sections:
        blocks.append({"type": "h2", "text": section.title})
        for table in section.tables:
            blocks.append({"type": "markdown", "text": f"**{table.title}**. {table.note}".strip()})
        metrics = _section_metrics(section, done)
        if metrics:
            blocks.append({"type": "panel_grid",
                           "runset": {"project": project, "entity": entity, "filters": filters,
                                      "groupby": groupby},
                           "panels": [{"type": "bar", "title": m, "metrics": [m],
                                       "groupby": groupby[0]} for m in metrics]})
    return {"project": project, "entity": entity, "title": title,
            "description": "benevaudit comparison from run directories", "blocks": blocks}


def workspace_report(layout: dict[str, Any]) -> Any:
    """The Report's layout (:func:`report_spec`) as a ``wandb_workspaces`` Report object
    (built offline, not saved)."""
    try:
        import wandb_workspaces.reports.v2 as wr  # optional, only for the W&B report
    except ImportError as e:
        raise DependencyError("wandb.report=true needs the reports API: pip install "
                              "'wandb-workspaces==0.4.13'") from e
    blocks = []
    for b in layout["blocks"]:
        if b["type"] == "h2":
            blocks.append(wr.H2(text=b["text"]))
        elif b["type"] == "markdown":
            blocks.append(wr.MarkdownBlock(text=b["text"]))
        else:
            rs = b["runset"]
            runset = wr.Runset(entity=rs["entity"] or "", project=rs["project"],
                               filters=rs["filters"] or "", groupby=rs["groupby"])
            panels = [wr.BarPlot(title=p["title"], metrics=p["metrics"], groupby=p["groupby"])
                      for p in b["panels"]]
            blocks.append(wr.PanelGrid(runsets=[runset], panels=panels))
    return wr.Report(project=layout["project"], entity=layout["entity"] or "",
                     title=layout["title"], description=layout["description"], blocks=blocks)


def push(layout: dict[str, Any]) -> str:
    """Save the Report to W&B and return its URL (needs ``wandb login`` and network)."""
    report = workspace_report(layout)
    try:
        report.save()
    except Exception as e:  # noqa: BLE001 - the API raises plain Exception when not logged in
        raise DependencyError(f"W&B Report not saved ({e}); run `wandb login`, or write the local "
                              "report only with wandb.mode=offline") from e
    return str(report.url)


def offline_run_dirs(runs: Sequence[Run]) -> list[Path]:
    """The offline W&B mirrors (``<run>/wandb/offline-run-*``) of the runs, for ``wandb sync``."""
    return sorted(p for r in runs for p in (r.path / "wandb").glob("offline-run-*") if p.is_dir())


def sync_commands(runs: Sequence[Run]) -> list[str]:
    dirs = offline_run_dirs(runs)
    return [f"wandb sync {' '.join(str(d) for d in dirs)}"] if dirs else []
