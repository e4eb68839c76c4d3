"""What one run writes beside its ``metrics.json``: a detect run's predictions, tables and
figures (:mod:`.detection`, drawn by :mod:`.figures`, its blocks typed in :mod:`.spec`), a probe
run's spoken stimuli and replies (:mod:`.stimuli`, :mod:`.spoken_replies`), ``generate.py``'s
resumable corpus folder (:mod:`.corpus_shards`), and the experiment logger every run mirrors its
metrics to (:mod:`.tracking`).

The comparison of many runs is :mod:`benevaudit.report`, which draws the same figures from the
same tables. This room may import the core, ``llm``, ``encoders``, ``metrics`` and the four
families (``audit``, ``generation``, ``detectors``, ``probes``); ``report`` and ``pipelines``
import it.
"""
