"""One ``run(cfg)`` per entrypoint (train, evaluate, attribute, generate, analyze, detect, probe,
report): each validates its run spec (composed of the families' specs) and hands the typed
blocks to the families.

Room ``pipelines`` (layer 6, the top) may import every room, and is the only one that reads
Hydra or OmegaConf; nothing imports it but the entrypoint scripts.
"""
