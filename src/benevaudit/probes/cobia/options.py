"""What a CoBia ``probe`` block chooses, checked: the layout, the methods, the raters and
the target's decoding; and what ``metrics.json`` records of those choices.

``layout_of`` reads ``probe.layout`` (``auto``: the release's templates when its
prompt-templates/ is there); ``methods_of`` drops ``dan`` where it cannot run; ``raters_of``
builds the raters of ``probe.judges`` (``variant: auto`` is the release's own where its
judges/ is there).
"""

from __future__ import annotations

import logging

from benevaudit.errors import ConfigError
from benevaudit.llm import Sampling
from benevaudit.llm.granite_guardian import GRANITE_CHECKPOINT, GRANITE_GUARDIAN_TEMPLATE
from benevaudit.llm.spec import LLMSpec
from benevaudit.probes.cobia import raters
from benevaudit.probes.cobia.release import Release
from benevaudit.probes.spec import CobiaSpec, RaterKind, TargetSpec

log = logging.getLogger(__name__)
RELEASED = ("release", "granite_release", "keywords_release")    # the raters as released


def layout_of(spec: CobiaSpec, release: Release) -> str:
    """``probe.layout``; ``auto`` is ``official`` when the release's prompt-templates/ is there."""
    if spec.layout == "auto":
        return "official" if release.templates is not None else "seeded"
    if spec.layout == "official" and release.templates is None:
        raise ConfigError(f"probe.layout=official needs the release's prompt-templates/ under "
                          f"{release.root}; give a clone of the CoBia repository or use "
                          "probe.layout=seeded")
    return spec.layout


def methods_of(spec: CobiaSpec, layout: str, target: TargetSpec | None = None) -> list[str]:
    """``probe.methods``, with ``dan`` dropped when it cannot run: without probe.dan_template
    (seeded), or without target.company and target.model_company (the released DAN)."""
    methods: list[str] = list(spec.methods)
    if "dan" in methods and layout == "official":
        if target is None or not (target.company and target.model_company):
            log.info("method dan left out: the released DAN names the target's maker; set "
                     "target.company and target.model_company")
            methods.remove("dan")
    elif "dan" in methods and not spec.dan_template:
        log.info("method dan left out: no probe.dan_template given")
        methods.remove("dan")
    return methods


def rater_llm(kind: RaterKind, llm: LLMSpec, variant: str) -> LLMSpec:
    """The rater's llm spec; a ``social_bias`` guard rater on Granite Guardian's own weights
    gets the role-only template, since its shipped template would wrap the already-built guard
    prompt again (the released 3.0 rater keeps the model's own template)."""
    if kind == "guard" and variant != "granite_release":
        return llm.framed_by(GRANITE_GUARDIAN_TEMPLATE, GRANITE_CHECKPOINT)
    return llm


def raters_of(spec: CobiaSpec, release: Release | None = None) -> list[raters.Rater]:
    """The raters of ``probe.judges``; ``variant: auto`` is the release's own when its judges/
    is there, else benevaudit's. Asking for a variant read from judges/ without that folder is
    an error."""
    out = []
    for name, judge in spec.judges.items():
        if judge is None:
            raise ConfigError(f"probe.judges.{name}: expected a mapping with kind and llm")
        has_files = release is not None and release.raters is not None
        variant = (raters.VARIANTS[judge.kind][0 if has_files else -1] if judge.variant == "auto"
                   else judge.variant)
        if variant in raters.FROM_FILES and not has_files:
            where = release.root if release is not None else "probe.data.path"
            raise ConfigError(f"probe.judges.{name}.variant={variant} reads the release's "
                              f"judges/ folder, which {where} lacks; use variant=auto or "
                              f"{raters.VARIANTS[judge.kind][-1]}")
        llm = None if judge.llm is None else rater_llm(judge.kind, judge.llm, variant)
        out.append(raters.Rater(name, judge.kind, llm, judge.max_tokens, judge.mode, variant,
                                judge.top_p))
    if not out:
        raise ConfigError("probe.judges is empty; CoBia needs at least one rater")
    return out


def target_sampling(spec: CobiaSpec, seed: int) -> Sampling:
    """The release's decoding: temperature 0 and top_p 0 (greedy where a backend refuses
    top_p 0), no reply cap unless ``probe.max_tokens`` sets one."""
    return Sampling(temperature=0.0, top_p=spec.top_p, max_tokens=spec.max_tokens, seed=seed)


def log_choices(layout: str, release: Release, rater_list: list[raters.Rater],
                sampling: Sampling, dan_scope: str | None = None) -> None:
    """Say where the run departs from the release: layout, raters, reply cap, and what the
    refusal raters read of a DAN reply (``dan_scope``; None: no DAN rows)."""
    log.info("CoBia layout %s from %s (%s)", layout, release.root,
             "a clone of the release" if release.clone else "a flat folder")
    variants = ", ".join(f"{r.name}={r.variant}" for r in rater_list)
    if release.raters is None:
        log.warning("no judges/ under %s: benevaudit's own raters run (%s)", release.root,
                    variants)
    else:
        log.info("raters (variant): %s; the release's read from %s", variants, release.raters)
    if dan_scope is not None:
        log.info("refusal raters read %s of each DAN reply (probe.refusal.dan_scope=%s)",
                 "the whole text, as released" if dan_scope == "released"
                 else "the jailbroken half", dan_scope)
    if sampling.max_tokens is not None:
        log.warning("target replies capped at %d tokens: a departure from the release, which "
                    "sets no cap (probe.max_tokens=null for none)", sampling.max_tokens)


def what_ran(plan_layout: str, rater_list: list[raters.Rater], sampling: Sampling,
             dan_scope: str, stand_in: bool) -> dict[str, object]:
    """What ``run.json`` records as ``ran``: the stand-in or the release, the layout, the
    raters that are the release's own judges, the reply cap (None: none) and the DAN scope."""
    return {"stand_in": stand_in, "layout": plan_layout,
            "released_judges": [r.name for r in rater_list if r.variant in RELEASED],
            "reply_cap_tokens": sampling.max_tokens, "refusal_dan_scope": dan_scope}

