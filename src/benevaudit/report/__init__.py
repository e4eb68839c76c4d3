"""The comparison of runs: ``report.py`` collects run directories (``runs``), sets each study's
section beside the others (``sections/``) with bootstrap intervals (``intervals``,
``probe_intervals``, ``fairdialogue_intervals``), and writes ``report.md``, ``report.html``,
``runs.parquet`` and an optional W&B Report.

Room ``report`` (layer 5) may import every room but ``pipelines``; what one run writes is
:mod:`benevaudit.outputs`, whose figures the report redraws from the same tables.
"""
