"""``inspect eval benevaudit/fairmt``: FairMT-Bench's five chained turns, the target's own
replies in context, judged by FairMT's judge as an Inspect scorer.

The dialogues, the target's system prompt and decoding, the judge's prompts, its refusal
pre-filter and its verdict parser are the probe's own (``probes.fairmt``); the judge is
Inspect's ``grader`` model role (the model under test where no grader is bound). The metric is
``probes.fairmt.scoring.bias_metrics`` over the scored samples, so on the same replies it gives
what ``python probe.py probe=fairmt`` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benevaudit.inspect_tasks import convert
from benevaudit.inspect_tasks.arguments import overrides
from benevaudit.inspect_tasks.scores import rates_metric
from benevaudit.llm import Sampling
from benevaudit.outputs.stand_in_files import write_stand_in
from benevaudit.pipelines.inspect_config import probe_run
from benevaudit.probes.base import RunSettings
from benevaudit.probes.fairmt import probe as fairmt_probe
from benevaudit.probes.fairmt.judging import judge_sampling, refused, verdict_of
from benevaudit.probes.fairmt.release import TURNS
from benevaudit.probes.fairmt.scoring import bias_metrics
from benevaudit.probes.fairmt.scripts import Script, read_generation
from benevaudit.probes.fairmt.spec import FairMTSpec

HEADLINE = ("/bias_rate",)            # the metric keys Inspect shows (every rate of the probe)


def fairmt(probe: str = "fairmt", data_path: str | None = None, limit: int | None = None,
           options: str | Sequence[str] | None = None) -> Any:
    """FairMT-Bench: ``data_path`` a clone of the release (none: the stand-in), ``limit``
    dialogues per task, ``options`` any probe override (``probe.judge_turns=all``)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    run, work = probe_run(overrides("probe", probe, "probe.data.path", data_path, limit, options))
    spec = run.probe
    if not isinstance(spec, FairMTSpec):
        raise ValueError(f"benevaudit/fairmt runs a FairMT probe option, not probe={probe}")
    stand_in = write_stand_in(work, fairmt_probe.FairMT(spec))
    plan = fairmt_probe.prepare(spec, run.target, RunSettings(work, run.seed, run.limit,
                                                              stand_in=stand_in))
    root, _ = fairmt_probe.root_of(spec, stand_in)
    generation = read_generation(root)
    samples = [Sample(id=d.id, input=convert.chat_messages([{"role": "user",
                                                             "content": d.turns[0]}]),
                      metadata={**fairmt_probe.identity(d), "turns": list(d.turns),
                                "judge_system": plan.systems[d.id]})
               for d in plan.dialogues]
    sampling = fairmt_probe.target_sampling(spec, run.seed)
    return Task(dataset=MemoryDataset(samples, name=f"fairmt_{spec.data.set}"),
                solver=five_turns(spec.system_prompt, generation.system,
                                  generation.without_system, sampling),
                scorer=fairmt_judge(spec, plan.turns, run.seed, plan.judging.scripts),
                config=convert.generate_config(sampling), name="fairmt")


def system_for(choice: str, system: str, exempt: Sequence[str], model: str) -> str | None:
    """The target's system prompt: the release's unless ``none``, or ``auto`` and the model is
    one the release's generation exempts."""
    if choice == "none" or (choice == "auto" and any(n in model for n in exempt)):
        return None
    return system


def five_turns(choice: str, system: str, exempt: Sequence[str], sampling: Sampling) -> Any:
    """The solver: the system prompt, then each user turn followed by the target's reply
    (each request with its own seed)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
    from inspect_ai.solver import solver

    @solver(name="benevaudit/fairmt_turns")
    def turns_solver() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            prompt = system_for(choice, system, exempt, get_model().name)
            if prompt is not None:
                state.messages.insert(0, ChatMessageSystem(content=prompt))
            for k, text in enumerate(state.metadata["turns"]):
                if k > 0:
                    state.messages.append(ChatMessageUser(content=text))
                state = await generate(state, **convert.seed_of(sampling, state.messages))
            return state
        return solve
    return turns_solver()


def fairmt_judge(spec: FairMTSpec, turns: list[int], seed: int,
                 scripts: Mapping[str, Script]) -> Any:
    """FairMT's judge on the judged turns' replies: the task script's refusal pre-filter, else
    the grader asked with the dialogue's judge prompt."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Score, scorer

    sampling = judge_sampling(spec.judge, seed)
    metric = rates_metric("fairmt", lambda rows: bias_metrics(rows, turns, seed), HEADLINE)

    @scorer(metrics=[metric], name="benevaudit/fairmt_judge")
    def judge_scorer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            replies = [m.text for m in state.messages if m.role == "assistant"]
            row = {k: state.metadata[k] for k in ("task", "type", "dimension")}
            script = scripts[row["task"]]
            for k in turns:
                reply = replies[k - 1] if len(replies) >= k else ""
                row[f"prefiltered_{k}"] = spec.prefilter and refused(reply, script.phrases)
                row[f"evaluation_{k}"] = (script.prefilter_verdict if row[f"prefiltered_{k}"]
                                          else await ask(get_model(role="grader"), sampling,
                                                         state.metadata["judge_system"], reply))
                row[f"verdict_{k}"] = verdict_of(row[f"evaluation_{k}"])
            verdict = row[f"verdict_{TURNS}"]
            return Score(value=verdict, answer=replies[-1] if replies else "",
                         explanation=row[f"evaluation_{TURNS}"],
                         metadata={"row": row, "biased": None if verdict == "invalid"
                                   else verdict == "biased"})
        return score
    return judge_scorer()


async def ask(grader: Any, sampling: Sampling, system: str, reply: str) -> str:
    """The judge's reply: its system prompt and the target's reply as the user message."""
    conversation = [{"role": "system", "content": system}, {"role": "user", "content": reply}]
    messages = convert.chat_messages(conversation)
    output = await grader.generate(messages, config=convert.request_config(sampling, messages))
    return str(output.completion)

