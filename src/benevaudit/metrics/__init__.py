"""Every number a run reports, defined once: count rates over ``[..., K]`` tables (``rates``), the
one bootstrap engine (``resample``), classification, detection, fairness (GUS, PRAG*, SNSR),
agreement, Wilson intervals, flips, linguistic markers, lexical diversity, the word error
rate of transcripts (``wer``), rates corrected for a judge's error (``correction``), paired
tests of two runs with Holm's adjustment (``paired``) and sample sizes (``power``).

Room ``metrics`` (layer 2) may import the core, ``llm``, ``encoders`` and ``asr``; it takes
plain arrays and tables, never a config block, so the families, the run outputs and the report
all compute the same figure the same way.
"""
