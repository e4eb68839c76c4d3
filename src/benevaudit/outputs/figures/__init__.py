"""Figures as PNG files, one module per study section; each function takes plain tables and
writes one file, so a run and a report draw the same picture from the same numbers."""
