"""Every bullet of the findings is read at a glance: at most 300 characters, words kept in order."""

from __future__ import annotations

import re

from regbias.report.bullets import LIMIT, bullet_lines
from regbias.report.findings import GLOSSARY, details_markdown

#: A test-of-record finding as the real default study writes it (11 differing pairs).
PAIRS = (
    "Test of record, 15 region pairs: 11 differ (squared mean difference of sentence vectors, "
    "all distinct texts, 9999 relabellings, Holm per family p <= 0.05): "
    + ", ".join(
        f"{a}-{b} (effect 0.0{i}13 [0.0111, 0.0341], Holm p 0.0015)"
        for i, (a, b) in enumerate(
            [
                *[("au", "ca"), ("au", "uk"), ("au", "us"), ("ca", "nz"), ("ca", "uk")],
                *[("ca", "us"), ("nz", "us"), ("uk", "us"), ("au", "nz"), ("uk", "za")],
                ("nz", "uk"),
            ]
        )
    )
    + "; not shown to differ: au-za, ca-za, nz-za, us-za."
)
#: The primary's finding: a long parenthesis inside a clause, sentences, a list after a colon.
PRIMARY = (
    "**Primary hypothesis.** The accuracy gap against the long-text Sinkhorn distance "
    "(`dist_sinkhorn_long`, `gap_accuracy`; regions only, 15 pairs, one-sided rho > 0): rho = "
    "0.82 (interval for the measured rho 0.21 to 1.00, nominal 95%; in five simulated regimes "
    "its 95% interval covered their mean measured rho in 0.93-0.98 of studies, a check of those "
    "regimes, not a guarantee for this one: a bootstrap of seeds, evaluation texts and distance "
    "repetitions over the same pairs, for the rho a repeat of this design would measure on "
    "average, not the noise-free rho), exact Mantel p = 0.0069, significant at 0.05; with 6 "
    "groups 80% power is not reachable (standard error over the regions' true spread: 0.22 to "
    "1.5): at its largest rho, 0.30, the power is 0.25 (95% interval 0.23-0.28). The Mantel p "
    "answers whether there is an association at all; the interval, what rho a repeat of this "
    "design would measure."
)


def _words(text: str) -> list[str]:
    """The text's words and numbers, in order (the layout's separators left out)."""
    return re.findall(r"[\w.\-*`'<=>%\[\]]+", text.replace("- ", " "))


def test_a_short_finding_is_one_bullet() -> None:
    assert bullet_lines("rho = 0.5, p = 0.2.") == ["- rho = 0.5, p = 0.2."]


def test_long_findings_become_short_bullets_with_every_word_kept() -> None:
    """Every word stays; in order, except a long parenthesis lifted beneath its clause."""
    for finding in (PAIRS, PRIMARY):
        assert len(finding) > 2 * LIMIT
        lines = bullet_lines(finding)
        assert len(lines) > 3 and all(len(line) <= LIMIT for line in lines), lines
        words = _words(" ".join(line.strip() for line in lines))
        assert sorted(words) == sorted(_words(finding))
        assert words == _words(finding) or finding is PRIMARY
        assert lines[0].startswith("- ") and all(
            line.startswith("    ") for line in lines[1:]
        )  # one bullet, its clauses beneath it


def test_a_list_of_pairs_is_one_pair_a_bullet_under_its_count() -> None:
    lines = bullet_lines(PAIRS)
    assert lines[0] == "- Test of record, 15 region pairs:"
    assert lines[1].startswith("    - 11 differ (squared mean difference")
    listed = [line for line in lines if line.startswith("        - ")]
    assert len(listed) == 11 and listed[0].startswith("        - au-ca (effect")
    assert lines[-1] == "    - not shown to differ: au-za, ca-za, nz-za, us-za."


def test_a_code_span_or_bracket_is_never_split() -> None:
    code = "`" + "a; b: c, " * 40 + "`"
    assert bullet_lines(code) == [f"- {code}"]  # nothing to split at outside the span


def test_the_details_and_the_terms_have_no_bullet_over_the_limit() -> None:
    page = details_markdown([PAIRS, PRIMARY])
    bullets = [line for line in page.splitlines() if line.lstrip().startswith("- ")]
    assert len(bullets) > len(GLOSSARY) and all(len(line) <= LIMIT for line in bullets)
