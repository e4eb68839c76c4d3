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

# the metric name behind each table column, per section (Table 4, Table 3, …)
def _section_metrics(section: SectionOutput) -> list[str]:
    from benevaudit.report.sections import section_modules

    for mod in section_modules():
        if mod.KEY == section.key:
            return list(getattr(mod, "COLUMNS", ()))
    return []


def varying_choices(runs: Sequence[Run]) -> list[str]:
    """Config groups whose choice differs between the runs: what the comparison is about."""
    keys = sorted({k for r in runs for k in r.choices})
    return [k for k in keys if len({r.choices.get(k) for r in runs}) > 1]


def run_groups(runs: Sequence[Run]) -> list[str]:
    """The W&B groups (sweeps) the runs were logged under, from their resolved configs."""
    return sorted({r.sweep for r in runs if r.sweep})


def report_spec(sections: Sequence[SectionOutput], runs: Sequence[Run], project: str,
                entity: str | None, title: str) -> dict[str, Any]:
    """The Report as plain data: blocks of headings, markdown notes and panel grids."""
    done = [r for r in runs if r.status == OK]
    groupby = [f"config.choices.{k}" for k in varying_choices(done)] or ["group"]
    groups = run_groups(done)
    filters = ("Metric('group') in [" + ", ".join(f"'{g}'" for g in groups) + "]") if groups else ""
    blocks: list[dict[str, Any]] = [{"type": "markdown", "text": (
        f"{len(done)} runs compared; grouped by {', '.join(groupby)}. Tables with intervals "
        "are in the offline report.html written next to this report.")}]
    for section in sections:
        blocks.append({"type": "h2", "text": section.title})
        for table in section.tables:
            blocks.append({"type": "markdown", "text": f"**{table.title}**. {table.note}".strip()})
        metrics = _section_metrics(section)
        if metrics:
            blocks.append({"type": "panel_grid",
                           "runset": {"project": project, "entity": entity, "filters": filters,
                                      "groupby": groupby},
                           "panels": [{"type": "bar", "title": m, "metrics": [m],
                                       "groupby": groupby[0]} for m in metrics]})
    return {"project": project, "entity": entity, "title": title,
            "description": "benevaudit comparison from run directories", "blocks": blocks}


def workspace_report(spec: dict[str, Any]) -> Any:
    """The specification as a ``wandb_workspaces`` Report object (built offline, not saved)."""
    try:
        import wandb_workspaces.reports.v2 as wr
    except ImportError as e:
        raise DependencyError("wandb.report=true needs the reports API: pip install "
                              "'wandb-workspaces==0.4.13'") from e
    blocks = []
    for b in spec["blocks"]:
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
    return wr.Report(project=spec["project"], entity=spec["entity"] or "", title=spec["title"],
                     description=spec["description"], blocks=blocks)


def push(spec: dict[str, Any]) -> str:
    """Save the Report to W&B and return its URL (needs ``wandb login`` and network)."""
    report = workspace_report(spec)
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
