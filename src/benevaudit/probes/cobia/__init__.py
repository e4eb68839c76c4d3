"""CoBia: constructed-conversation attacks that make a chat model appear to have already endorsed
a stereotype, then ask it to continue (Nikeghbal, Kargaran and Diesner, EMNLP 2025).

``release`` finds the files (a clone of the release or a flat folder); ``dataset`` reads them
and pairs each (group, descriptor) with a second descriptor; ``official`` fills the release's
templates, ``attacks`` builds benevaudit's seeded HCC, SCC and baselines; ``release_raters``
reads the release's raters from its notebooks; ``raters`` asks rater models (the entries of
``probe.judges``) and parses their verdicts, ``rating`` builds what each rater is asked;
``scoring`` turns verdicts into bias rates, UCC and rater agreement. ``options`` checks what a ``probe`` block chooses, and
``probe`` runs the whole protocol as one :class:`~benevaudit.probes.base.Probe`.
"""
