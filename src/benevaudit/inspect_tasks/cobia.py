"""``inspect eval benevaudit/cobia``: CoBia's constructed conversations (HCC, SCC and the
baselines), each reply rated by the raters of ``probe.judges`` as one Inspect scorer.

The items, the layout (the release's templates or benevaudit's seeded list), the messages, the
target's decoding, every rater's prompt (``probes.cobia.rating.rater_prompts``), decoding and
parser (``probes.cobia.raters``) are the probe's own. Each rater that asks a model asks
Inspect's model role ``grader_<rater>`` (``grader_bias``, ``grader_nli``: each rater its own
model, as probe.py gives each its own ``llm`` block), else the ``grader`` role, else the model
under test; the refusal keyword rule asks none. The metric is
``probes.cobia.scoring.metrics_of`` over the scored samples, so on the same replies it gives
what ``python probe.py probe=cobia`` gives. Two things run through probe.py only: the released
DAN (its first call answers once per target, and every DAN item reads that reply) and raters in
``mode: score`` (log-probabilities of the verdict words).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benevaudit.inspect_tasks import convert
from benevaudit.inspect_tasks.arguments import overrides
from benevaudit.inspect_tasks.scores import rates_metric
from benevaudit.llm import Sampling
from benevaudit.outputs.stand_in_files import write_stand_in
from benevaudit.pipelines.inspect_config import probe_run
from benevaudit.probes.base import RunSettings
from benevaudit.probes.cobia import official, raters, release_raters
from benevaudit.probes.cobia import probe as cobia_probe
from benevaudit.probes.cobia.dataset import Item
from benevaudit.probes.cobia.rating import judges_folder, rater_prompts
from benevaudit.probes.cobia.scoring import metrics_of
from benevaudit.probes.spec import CobiaSpec

HEADLINE = ("/all",)      # the metric keys Inspect shows: every rate over all categories


def cobia(probe: str = "cobia", data_path: str | None = None, limit: int | None = None,
          options: str | Sequence[str] | None = None) -> Any:
    """CoBia: ``data_path`` a clone of the release or its three JSON files (none: the
    stand-in), ``limit`` the first N items, ``options`` any probe override
    (``probe.methods=[hcc,scc]``, ``probe.layout=seeded``)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample

    run, work = probe_run(overrides("probe", probe, "probe.data.path", data_path, limit, options))
    spec = run.probe
    if not isinstance(spec, CobiaSpec):
        raise ValueError(f"benevaudit/cobia runs a CoBia probe option, not probe={probe}")
    plan = cobia_probe.prepare(spec, run.target, RunSettings(
        work, run.seed, run.limit, stand_in=write_stand_in(work, cobia_probe.CoBia(spec))))
    check_inspectable(plan)
    messages = cobia_probe.build_requests(plan.layout, plan.pairs, run.seed, plan.switches,
                                          plan.sentences, plan.dan, plan.templates)
    samples = [Sample(id=sample_id(item, method), input=convert.chat_messages(msgs),
                      metadata={"id": item.id, "method": method, "group": item.group,
                                "category": item.category})
               for (item, method), msgs in zip(plan.pairs, messages, strict=True)]
    return Task(dataset=MemoryDataset(samples, name="cobia"),
                solver=convert.seeded_generate(plan.sampling),
                scorer=cobia_raters(plan, run.seed), config=convert.generate_config(plan.sampling),
                name="cobia")


def sample_id(item: Item, method: str) -> str:
    """A request's id: the item and the method (one item is asked by every method)."""
    return f"{item.id}/{method}"


def check_inspectable(plan: cobia_probe.Plan) -> None:
    """Refuse what the task cannot do: the released DAN, raters in ``mode: score``."""
    if "dan" in plan.templates:
        raise ValueError("benevaudit/cobia: the released DAN (probe.layout=official with "
                         "target.company and target.model_company) runs through probe.py, "
                         "whose first call answers once per target; leave dan out of "
                         "probe.methods")
    scored = [r.name for r in plan.raters if r.mode == "score"]
    if scored:
        raise ValueError(f"benevaudit/cobia: raters {scored} are in mode: score (verdict "
                         "log-probabilities); set probe.judges.<name>.mode=generate")


def row_of(item: Item, method: str, messages: list[dict[str, str]], reply: str,
           finish: str | None) -> dict[str, Any]:
    """The probe's row for one reply (``responses.parquet``'s columns, before rating)."""
    return {"id": item.id, "group": item.group, "category": item.category, "method": method,
            "bias_type": item.bias_type, "descriptor": item.primary,
            "second_descriptor": item.second, "second_group": item.second_group,
            "messages": convert.metadata_json(messages), "response": reply,
            "rated_response": official.rated_text(method, reply), "finish_reason": finish}


def rater_sampling(rater: raters.Rater, seed: int) -> Sampling:
    """A rater's decoding, as ``raters.ask`` sets it."""
    return Sampling(temperature=0.0, top_p=rater.top_p, max_tokens=rater.max_tokens,
                    seed=seed, server_defaults=raters.server_defaults(rater))


def cobia_raters(plan: cobia_probe.Plan, seed: int) -> Any:
    """The scorer: every rater of ``probe.judges`` on the reply, as ``rating.rate_rows`` rates
    a row (a refusal rater under ``dan_scope: released`` reads the whole DAN reply)."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.scorer import Score, scorer

    pairs = {sample_id(item, m): (item, m) for item, m in plan.pairs}
    kinds: dict[str, str] = {r.name: r.kind for r in plan.raters}
    metric = rates_metric("cobia", lambda rows: metrics_of(rows, kinds, plan.loaded.skipped),
                          HEADLINE)

    @scorer(metrics=[metric], name="benevaudit/cobia_raters")
    def raters_scorer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            item, method = pairs[str(state.sample_id)]
            reply = state.output.completion if state.output else ""
            sent = convert.plain(state.messages)
            row = row_of(item, method, sent[:-1] if sent[-1]["role"] == "assistant" else sent,
                         reply,
                         state.output.stop_reason if state.output else None)
            for rater in plan.raters:
                text = row["response" if whole_reply(rater, plan) else "rated_response"]
                raw = (None if rater.variant in raters.KEYWORDS else await ask(
                    grader_of(rater), rater, plan, (item, method), text, seed))
                row[f"{rater.name}_verdict"], row[f"{rater.name}_raw"] = verdict(
                    rater, plan, text, raw)
            return Score(value={r.name: str(row[f"{r.name}_verdict"] or "invalid")
                                for r in plan.raters}, answer=reply, metadata={"row": row})
        return score
    return raters_scorer()


def grader_of(rater: raters.Rater) -> Any:
    """The rater's model: the role ``grader_<rater>`` where one is bound (each rater its own
    model, as each has its own ``llm`` block in probe.py), else ``grader``, else the model
    under test."""
    # Inspect AI: an optional package (make inspect-env)
    from inspect_ai.model import get_model, model_roles

    role = f"grader_{rater.name}"
    return get_model(role=role if role in model_roles() else "grader")


def whole_reply(rater: raters.Rater, plan: cobia_probe.Plan) -> bool:
    """Whether the rater reads the whole reply (a refusal rater under dan_scope released)."""
    return rater.kind == "refusal" and plan.dan_scope == "released"


def verdict(rater: raters.Rater, plan: cobia_probe.Plan, text: str,
            raw: str | None) -> tuple[str | None, str]:
    """The rater's verdict and raw text: the keyword rule on ``text``, else its parser on the
    grader's ``raw`` reply."""
    if raw is None:
        rule = release_raters.keyword_rule(judges_folder(plan.release, rater),
                                           rater.variant == "keywords_corrected")
        [found] = raters.keyword_verdicts(rule, [text])
        return None if found.verdict is None else str(found.verdict), found.raw
    return raters.parser_of(rater)(raw), raw


async def ask(grader: Any, rater: raters.Rater, plan: cobia_probe.Plan, pair: tuple[Item, str],
              text: str, seed: int) -> str:
    """The grader's reply to the rater's prompt about ``text``."""
    [prompt] = rater_prompts(rater, plan.release, [pair], [text], plan.sentences)
    messages = convert.chat_messages(prompt)
    output = await grader.generate(messages, config=convert.request_config(
        rater_sampling(rater, seed), messages))
    return str(output.completion)
