"""benevaudit.probes: one :class:`~benevaudit.probes.base.Probe` per probe kind (CoBia;
FairDialogue decision, recommendation and feedback), built by ``registry.build`` from a plain
``probe`` block."""
