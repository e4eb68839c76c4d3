"""Attribution: which words a fine-tuned classifier relies on, as a per-class cue lexicon.

- :mod:`.rollout` — gradient-weighted attention rollout (the study's method), batched;
- :mod:`.integrated_gradients` — Captum layer integrated gradients, a second opinion;
- :mod:`.logodds` — a model-free lexicon from the training data (log-odds, Dirichlet prior);
- :mod:`.dialogue` — one dialogue's attribution, as passes produce it and the store keeps it;
- :mod:`.words` — token → word relevance and the lexicon (:func:`compute_lexicon`);
- :mod:`.overlap` — Jaccard@k and Spearman between lexicons;
- :mod:`.faithfulness` — deletion curves and AOPC against a random control;
- :mod:`.store` — finished batches kept per model and settings, so a pass resumes;
- :mod:`.suite` — the whole audit of one model from its ``attribution`` block (:mod:`.spec`).

Importing this package stays cheap: torch and captum are imported inside the functions.
"""

from benevaudit.audit.attribution.overlap import agreement_metrics
from benevaudit.audit.attribution.dialogue import DialogueAttribution
from benevaudit.audit.attribution.faithfulness import evaluate_faithfulness
from benevaudit.audit.attribution.logodds import logodds_lexicon, logodds_scores
from benevaudit.audit.attribution.words import (
    METHODS,
    LexiconResult,
    attribute_dialogues,
    compute_lexicon,
)

__all__ = [
    "METHODS", "DialogueAttribution", "LexiconResult", "agreement_metrics", "attribute_dialogues",
    "compute_lexicon", "evaluate_faithfulness", "logodds_lexicon", "logodds_scores",
]
