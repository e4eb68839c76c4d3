"""Counter-based randomness: a draw is a hash of (dialogue key, counter), never a global RNG.

Each dialogue gets a 64-bit key from the run seed, the step and its id (BLAKE2b). A uniform
draw is ``splitmix64(key + counter · φ)``, the SplitMix64 stream of the dialogue read at
position ``counter``, where the counter names what is drawn (the turn's position in its
dialogue, the token or cue, the draw's ordinal, the stream). So an
edit depends only on (input, params, seed): not on the batch size, the batch order or which
other dialogues are in the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def step_seed(seed: int, index: int, name: str) -> int:
    """The seed of step ``index`` (so P→F→SH draws F and SH from independent streams)."""
    digest = hashlib.blake2b(f"{seed}\x1f{index}\x1f{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def dialogue_keys(ids: Sequence[str], seed: int) -> np.ndarray:
    """[R] uint64 key per dialogue id."""
    prefix = f"{seed}\x1f".encode()
    out = np.empty(len(ids), dtype=np.uint64)
    for i, d in enumerate(ids):
        out[i] = int.from_bytes(hashlib.blake2b(prefix + str(d).encode(), digest_size=8)
                                .digest(), "little")
    return out


def splitmix64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def counter(turn_position: np.ndarray, item: np.ndarray | int = 0, ordinal: np.ndarray | int = 0,
            stream: int = 0) -> np.ndarray:
    """Pack what a draw is about into one uint64: 20 bits turn, 24 item, 16 ordinal, 4 stream."""
    t = np.asarray(turn_position, dtype=np.uint64) << np.uint64(44)
    i = np.asarray(item, dtype=np.uint64) << np.uint64(20)
    o = np.asarray(ordinal, dtype=np.uint64) << np.uint64(4)
    return t | i | o | np.uint64(stream)


def random_bits(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """uint64 draws, one per (key, counter) pair (arrays broadcast)."""
    with np.errstate(over="ignore"):
        state = np.asarray(keys, dtype=np.uint64) + np.asarray(counters, dtype=np.uint64) * _GOLDEN
    return splitmix64(state)


def uniform(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """float64 draws in [0, 1), one per (key, counter) pair."""
    return (random_bits(keys, counters) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def turn_stream(keys: np.ndarray, turn_position: np.ndarray) -> np.ndarray:
    """[T] a key per turn: the base of that turn's cheap per-token stream."""
    return random_bits(keys, counter(turn_position))


def token_bits(base: np.ndarray, index: np.ndarray) -> np.ndarray:
    """uint64 draws ``index`` of the per-turn streams ``base``: one multiply-xorshift round,
    enough to order a turn's tokens and cheaper than SplitMix64 over millions of tokens."""
    with np.errstate(over="ignore"):
        z = np.asarray(base, dtype=np.uint64) + np.asarray(index, dtype=np.uint64) * _M1
        z ^= z >> np.uint64(31)
        z *= _M2
        z ^= z >> np.uint64(29)
    return z
