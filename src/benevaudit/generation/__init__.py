"""benevaudit.generation: writing BenevDial-style corpora (``generate.py``) and the ``data`` a
run reads.

- ``spec``: the ``data`` and ``generator`` blocks;
- ``grid``: the 362,880 generation conditions and their stable ids;
- ``scripted`` (+ ``topics``, ``agent_phrases``, ``user_phrases``): the no-model generator;
- ``embedded``: the cached stratified scripted sample behind ``data=embedded``;
- ``prompts``, ``parse``, ``llm_generator``, ``self_chat``: generation with any
  ``benevaudit.llm`` chat model;
- ``producers``: a ``generator`` block built into a producer;
- ``driver``, ``sink``, ``card``, ``dry_run``: the generation loop (retries, failures) into a
  ``CorpusSink`` the caller builds (``benevaudit.outputs.corpus_shards``: the resumable shard
  writer), the dataset card, and a dry run's requests.

May import the core, ``llm``, ``encoders`` and ``metrics``; never another layer-3 family, the
dataset analysis (``benevaudit.analysis``, which reads corpora written here), ``report`` or
``pipelines``.
"""
