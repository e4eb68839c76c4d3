"""The floor of exact prefix caching: how many prompt tokens a perfect cache still computes.

A prefix cache (vLLM's, or the hf backend's reuse of the previous prompt) can skip a token only
when the same token sequence up to and including it was computed before. The tokens that must
be computed at least once are therefore the distinct prefixes of all prompts: the nodes of
their token trie. No exact cache goes below it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class PrefixTrie:
    """A token trie grown one prompt at a time; ``nodes`` is the number of distinct prefixes."""

    def __init__(self) -> None:
        self.root: dict[int, dict] = {}
        self.nodes = 0

    def add(self, ids: Sequence[int]) -> int:
        """Insert one prompt; returns the tokens it added (those no earlier prompt shared)."""
        node, added = self.root, 0
        for tok in ids:
            nxt = node.get(tok)
            if nxt is None:
                nxt = node[tok] = {}
                added += 1
            node = nxt
        self.nodes += added
        return added


def distinct_prefix_tokens(prompts: Iterable[Sequence[int]]) -> int:
    """Tokens a perfect prefix cache computes: the nodes of the token trie of all prompts."""
    trie = PrefixTrie()
    for ids in prompts:
        trie.add(ids)
    return trie.nodes
