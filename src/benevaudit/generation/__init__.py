"""benevaudit.generation: writing BenevDial-style corpora.

- ``grid``: the 362,880 generation conditions and their stable ids;
- ``scripted`` (+ ``topics``, ``agent_phrases``, ``user_phrases``): the no-model generator;
- ``embedded``: the cached stratified scripted sample behind ``data=embedded``;
- ``prompts``, ``parse``, ``llm_generator``: generation with any ``benevaudit.llm`` chat model;
- ``producers``: a ``generator`` config block checked and built into a producer;
- ``driver``, ``writer``, ``card``: the resumable shard writer, retries, failures, dataset card.
"""
