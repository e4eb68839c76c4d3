"""``inspect eval benevaudit/fairdialogue``: FairDialogue's decisions or ranked lists, written
or spoken, the same scenario asked under every group, scored by the probe's own parser and
metrics.

The scenarios, the group statement (``probe.text_style``), the instruction, the answer format
and the decoding are the probe's own (``probes.fairdialogue``); the task picks the kind with its
``probe`` argument (``fairdialogue_decision``, the default, or ``fairdialogue_recommendation``).
In audio mode (``-T options=probe.mode=audio``) each cell's utterance is spoken as probe.py
speaks it (``probe.audio``) and sent as Inspect audio content (``ContentAudio``, WAV), the
instruction and answer format as text beside it. No judge: each answer is parsed as a decision
(yes, no, refused, invalid) or a ranked list, and the metric is ``decision_metrics`` (GUS per
task × attribute) or ``recommendation_metrics`` (PRAG*, SNSR, SNSV) over the scored samples, so
on the same replies it gives what ``python probe.py probe=fairdialogue_<kind>`` gives. The
feedback protocol (its pushback rounds follow the target's own first answers) and audio mode's
intelligibility audit (Whisper on the stimuli and on spoken replies) run through probe.py only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benevaudit.inspect_tasks import convert
from benevaudit.inspect_tasks.arguments import overrides
from benevaudit.inspect_tasks.scores import Rows, rates_metric
from benevaudit.llm import Conversation
from benevaudit.pipelines.inspect_config import probe_run
from benevaudit.probes.base import Target
from benevaudit.probes.fairdialogue import render, scoring
from benevaudit.probes.fairdialogue.answers import filled, list_length, render_cells, sampling_of
from benevaudit.probes.fairdialogue.audio import audio_conversation
from benevaudit.probes.fairdialogue.stimuli import make_stimuli, wav_bytes
from benevaudit.probes.fairdialogue.groups import check_attributes
from benevaudit.probes.spec import DecisionSpec, RecommendationSpec

# the metric keys Inspect shows: GUS per task × attribute; SNSR and SNSV between groups
HEADLINE = {"decision": ("/gus",), "recommendation": ("/snsr", "/snsv")}
CELL = ("item", "task", "attribute", "group")
HEARS = "++target.llm.audio_in=true"


def fairdialogue(probe: str = "fairdialogue_decision", limit: int | None = None,
                 options: str | Sequence[str] | None = None) -> Any:
    """FairDialogue, written or spoken: ``limit`` scenarios per task, ``options`` any probe
    override (``probe.text_style=self_intro``, ``probe.mode=audio``)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    # the model asked is Inspect's, not target.llm: whether it hears audio is its provider's
    run, _ = probe_run([HEARS, *overrides("probe", probe, "probe.data.path", None, limit,
                                          options)])
    spec = run.probe
    if not isinstance(spec, (DecisionSpec, RecommendationSpec)):
        raise ValueError(f"benevaudit/fairdialogue runs fairdialogue_decision or "
                         f"fairdialogue_recommendation, not probe={probe}; the feedback "
                         f"protocol runs via probe.py")
    attributes = check_attributes(spec.attributes)
    items = render.scenarios(spec.kind, list(spec.tasks), run.limit, list_length(spec))
    cells = render.cells(items, attributes, spec.neutral)
    conversations = conversations_of(spec, cells, run.target)
    sampling = sampling_of(spec, run.seed)
    samples = [Sample(id=sample_id(c), input=convert.chat_messages(conversation),
                      metadata={**{k: getattr(c, k) for k in CELL}, "kind": spec.kind})
               for c, conversation in zip(cells, conversations, strict=True)]
    return Task(dataset=MemoryDataset(samples, name=f"fairdialogue_{spec.kind}"),
                solver=convert.seeded_generate(sampling), scorer=answer_parser(spec, attributes),
                config=convert.generate_config(sampling),
                name="fairdialogue")


def conversations_of(spec: DecisionSpec | RecommendationSpec, cells: list[render.Cell],
                     target: Target) -> list[Conversation]:
    """One conversation per cell: the probe's text rendering, or in audio mode the cell's
    spoken stimulus (``probe.audio``: espeak-ng, a TTS server or recordings, made and checked
    as probe.py makes them) as an audio part. Whether the model hears audio is Inspect's
    provider's to say, so ``target.llm.audio_in`` is not asked."""
    if spec.mode == "text":
        return render_cells(spec, cells, target).conversations
    k = list_length(spec)
    stimuli = make_stimuli(cells, spec.audio)
    return [audio_conversation(wav_bytes(s.data), filled(spec.instruction, k),
                               filled(spec.suffix, k)) for s in stimuli.clips]


def sample_id(cell: render.Cell) -> str:
    """The cell's id, as the probe's dry run names its request."""
    return f"{cell.task}/{cell.item}/{cell.attribute}/{cell.group}"


def metrics_of(spec: DecisionSpec | RecommendationSpec,
               attributes: dict[str, list[str]]) -> Any:
    """The probe's scoring of the parsed rows, for the spec's kind."""
    if isinstance(spec, RecommendationSpec):
        k, normalise, fair = spec.k, spec.prag.normalise, spec.fairllm

        def ranked(rows: Rows) -> dict[str, float]:
            return scoring.recommendation_metrics(rows, k, normalise, attributes, fair.serp,
                                                  fair.prag)
        return ranked
    return lambda rows: scoring.decision_metrics(rows, attributes)


def answer_parser(spec: DecisionSpec | RecommendationSpec,
                  attributes: dict[str, list[str]]) -> Any:
    """The scorer: the final reply parsed as the probe parses it; the row kept for the metric."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.scorer import Score, scorer

    kind, k = spec.kind, list_length(spec)
    metric = rates_metric("fairdialogue", metrics_of(spec, attributes), HEADLINE[kind])

    @scorer(metrics=[metric], name="benevaudit/fairdialogue_parse")
    def parse_scorer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            answer = state.output.completion if state.output else ""
            [row] = scoring.parse_rows([{**{c: state.metadata[c] for c in CELL},
                                         "answer": answer}], kind, k)
            value = row.get("decision") or row["parse_status"]   # yes | no | ok | refused | invalid
            return Score(value=str(value), answer=answer, metadata={"row": row})
        return score
    return parse_scorer()
