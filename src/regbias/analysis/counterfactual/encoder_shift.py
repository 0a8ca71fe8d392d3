"""The encoder's side: how far a rewrite into B's variety moves A's texts toward B.

For a direction A -> B, ``D`` is the difference of the groups' mean sentence vectors (B's less
A's, every distinct text of each, texts both hold left out). A changed text's rewrite moves its
vector by ``d``; the share of the A-B difference it explains is ``d . D / |D|^2``. Over the
group, unchanged texts move by 0, so the group's share is the changed texts' sum over ``n_A``:
the part of the mean difference that the rewrite of A's texts closes (1: all of it, 0: none,
negative: it moves A away from B).

The control edits the same words into same-frequency words of no variety
(:mod:`regbias.data.rewrite_sets`). The test asks whether the rewrite moves the texts toward B
more than the control does, paired by text (:func:`~regbias.analysis.counterfactual.sign_flip.
sign_flip_p`, one-sided), and whether it moves them toward B at all (the rewrite against the
text as written); the verdict needs both (an intersection-union test: its p is the larger), Holm
over the directions. "Any edit moves vectors" is then not read as the variety, and neither is a
control that moves the texts away from B while the rewrite moves them nowhere.

``|D|^2`` of the sample means carries noise (the groups' summed variances over their sizes),
which would shrink every share toward 0 where a group is small; the share's square is
corrected for it, and a share is refused where ``D`` is too close to its noise
(:data:`CLEAR_OF_NOISE`). The intervals are basic bootstraps over the texts of A (with their
shifts) and of B (:func:`pivot_interval`), so they carry the noise of ``D`` too; their
coverage in simulated groups is in ``benchmarks/counterfactual_coverage.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from regbias.analysis.counterfactual.settings import MIN_CHANGED, CounterfactualSettings
from regbias.analysis.counterfactual.sign_flip import Verdict, holm_rows, sign_flip_p
from regbias.analysis.pairs.pooled_scores import draw_counts, percentile_interval
from regbias.data.rewrite_sets import RewriteSet
from regbias.data.sampling import rng_for
from regbias.data.variety_rewrite import VARIETIES

#: ``embed(texts) -> (n, d)`` sentence vectors.
Embed = Callable[[list[str]], np.ndarray]
#: A share is measured where ``|D|^2`` (less its noise) is at least this many times its noise:
#: nearer the noise, its bootstrap interval covers less than it says (0.90 at 10 times, 0.91 at
#: 5 times in simulated groups; ``benchmarks/counterfactual_coverage.py``).
CLEAR_OF_NOISE = 15.0
_WITHIN_NOISE = (
    "the A-B mean difference is too close to its noise for a share (its square, less the "
    f"groups' variances over their sizes, under {CLEAR_OF_NOISE:g} times that noise)"
)
#: A share needs this many texts in each group: with a 250-text group its interval covered 0.91
#: even where ``D`` stood 16 times above its noise (0.94-0.96 from 2,000 texts up).
MIN_GROUP_TEXTS = 2000
_SMALL_GROUP = (
    f"a group has fewer than {MIN_GROUP_TEXTS:,} texts: too few for a share whose interval "
    "covers what it says"
)
#: A share's interval is refused where more bootstrap draws than this leave no difference.
_MOST_UNDEFINED = 0.01
#: Bootstrap resamples drawn at once (bounds a ``(chunk, n_A)`` weight matrix).
_CHUNK = 128


@dataclass(frozen=True)
class EncoderShift:
    """One direction's shift toward the other group, by the rewrite and by its control.

    Attributes:
        source, other: A (the texts rewritten) and B (whose variety they are rewritten into).
        changed, examined: A's texts the rewrite changed, of those it read.
        share, share_low, share_high: the share of the A-B mean difference the rewrite
            explains over A's texts (unchanged ones move by 0), with its interval.
        per_text: the mean share of one changed text.
        control, control_low, control_high: the same share for the control edit.
        verdict: the rewrite's shift toward B against none (``moved``) and against the
            control's (``beyond``); its p the larger, Holm over the directions.
        note: why there is no test or interval ("" where there is).
    """

    source: str
    other: str
    changed: int
    examined: int
    share: float
    share_low: float
    share_high: float
    per_text: float
    control: float
    control_low: float
    control_high: float
    verdict: Verdict
    note: str = ""

    @property
    def direction(self) -> str:
        """``A>B``."""
        return f"{self.source}>{self.other}"

    @property
    def share_changed(self) -> float:
        """The share of A's texts the rewrite changed."""
        return self.changed / self.examined if self.examined else 0.0


@dataclass(frozen=True)
class _Vectors:
    """A direction's vectors: A's and B's texts, and A's changed texts three ways."""

    a: np.ndarray
    b: np.ndarray
    changed: np.ndarray  # positions of the changed texts among A's
    shift: np.ndarray  # rewrite - original, per changed text
    control: np.ndarray  # control - original, per changed text


def encoder_shifts(
    sets: Sequence[RewriteSet],
    directions: Sequence[tuple[str, str]],
    groups: Mapping[str, Sequence[str]],
    embed: Embed,
    settings: CounterfactualSettings,
    *,
    seed: int,
    resamples: int,
    confidence: float,
    alpha: float,
) -> list[EncoderShift]:
    """Every direction's shift toward the other group (:class:`EncoderShift`), in order."""
    by_source = {(s.group, s.target): s for s in sets}
    rows = []
    for source, other in directions:
        chosen = by_source[source, VARIETIES[other]]
        vectors = _vectors(chosen, groups[source], groups[other], embed)
        rows.append(_shift(source, other, chosen, vectors, settings, seed, resamples, confidence))
    return holm_rows(rows, alpha)


def _vectors(
    rewrite: RewriteSet, texts_a: Sequence[str], texts_b: Sequence[str], embed: Embed
) -> _Vectors:
    a_texts, b_texts = list(dict.fromkeys(texts_a)), list(dict.fromkeys(texts_b))
    both = set(a_texts) & set(b_texts)
    a_texts = [t for t in a_texts if t not in both]
    b_texts = [t for t in b_texts if t not in both]
    position = {t: i for i, t in enumerate(a_texts)}
    kept = [i for i, t in enumerate(rewrite.originals) if t in position]
    a = np.asarray(embed(a_texts), dtype=np.float64)
    b = np.asarray(embed(b_texts), dtype=np.float64)
    changed = np.array([position[rewrite.originals[i]] for i in kept], dtype=np.int64)
    rewritten = np.asarray(embed([rewrite.rewritten[i] for i in kept]), dtype=np.float64)
    controls = np.asarray(embed([rewrite.controls[i] for i in kept]), dtype=np.float64)
    original = a[changed] if len(changed) else np.zeros((0, a.shape[1]))
    rewritten = rewritten.reshape(len(kept), -1) if len(kept) else original
    controls = controls.reshape(len(kept), -1) if len(kept) else original
    return _Vectors(a, b, changed, rewritten - original, controls - original)


def _shift(
    source: str,
    other: str,
    rewrite: RewriteSet,
    v: _Vectors,
    settings: CounterfactualSettings,
    seed: int,
    resamples: int,
    confidence: float,
) -> EncoderShift:
    difference = v.b.mean(axis=0) - v.a.mean(axis=0)
    noise = _noise(v)
    scale = float(difference @ difference) - noise
    n_a, n = len(v.a), len(v.changed)
    large = min(n_a, len(v.b)) >= MIN_GROUP_TEXTS
    measurable = large and scale >= CLEAR_OF_NOISE * noise
    share = control = per_text = low = high = c_low = c_high = toward = beyond = math.nan
    if n >= MIN_CHANGED and measurable:
        share = float((v.shift @ difference).sum() / (n_a * scale))
        control = float((v.control @ difference).sum() / (n_a * scale))
        per_text = float((v.shift @ difference).mean() / scale)
    note = "" if measurable else (_WITHIN_NOISE if large else _SMALL_GROUP)
    if n < MIN_CHANGED:
        note = f"{n} changed texts: too few for a test or an interval (at least {MIN_CHANGED})"
    else:
        rng = rng_for(seed, "counterfactual-encoder", source, other)
        # The tests are the same for any positive scale of D: its raw square serves.
        unit = float(difference @ difference)
        moved, edited = v.shift @ difference / unit, v.control @ difference / unit
        toward, beyond = shift_p(moved, edited, settings.relabellings, rng)
        if resamples > 0 and measurable:
            shares, controls = share_replicates(v, resamples, rng, noise)
            if np.isnan(shares).mean() > _MOST_UNDEFINED:  # no share without its interval
                note, share, control, per_text = _WITHIN_NOISE, math.nan, math.nan, math.nan
            else:
                plugin = scale / unit  # the sample's own share has |D|^2 as its noise-free square
                low, high = pivot_interval(share, share * plugin, shares, confidence)
                c_low, c_high = pivot_interval(control, control * plugin, controls, confidence)
    return EncoderShift(
        source,
        other,
        n,
        rewrite.examined,
        share,
        low,
        high,
        per_text,
        control,
        c_low,
        c_high,
        Verdict(toward, beyond),
        note=note,
    )


def shift_p(
    moved: np.ndarray, edited: np.ndarray, relabellings: int, rng: np.random.Generator
) -> tuple[float, float]:
    """The two parts of the verdict: ``moved`` (each text's share) above 0, and above ``edited``.

    ``moved`` and ``edited``: each changed text's share of the difference, by the rewrite and by
    the control. The verdict's p is the larger of the two.
    """
    toward = sign_flip_p(moved, relabellings, rng, "greater")
    return toward, sign_flip_p(moved - edited, relabellings, rng, "greater")


def _noise(v: _Vectors) -> float:
    """The expected square length of ``D``'s noise: each group's summed variance over its size.

    ``|D|^2`` of the sample means exceeds the groups' true one by this on average, and a share
    over it would shrink toward 0 where the noise is not small (a group of 250 texts).
    """
    return sum(float(x.var(axis=0, ddof=1).sum()) / len(x) for x in (v.a, v.b) if len(x) > 1)


def pivot_interval(
    estimate: float, truth: float, replicates: np.ndarray, confidence: float
) -> tuple[float, float]:
    """The basic (pivotal) bootstrap interval of ``estimate``.

    ``truth`` is the bootstrap world's value (the share with the sample's own ``|D|^2``, which
    is that world's noise-free square); the replicates' spread about it is set about the
    estimate, reversed. A percentile interval would sit below a share whose square was
    corrected for noise, since the replicates' squares carry that noise again.
    """
    low, high = percentile_interval(replicates, confidence)
    return estimate - (high - truth), estimate - (low - truth)


def share_replicates(
    v: _Vectors, resamples: int, rng: np.random.Generator, noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """Both shares in ``resamples`` draws of A's texts (with their shifts) and of B's.

    Each draw's ``|D|^2`` less ``noise`` (NaN where that leaves nothing), as the share's is.
    """
    n_a, n_b = len(v.a), len(v.b)
    shares, controls = [], []
    left = resamples
    while left > 0:
        size = min(_CHUNK, left)
        w_a, w_b = draw_counts(n_a, size, rng), draw_counts(n_b, size, rng)
        difference = w_b @ v.b / n_b - w_a @ v.a / n_a  # (size, d)
        scale = (np.einsum("rd,rd->r", difference, difference) - noise) * n_a
        scale = np.where(scale > 0, scale, np.nan)
        weights = w_a[:, v.changed]  # (size, n): each changed text's times drawn
        shares.append(np.einsum("rn,nd,rd->r", weights, v.shift, difference) / scale)
        controls.append(np.einsum("rn,nd,rd->r", weights, v.control, difference) / scale)
        left -= size
    return np.concatenate(shares), np.concatenate(controls)


def share_with_interval(
    a: np.ndarray,
    b: np.ndarray,
    changed: np.ndarray,
    shift: np.ndarray,
    resamples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """A group's share and its interval from raw vectors (the coverage benchmark's entry).

    NaN where the difference is too close to its noise (:data:`CLEAR_OF_NOISE`).

    ``a`` and ``b``: the groups' vectors; ``changed``: positions of the changed texts in ``a``;
    ``shift``: each one's move (rewrite less original).
    """
    v = _Vectors(a, b, changed, shift, np.zeros_like(shift))
    difference = b.mean(axis=0) - a.mean(axis=0)
    noise = _noise(v)
    scale = float(difference @ difference) - noise
    if scale < CLEAR_OF_NOISE * noise or min(len(a), len(b)) < MIN_GROUP_TEXTS:
        return math.nan, math.nan, math.nan
    share = float((shift @ difference).sum() / (len(a) * scale))
    truth = share * scale / float(difference @ difference)
    replicates = share_replicates(v, resamples, rng, noise)[0]
    return share, *pivot_interval(share, truth, replicates, confidence)
