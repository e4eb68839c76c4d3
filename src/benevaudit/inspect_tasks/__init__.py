"""benevaudit's studies inside Inspect AI: CoBia, FairMT-Bench, FairDialogue and the detection
sweep as Inspect tasks (``inspect eval benevaudit/<task>``), benevaudit's judges and detectors
as Inspect scorers, with Inspect's ``grader`` model roles as the judges.

Each task composes the block ``python probe.py`` (or ``detect.py``) would read, with its ``-T``
arguments as overrides (``pipelines.inspect_config``), and builds its samples with the probe's
own request builders, its judges' prompts and parsers, and its metrics, so an Inspect run sends
what benevaudit's run sends and scores its replies the same way. Inspect AI is an optional
package (``make inspect-env``): every module imports it inside the functions that need it, and
``registry`` (the ``inspect_ai`` entry point of pyproject.toml) registers the tasks only where
it is installed.

The room above ``pipelines``: it may import every other room; nothing imports it.
"""
