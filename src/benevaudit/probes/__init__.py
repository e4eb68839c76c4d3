"""benevaudit.probes: one :class:`~benevaudit.probes.base.Probe` per probe kind (CoBia;
FairDialogue decision, recommendation and feedback; FairMT-Bench), built by ``registry.build``
from its typed ``probe`` spec (``spec.py``) and run over the target's spec; ``models`` loads
each distinct ``llm`` spec once. It may import the core modules and the llm, asr and metrics
rooms, never detectors, generation, audit, outputs, report or pipelines; one exception, the
``data`` group's spec (``generation.spec``), which ``probe.judge_validation.data`` reuses."""
