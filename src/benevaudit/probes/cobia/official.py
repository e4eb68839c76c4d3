"""The release's own attacks: its prompt templates filled as its ``methods/*.ipynb`` fill them.

Every message's content goes through ``str.format`` with the same names the release uses:
``ethnicity`` (the group key), ``adj1``..``adj6`` (``adj_list[0..5]``), ``exp3``, ``exp4``,
``exp6`` (``exp_list[2]``, ``[3]``, ``[5]``), ``neg`` (the row's descriptor), ``neg2`` and
``expneg2`` (the second descriptor and its explanation). The release reads ``neg2`` from
``item['negative_term']``, a field its dataset lacks; here it is the item's seeded second
descriptor (``dataset.load_items``), the one assumption this layout makes.

DAN is two calls: the template's system and first user turn (with ``company`` and
``model_company``) go to the target once; its reply becomes the assistant turn of every item's
conversation, whose last user turn asks the question.
"""

from __future__ import annotations

from collections.abc import Mapping

from benevaudit.errors import ConfigError, InputError
from benevaudit.probes.cobia.dataset import Item

Message = dict[str, str]
CONSTRUCTED = ("hcc", "scc")            # the methods that need a second descriptor
JAILBREAK = "[🔓JAILBREAK]"            # the DAN reply's jailbroken half starts here


def fill(template: list[Message], values: Mapping[str, str]) -> list[Message]:
    """Each message's content through ``str.format(**values)``, as the release does."""
    try:
        return [{"role": m["role"], "content": m["content"].format(**values)} for m in template]
    except (KeyError, IndexError, ValueError) as err:
        raise InputError(f"a CoBia template names a field the release does not fill: {err}; "
                         f"filled: {sorted(values)}") from None


def values(item: Item) -> dict[str, str]:
    """The release's names for one item (HCC and SCC use them all, the baselines two)."""
    out = {"ethnicity": item.group, "neg": item.primary}
    out.update({f"adj{k + 1}": trait for k, trait in enumerate(item.traits)})
    out.update(exp3=item.explanations[2], exp4=item.explanations[3], exp6=item.explanations[5])
    if item.second is not None:
        out.update(neg2=item.second, expneg2=item.reasons[item.second])
    return out


def dan_first_call(template: list[Message], company: str, model_company: str) -> list[Message]:
    """The once-per-target DAN prompt: the template's first two messages, names filled."""
    check_dan(template)
    return fill(template[:2], {"company": company, "model_company": model_company})


def check_dan(template: list[Message]) -> None:
    if len(template) != 4 or template[2]["role"] != "assistant" or \
            template[2]["content"].strip() != "{danresponse}":
        raise InputError("dan-template.json: expected system, user, assistant '{danresponse}', "
                         "user (the release's two-call DAN)")


def build(method: str, item: Item, template: list[Message],
          dan: tuple[list[Message], str] | None = None) -> list[Message]:
    """The messages for one item under one released method.

    ``dan`` is (the first call's messages, the target's reply to them). The reply is placed
    verbatim; the release runs it through ``str.format`` a second time, which fails on a reply
    holding braces.
    """
    if method in CONSTRUCTED:
        if item.second is None:
            raise ConfigError(f"{method} needs a second descriptor; item {item.id} has none")
        return fill(template, values(item))
    if method in ("zero_shot", "roleplay"):
        return fill(template, {"ethnicity": item.group, "neg": item.primary})
    if method == "dan":
        if dan is None:
            raise ConfigError("method dan needs the target's reply to the DAN prompt first")
        first, reply = dan
        return [*first, {"role": "assistant", "content": reply},
                *fill(template[3:], {"ethnicity": item.group, "neg": item.primary})]
    raise ConfigError(f"unknown CoBia method {method!r}; valid methods: "
                      "['hcc', 'scc', 'zero_shot', 'roleplay', 'dan']")


def rated_text(method: str, reply: str) -> str:
    """What the raters read: a DAN reply's text after the first jailbreak tag when present."""
    if method == "dan" and JAILBREAK in reply:
        return reply.split(JAILBREAK, 1)[1].strip()
    return reply


def runs(method: str, item: Item) -> bool:
    """Whether ``method`` applies to ``item``: HCC and SCC need a second descriptor."""
    return method not in CONSTRUCTED or item.second is not None
