"""benevaudit.audit: the fine-tuning audit of a classifier on a corpus (``train.py``,
``evaluate.py``, ``attribute.py``).

- ``spec``, ``attribution.spec``: the ``loader``, ``optim``, ``trainer``, ``callbacks``,
  ``intervention``, ``lexicon`` and ``attribution`` blocks;
- ``interventions``: the text edits P, M, SH, F, S and the random-mask control;
- ``datamodule``, ``module``, ``training``: fitting with Lightning; ``evaluation``,
  ``checkpoints``: a frozen classifier found, loaded and scored;
- ``attribution``, ``model_audit``, ``representation``, ``lexicon``: which words the trained
  model relies on (the cue lexicon, its second opinions, faithfulness) and where it puts the
  classes.

May import the core, ``llm``, ``encoders`` and ``metrics``; never another layer-3 family
(``generation``, ``detectors``, ``probes``), ``analysis``, ``report`` or ``pipelines``.
Its heatmaps it draws itself (``attribution.heatmap``); comparing runs is the report's.
"""
