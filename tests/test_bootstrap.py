"""Bootstrap stability of trigger rates: convergence, shrinking bands, determinism, whole triplets."""

import numpy as np
import pandas as pd
import pytest

from benevaudit.metrics.bootstrap import (
    FRACTIONS, bootstrap_metrics, bootstrap_trigger_rates, distinct_rows, triplet_counts,
)
from benevaudit.outputs.figures.detection import bootstrap_png

RATES = {"N": 0.1, "OB": 0.9, "BB": 0.3}


def pool(n_triplets: int = 600, seed: int = 0, invalid: float = 0.05) -> pd.DataFrame:
    """Complete N/OB/BB triplets with independent flags at RATES, a few verdicts invalid."""
    rng = np.random.default_rng(seed)
    labels = np.tile(["N", "OB", "BB"], n_triplets)
    flags = rng.random(3 * n_triplets) < np.vectorize(RATES.get)(labels)
    flagged = [None if bad else bool(f)
               for f, bad in zip(flags, rng.random(3 * n_triplets) < invalid)]
    keys = [("mental_health", "scripted", ("young", "male", "White", f"u{t}"), None)
            for t in np.repeat(np.arange(n_triplets), 3)]
    return pd.DataFrame({"id": [f"d{i}" for i in range(3 * n_triplets)], "label": labels,
                         "flagged": flagged, "triplet": keys})


def pool_rates(frame: pd.DataFrame) -> dict[str, float]:
    valid = frame[frame["flagged"].notna()]
    return valid.groupby("label")["flagged"].mean().astype(float).to_dict()


@pytest.mark.parametrize("method", ["types", "index"])
def test_means_converge_to_the_pool_rate_and_bands_shrink(method):
    frame = pool()
    table = bootstrap_trigger_rates(frame, [0.01, 0.05, 0.2], n_resamples=400, seed=1,
                                    method=method)
    truth = pool_rates(frame)
    for c, rows in table.groupby("class"):
        rows = rows.sort_values("fraction")
        assert rows["pool_rate"].iloc[0] == pytest.approx(truth[c])
        # with complete triplets the estimator is nearly unbiased: the mean of 400 resamples
        # of 120 triplets is within a few standard errors of the pool rate
        big = rows.iloc[-1]
        assert abs(big["mean"] - truth[c]) < 4 * (big["high"] - big["low"]) / 3.92 / np.sqrt(400) + 1e-3
        widths = (rows["high"] - rows["low"]).to_numpy()
        assert widths[0] > widths[1] > widths[2] > 0
        assert (rows["low"] <= rows["mean"]).all() and (rows["mean"] <= rows["high"]).all()
    # the pool is 20% of the corpus by default: 0.2 draws as many dialogues as the pool holds
    assert table.loc[table["fraction"] == 0.2, "n_dialogues"].iloc[0] == len(frame)
    assert table.loc[table["fraction"] == 0.01, "n_triplets"].iloc[0] == 30


def test_the_two_ways_draw_the_same_distribution():
    frame = pool(seed=3)
    a = bootstrap_trigger_rates(frame, [0.02, 0.1], n_resamples=3000, seed=0, method="types")
    b = bootstrap_trigger_rates(frame, [0.02, 0.1], n_resamples=3000, seed=0, method="index")
    assert np.allclose(a["mean"], b["mean"], atol=0.01)
    assert np.allclose(a["high"] - a["low"], b["high"] - b["low"], rtol=0.15)


def test_seeded_and_deterministic():
    frame = pool(seed=4)
    first = bootstrap_trigger_rates(frame, [0.01, 0.1], n_resamples=200, seed=7)
    again = bootstrap_trigger_rates(frame, [0.01, 0.1], n_resamples=200, seed=7)
    other = bootstrap_trigger_rates(frame, [0.01, 0.1], n_resamples=200, seed=8)
    pd.testing.assert_frame_equal(first, again)
    assert not first["mean"].equals(other["mean"])
    # each size has its own stream: adding a size leaves the others unchanged
    more = bootstrap_trigger_rates(frame, [0.01, 0.05, 0.1], n_resamples=200, seed=7)
    assert np.array_equal(more.loc[more["fraction"] == 0.01, "mean"],
                          first.loc[first["fraction"] == 0.01, "mean"])


@pytest.mark.parametrize("method", ["types", "index"])
def test_triplets_are_resampled_whole(method):
    """Flags equal within each triplet: whole-triplet draws give three identical rate series;
    drawing each class on its own would not."""
    rng = np.random.default_rng(5)
    per_triplet = rng.random(300) < 0.4
    labels = np.tile(["N", "OB", "BB"], 300)
    frame = pd.DataFrame({"id": np.arange(900).astype(str), "label": labels,
                          "flagged": np.repeat(per_triplet, 3),
                          "triplet": np.repeat(np.arange(300), 3)})
    table = bootstrap_trigger_rates(frame, [0.005, 0.05], n_resamples=300, seed=0, method=method)
    for _, rows in table.groupby("fraction"):
        assert rows["mean"].nunique() == 1 and rows["low"].nunique() == 1
        assert rows["high"].nunique() == 1


def test_counts_and_distinct_rows():
    frame = pd.DataFrame({"label": ["N", "OB", "BB", "N", "BB", "N"],
                          "flagged": [True, False, None, True, True, 0],
                          "triplet": ["t1", "t1", "t1", "t2", "t2", "t3"]})
    counts = triplet_counts(frame)
    # columns: flagged N, OB, BB, then valid N, OB, BB
    assert counts.tolist() == [[1, 0, 0, 1, 1, 0], [1, 0, 1, 1, 0, 1], [0, 0, 0, 1, 0, 0]]
    types, share = distinct_rows(np.vstack([counts, counts[:1]]))
    assert len(types) == 3 and sorted(share.tolist()) == [0.25, 0.25, 0.5]


def test_figure_metrics_and_errors(tmp_path):
    table = bootstrap_trigger_rates(pool(200), FRACTIONS, n_resamples=100, corpus_size=3000)
    assert len(table) == 3 * len(FRACTIONS)
    assert bootstrap_png(table, tmp_path / "b.png", "regard · bootstrap").stat().st_size > 5000
    m = bootstrap_metrics(table)
    assert m["bootstrap/TR_BB/0.5pct/mean"] == table.query("`class` == 'BB'")["mean"].iloc[0]
    with pytest.raises(ValueError, match="unknown method 'fast'; valid: auto, types, index"):
        bootstrap_trigger_rates(pool(10), [0.1], method="fast")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['triplet'\]"):
        bootstrap_trigger_rates(pool(10).drop(columns="triplet"), [0.1])
    with pytest.raises(ValueError, match=r"fractions must be in \(0, 1\], got \[0.0\]"):
        bootstrap_trigger_rates(pool(10), [0.0])
