"""FairMT-Bench (Fan et al., ICLR 2025): does fairness hold over five user turns with the
model's own replies in context? Six tasks in three stages, the fifth reply judged.

``release`` reads a clone of the release (never copied), ``scripts`` its prompts and rules
with ``ast``, ``stand_in`` writes a harmless stand-in in its layout, ``judging`` and
``answers`` judge replies (asked here or made elsewhere), ``scoring`` gives the rates and
``tables`` the table and the by-turn figure; ``probe`` is the :class:`Probe`.
"""
