"""CoBia: constructed-conversation attacks that make a chat model appear to have already endorsed
a stereotype, then ask it to continue (Nikeghbal, Kargaran and Diesner, EMNLP 2025).

``release`` finds the files (a clone of the release or a flat folder); ``dataset`` reads them
and pairs each (group, descriptor) with a second descriptor; ``official`` fills the release's
templates, ``attacks`` builds benevaudit's seeded HCC, SCC and baselines; ``release_judges``
reads the release's judges from its notebooks; ``judges`` asks judge models and parses their
verdicts, ``rating`` builds what each judge is asked; ``scoring`` turns verdicts into bias
rates, UCC and judge agreement. ``options`` checks what a ``probe`` block chooses, and
``probe`` runs the whole protocol as one :class:`~benevaudit.probes.base.Probe`.
"""
