"""benevaudit: auditing bias in multi-turn human-agent dialogue.

Importing the package is cheap: heavy libraries (torch, transformers, vllm, captum, wandb)
are imported inside the modules that need them.
"""

__version__ = "0.1.0"
