"""The registry of study sections: one module per study in this package.

A section module defines ``KEY``, ``TITLE``, ``ORDER`` (its place in the report),
``claims(run) -> bool`` (is this run one of the study's?) and
``render(runs, context) -> SectionOutput | None``. Modules are found by listing the package, so
a new study adds one module and nothing else. A section renders whenever it claims a run.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from types import ModuleType

from benevaudit.report.context import Context
from benevaudit.report.document import SectionOutput
from benevaudit.report.runs import OK, Run

REQUIRED = ("KEY", "TITLE", "ORDER", "claims", "render")


def section_modules() -> list[ModuleType]:
    """Every section module, in report order; a module missing part of the contract is an error."""
    mods = []
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        missing = [a for a in REQUIRED if not hasattr(mod, a)]
        if missing:
            raise TypeError(f"report section {mod.__name__} lacks {missing}; a section module "
                            f"defines {list(REQUIRED)}")
        mods.append(mod)
    return sorted(mods, key=lambda m: (m.ORDER, m.KEY))


def render_sections(runs: Sequence[Run], context: Context) -> list[SectionOutput]:
    """Each section with the finished runs it claims; sections with no runs are left out."""
    done = [r for r in runs if r.status == OK]
    out = []
    for mod in section_modules():
        mine = [r for r in done if mod.claims(r)]
        if mine:
            rendered = mod.render(mine, context)
            if rendered is not None:
                out.append(rendered)
    return out
