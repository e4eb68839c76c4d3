"""FairDialogue: demographic-attribute tests of chat models in conversation (decision,
recommendation, negative feedback), one :class:`~benevaudit.probes.base.Probe` per task kind.

``render`` builds the conversations (text or audio mode), ``answers`` asks the target, and
``scoring`` computes GUS, PRAG*@K, SNSR/SNSV, RST and ANR; ``decision``, ``recommendation`` and
``feedback`` are the probe kinds.
"""
