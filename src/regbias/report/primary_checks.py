"""The primary's stability on the page: its checks, seed by seed, and a single job's caveat."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from regbias.analysis.correlation.by_seed import SeedPrimary
from regbias.analysis.correlation.primary import PrimaryTest
from regbias.numbers import p_text
from regbias.report.escape import markdown_text

#: Where docs/method.md explains the checks and the seed-by-seed table.
CHECKS_SECTION = "method.md#is-the-primary-more-than-group-size"


def _verdict(test: PrimaryTest | None) -> str:
    if test is None or test.note:
        return "not tested"
    if not math.isfinite(test.rho):
        return "no rank correlation (a constant column)"
    return "supported" if test.significant else "not shown"


def _cells(test: PrimaryTest | None) -> str:
    """``rho | p | verdict`` of a table row; a dash where there is no number."""
    if test is None or test.note or not math.isfinite(test.rho):
        return f"– | – | {_verdict(test)}"
    return f"{test.rho:.2f} | {p_text(test.p_value)} | {_verdict(test)}"


def checks_section(test: PrimaryTest | None) -> list[str]:
    """``## The primary against the groups' noise and each region``: one row per check."""
    if test is None or test.checks is None:
        return []
    rows = ["| test | regions | rho | p | verdict |", "|:---|:---|---:|---:|:---|"]
    regions = " ".join(test.groups)
    rows.append(
        f"| primary | {markdown_text(regions)} | {test.rho:.2f} | {p_text(test.p_value)} | "
        f"{_verdict(test)} |"
    )
    noise = test.checks.noise
    shown = "supported" if noise.significant else "not shown"
    if noise.tested:
        rows.append(
            f"| beyond the groups' noise ({noise.draws:,} draws) | {markdown_text(regions)} | "
            f"{test.rho:.2f} against {noise.null_rho:.2f} | {p_text(noise.p_value)} | {shown} |"
        )
    else:
        rows.append(f"| beyond the groups' noise | | | | not tested: {markdown_text(noise.note)} |")
    for check in test.checks.without_each:
        if not check.tested:
            rows.append(f"| without {markdown_text(check.left_out)} | | | | not tested |")
            continue
        kept = " ".join(g for g in test.groups if g != check.left_out)
        rows.append(
            f"| without {markdown_text(check.left_out)} | {markdown_text(kept)} | "
            f"{check.rho:.2f} | {p_text(check.p_value)} | "
            f"{'supported' if check.significant else 'not shown'} |"
        )
    fragile = " **Supported but fragile:** the rows marked not shown." if test.fragile else ""
    return [
        "## The primary against the groups' noise and each region",
        "",
        "Beyond noise: the primary's rho against the rhos its distances reach with gaps of "
        "noise alone (each group's metric moved as the bootstrap behind its interval moves "
        "it, every group's true value the same: small groups' gaps are large by noise alone); "
        "its row gives the primary's rho against the draws' median rho. Then the same "
        "one-sided test on the pairs without each region. All at level "
        f"{test.significance:g} ([method]({CHECKS_SECTION})).{fragile}",
        "",
        *rows,
        "",
    ]


def seed_section(found: Sequence[SeedPrimary]) -> list[str]:
    """``## The primary seed by seed``: each seed's job alone, and the study without it."""
    if not found:
        return []
    rows = [
        "| seed | alone: rho | alone: p | alone | without it: rho | without it: p | without it |",
        "|:---|---:|---:|:---|---:|---:|:---|",
    ]
    for item in found:
        rows.append(
            f"| {markdown_text(item.seed)} | {_cells(item.alone)} | {_cells(item.without)} |"
        )
    return [
        "## The primary seed by seed",
        "",
        f"Each seed's job tests the primary on its own distances and gaps (1/{len(found)} of the "
        "data, so a weaker test); the study without that seed pools the others. A "
        "verdict that holds only with every seed pooled rests on the pooling "
        f"([method]({CHECKS_SECTION})).",
        "",
        *rows,
        "",
    ]


def seed_line(found: Sequence[SeedPrimary]) -> str:
    """One detail line: in how many seeds the primary is supported alone and without each."""
    if not found:
        return ""
    alone = [s.alone for s in found if math.isfinite(s.alone.rho)]
    without = [s.without for s in found if s.without is not None and math.isfinite(s.without.rho)]
    if not alone:
        return ""
    untested = len(found) - len(alone)
    text = (
        f"**Primary seed by seed.** Supported by {sum(t.significant for t in alone)} of "
        f"{len(alone)} seeds' jobs alone (rho {min(t.rho for t in alone):.2f} to "
        f"{max(t.rho for t in alone):.2f}"
        + (f"; {untested} more gave no rank correlation" if untested else "")
        + ")"
    )
    if without:
        text += (
            f"; with each seed left out, supported in {sum(t.significant for t in without)} of "
            f"{len(without)} (p up to {p_text(max(t.p_value for t in without))})"
        )
    return text + "."


def single_job_caveat(meta: Mapping[str, object], test: PrimaryTest | None) -> str:
    """A single job's caveat: its primary is one seed's, not a study's ("" for a sweep)."""
    if test is None or "jobs" in meta or meta.get("seed") is None:
        return ""
    return (
        f"One job, one seed ({markdown_text(meta['seed'])}): its primary tests this seed's "
        "distances and gaps alone. A study over seeds (`-m seed='range(5)'`) pools them and "
        "tests again; its verdict can differ, and its report shows each seed's."
    )
