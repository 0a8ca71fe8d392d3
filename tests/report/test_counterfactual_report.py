"""The counterfactual section: one row per direction, non-rejections worded as such."""

from __future__ import annotations

import io
import math
from dataclasses import replace

from regbias.analysis.counterfactual.classifier_flips import ClassifierFlip, Interval
from regbias.analysis.counterfactual.encoder_shift import EncoderShift
from regbias.analysis.counterfactual.result import Counterfactual
from regbias.analysis.counterfactual.sign_flip import Verdict
from regbias.report.counterfactual import counterfactual_section, shares_figure

NAN = math.nan


def _shift(source, other, differs, p_adjusted, changed=846, note=""):
    return EncoderShift(
        source, other, changed, 17426, 0.021, 0.012, 0.030, 0.43, 0.004, -0.002, 0.01,
        Verdict(0.001, 0.002, p_adjusted, differs), note,
    )  # fmt: skip


def _flip(differs):
    value = Interval(0.031, 0.02, 0.04)
    return ClassifierFlip(
        "us", "british", 846, 25, value, Interval(0.06), Interval(-0.004, -0.01, 0.002),
        Interval(-0.02), Verdict(0.4, 0.5, 0.5, differs),
    )  # fmt: skip


def test_each_direction_is_one_row_and_a_non_rejection_says_not_shown():
    untested = _shift("za", "us", False, NAN, 1, "1 changed texts: too few")
    shifts = [_shift("us", "uk", True, 0.004), _shift("uk", "us", False, 0.3), untested]
    found = Counterfactual(shifts, [_flip(False)])
    page = counterfactual_section(found)
    assert page.count("| us→uk |") == 1 and page.count("| uk→us |") == 1
    assert "moves toward uk beyond the control (Holm p 0.004)" in page
    assert "not shown to move toward us beyond the control (Holm p 0.3)" in page
    assert "not shown to change accuracy beyond the control (Holm p 0.5)" in page
    assert "3.1% [2.0%, 4.0%] (6.0%)" in page  # the flip rate, its interval, the control's
    assert "-0.4 [-1.0, +0.2] (control -2.0)" in page  # accuracy change in points
    assert "- za→us: 1 changed texts: too few" in page and "| not tested |" in page
    assert "no difference" not in page and "lower bound on the variety" in page
    assert shares_figure(found.encoder).axes  # the figure draws every direction
    outside = replace(found.encoder[0], share=0.05, share_low=0.01, share_high=0.03)
    shares_figure([outside, found.encoder[2]]).savefig(io.BytesIO())  # an interval beside it


def test_the_tables_carry_both_parts_of_each_verdict():
    found = Counterfactual([_shift("us", "uk", True, 0.004)], [_flip(False)])
    encoder, classifier = found.encoder_frame(), found.classifier_frame()
    assert {"p_toward", "p_beyond_control", "p_adjusted", "share_changed"} <= set(encoder)
    assert encoder.loc[0, "moves_toward_beyond_control"]
    assert {"flip_rate_ci_low", "p_change", "changes_beyond_control"} <= set(classifier)
