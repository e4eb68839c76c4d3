"""benevaudit.analysis: how the classes of a generated corpus differ before any model sees them
(``analyze.py``).

- ``spec``: the ``markers``, ``mtld``, ``self_bleu``, ``vendi`` and ``annotation`` blocks;
- ``markers``: the corpus's size, per-dialogue markers and MTLD, Cohen's d between classes;
- ``diversity``: Self-BLEU and Vendi per generator × class and per class;
- ``annotation``, ``annotation_guide``: the blind subset, its written criteria and the κ of a
  returned sheet;
- ``tables``: the CSV files an analysis run writes.

May import the core, ``llm``, ``encoders``, ``metrics`` and ``generation`` (whose corpora and
criteria it reads); ``generation`` never imports it, and only ``pipelines`` does.
"""
