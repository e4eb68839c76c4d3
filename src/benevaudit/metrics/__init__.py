"""Every number a run reports, defined once: count rates over ``[..., K]`` tables (``rates``), the
one bootstrap engine (``resample``), classification, detection, fairness (GUS, PRAG*, SNSR),
agreement, Wilson intervals, flips, linguistic markers, lexical diversity and the word error
rate of transcripts (``wer``).

Room ``metrics`` (layer 2) may import the core, ``llm``, ``encoders`` and ``asr``; it takes
plain arrays and tables, never a config block, so the families, the run outputs and the report
all compute the same figure the same way.
"""
