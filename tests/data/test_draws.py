"""The distance suite's draws: one per group and repetition, seeded, sized as configured."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from regbias.app.settings import read_settings
from regbias.data.corpus import TextSet
from regbias.data.draws import DrawSizes, distance_draws
from regbias.data.sampling import TokenBudget
from regbias.errors import SampleSizeError
from tests.conftest import compose_config

SIZES = DrawSizes(
    repetitions=2, short_texts=5, long_passages=4, texts_per_passage=3, lda_passages=6
)


def groups(**sizes: int) -> dict[str, TextSet]:
    return {
        g: TextSet([f"{g}{i}" for i in range(n)], np.zeros(n, dtype=np.int64))
        for g, n in sizes.items()
    }


def test_tweets_give_short_long_and_lda_draws_per_repetition():
    draws = distance_draws(groups(au=40, nz=18), SIZES, "tweet", seed=0, policy="error")
    assert set(draws.texts) == {"short", "long", "lda"}
    assert len(draws.texts["short"]) == 2
    first = draws.texts["short"][0]
    assert {g: len(t) for g, t in first.items()} == {"au": 5, "nz": 5}
    assert all(t.startswith("au") for t in first["au"])
    passage = draws.texts["long"][0]["nz"][0]
    assert len(passage.split()) == 3 and all(w.startswith("nz") for w in passage.split())
    assert draws.texts["short"][0] != draws.texts["short"][1]  # repetitions differ
    assert len(draws.table()) == 3 * 2 * 2


def test_same_seed_same_draws():
    one = distance_draws(groups(au=40, nz=18), SIZES, "tweet", seed=3, policy="error")
    two = distance_draws(groups(au=40, nz=18), SIZES, "tweet", seed=3, policy="error")
    assert one.texts == two.texts


def test_documents_have_no_short_text_and_equal_lda_sizes_under_policy_all():
    draws = distance_draws(groups(us=50, au=5), SIZES, "document", seed=0, policy="all")
    assert "short" not in draws.texts
    lda = draws.texts["lda"][0]
    assert len(lda["us"]) == len(lda["au"]) == 5
    table = draws.table()
    assert (table.query("kind == 'long'")["size"] == 4).all()  # 4 of 5 AU docs: no policy needed
    assert (table.query("kind == 'lda'")["size"] == 5).all()  # smallest group sets every size


def test_documents_too_few_for_lda_under_policy_error():
    with pytest.raises(SampleSizeError, match="'au' has 5"):
        distance_draws(groups(us=50, au=5), SIZES, "document", seed=0, policy="error")


def test_distinct_texts_per_kind_are_each_text_once():
    draws = distance_draws(groups(au=40, nz=18), SIZES, "tweet", seed=0, policy="error")
    short = draws.distinct_texts(["short"])
    assert len(short) == len(set(short))
    assert set(short) == {t for rep in draws.texts["short"] for ts in rep.values() for t in ts}
    assert draws.distinct_texts(["short", "long"])[: len(short)] == short


def corpus_texts(units: list[tuple[str, ...]]) -> list[str]:
    return [t for unit in units for t in unit]


@pytest.mark.parametrize("matched", [True, False])
def test_no_corpus_text_twice_in_a_draw_nor_in_a_main_and_its_twin(matched):
    sizes = DrawSizes(3, 10, 4, 5, 8, matched_pool=matched, floors=True)
    draws = distance_draws(groups(au=400, za=41), sizes, "tweet", seed=2, policy="error")
    for kind in ("short", "long", "lda"):
        for r in range(3):
            for g in ("au", "za"):
                used = corpus_texts(draws.units[kind][r][g])
                assert len(used) == len(set(used)), (kind, r, g)
                joined = [" ".join(u) for u in draws.units[kind][r][g]]
                assert joined == draws.texts[kind][r][g]  # units name what each text joins
                if kind != "lda":
                    twin = {w for text in draws.twins[kind][r][g] for w in text.split()}
                    assert not twin & set(used)


def test_lda_halves_share_no_text():
    sizes = DrawSizes(1, None, None, 5, 8, matched_pool=True)
    draws = distance_draws(groups(au=400, za=40), sizes, "tweet", seed=0, policy="error")
    units = draws.units["lda"][0]["za"]
    assert len(set(corpus_texts(units))) == 40  # 8 passages of 5 partition ZA's whole pool
    first, second = corpus_texts(units[:4]), corpus_texts(units[4:])
    assert not set(first) & set(second)


@pytest.mark.parametrize(
    ("sizes", "setting"),
    [
        (DrawSizes(1, 21, None, 5, None, matched_pool=True), "distance.short.texts_per_draw"),
        (DrawSizes(1, None, 5, 5, None, matched_pool=True), "distance.long.passages_per_draw"),
        (DrawSizes(1, None, None, 5, 9, matched_pool=True), "distance.lda.passages_per_group"),
    ],
)
def test_a_pool_that_cannot_fill_a_draw_names_the_setting_to_lower(sizes, setting):
    # The distance settings name each size's config key (data/ knows none of them).
    keys = read_settings(compose_config()).distance.draw_sizes().keys
    sizes = replace(sizes, keys=keys)
    with pytest.raises(
        SampleSizeError, match=rf"{setting}=\d+ needs \d+ distinct texts.*lower {setting}"
    ):
        distance_draws(groups(au=400, za=40), sizes, "tweet", seed=0, policy="error")


def test_whole_groups_without_matched_pools_also_refuse_an_overfull_draw():
    keys = read_settings(compose_config()).distance.draw_sizes().keys
    sizes = DrawSizes(1, None, 5, 5, None, keys=keys)
    with pytest.raises(SampleSizeError, match=r"distance\.long\.passages_per_draw"):
        distance_draws(groups(au=400, za=24), sizes, "tweet", seed=0, policy="error")


def words(text: str) -> int:
    """A toy tokenizer: one token per word, plus the two special tokens."""
    return len(text.split()) + 2


def wordy_groups(**sizes: int) -> dict[str, TextSet]:
    """Texts of 1 to 9 words, so passages of 10 of them overflow a 24-token window."""
    rng = np.random.default_rng(5)
    return {
        g: TextSet(
            [" ".join(f"{g}{i}w{j}" for j in range(rng.integers(1, 10))) for i in range(n)],
            np.zeros(n, dtype=np.int64),
        )
        for g, n in sizes.items()
    }


def text_ids(passages: list[str]) -> set[str]:
    return {word.split("w")[0] for passage in passages for word in passage.split()}


BUDGET = TokenBudget(24, words)
FLOORED = DrawSizes(3, 10, 6, 10, 12, matched_pool=True, floors=True, sentences=True)


@pytest.mark.parametrize("matched", [True, False])
def test_a_passage_never_exceeds_the_encoders_window(matched):
    sizes = replace(FLOORED, matched_pool=matched)
    draws = distance_draws(wordy_groups(au=600, za=300), sizes, "tweet", 1, "error", BUDGET)
    for kind in ("long", "lda"):
        for rep in [*draws.texts[kind], *draws.twins.get(kind, [])]:
            for passages in rep.values():
                assert all(BUDGET.fits(p) for p in passages), kind
    # Without the budget the same draws overflow it (the old passages of 10 texts).
    plain = distance_draws(wordy_groups(au=600, za=300), sizes, "tweet", 1, "error")
    assert not all(BUDGET.fits(p) for p in plain.texts["long"][0]["au"])
    assert all(len(u) == 10 for u in plain.units["long"][0]["au"])


def test_fitted_passages_still_partition_a_permuted_sample_and_are_as_full_as_fit():
    group = wordy_groups(au=600, za=300)
    draws = distance_draws(group, FLOORED, "tweet", 1, "error", BUDGET)
    for kind in ("long", "lda"):
        for r in range(3):
            for g in ("au", "za"):
                units = draws.units[kind][r][g]
                used = corpus_texts(units)
                assert len(used) == len(set(used)), (kind, r, g)  # no text twice in a draw
                assert [" ".join(u) for u in units] == draws.texts[kind][r][g]
                assert all(1 <= len(u) <= 10 for u in units)
                # A passage stops only where the next text of the sample would not fit.
                for unit, after in itertools.pairwise(units):
                    if len(unit) < 10:
                        assert not BUDGET.fits(" ".join([*unit, after[0]]))
    # A group's main and twin draws share no text (a text's words all start with its id).
    main, twin = draws.texts["long"][0]["za"], draws.twins["long"][0]["za"]
    assert not text_ids(main) & text_ids(twin)
    # LDA's fit and measurement halves still share no text.
    lda = draws.units["lda"][0]["za"]
    assert not set(corpus_texts(lda[:6])) & set(corpus_texts(lda[6:]))


def test_the_draws_count_the_texts_embedded_in_full_per_kind():
    narrow = TokenBudget(8, words)  # single texts of 7 or more words do not fit
    group = wordy_groups(au=600, za=300)
    draws = distance_draws(group, FLOORED, "tweet", 1, "error", narrow)
    counts = draws.texts_in_full().set_index("kind")
    assert set(counts.index) == {"short", "long", "lda", "sentence"}  # twins with their kind
    reps = [*draws.texts["short"], *draws.twins["short"]]
    short = [text for rep in reps for texts in rep.values() for text in texts]
    assert counts.loc["short", "texts"] == len(short)
    assert counts.loc["short", "texts_in_full"] == sum(narrow.fits(t) for t in short)
    assert 0 < counts.loc["short", "share"] < 1
    assert counts.loc["long", "share"] < 1  # a text longer than the window stands alone, cut
    assert distance_draws(group, FLOORED, "tweet", 1, "error").texts_in_full().empty
