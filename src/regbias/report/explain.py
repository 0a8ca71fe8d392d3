"""What carries each difference: the report's section, the pair tables and the word figures.

The explanations are :mod:`regbias.analysis.explain`'s; the parent computes them once per
variant (:mod:`regbias.study.explain`) and this module writes them into its run.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from regbias.analysis.explain.places import MASK
from regbias.analysis.explain.result import Explanations, PairExplanation
from regbias.data.groups import BASELINE
from regbias.numbers import p_text
from regbias.report.canvas import new_figure
from regbias.report.escape import markdown_code, markdown_text
from regbias.tracking import artifacts as paths
from regbias.tracking.run_log import RunLog

#: Words each way, and typical texts a side, the report shows (the CSVs hold all).
SHOWN_WORDS = 8
SHOWN_TEXTS = 2
#: Masked place names a side the report lists (``explanations.json`` holds all).
SHOWN_NAMES = 12
#: The most characters of a typical text the report shows.
_TEXT_LIMIT = 240


def log_explanations(run: RunLog, explained: Explanations) -> None:
    """Every differing pair's words and typical texts, its figure, the masked test, the JSON.

    Nothing where the explanations did not run (``explained.skipped``: the report says why).
    """
    if explained.skipped:
        return
    run.json(explained.to_dict(), paths.EXPLAIN_JSON)
    if explained.masked is not None:
        run.table(explained.masked.table, paths.MASKED_TESTS_CSV)
    for pair in explained.pairs:
        name = pair_file(pair)
        run.table(pair.words, paths.explain_words_csv(name))
        run.table(pair.typical, paths.explain_typical_csv(name))
        run.figure(words_figure(pair), paths.explain_figure(name))


def pair_file(pair: PairExplanation) -> str:
    """The name of the pair's files, another for every pair (``artifacts.pair_name``)."""
    return paths.pair_name(pair.group_a, pair.group_b)


def words_figure(pair: PairExplanation, top: int = 15) -> Figure:
    """The pair's distinguishing words as diverging bars: side a's to the right, b's left.

    Where a side's texts hold no word, the other side's words by count (nothing is ranked).
    """
    a, b = pair.side_words("a").head(top), pair.side_words("b").head(top)
    words = [*a["word"], *b["word"]][::-1]
    if pair.ranked:
        values = np.array([*a["z"], *b["z"]], dtype=float)[::-1]
        label = f"log-odds z (right: {pair.group_a}, left: {pair.group_b}; descriptive)"
    else:
        values = np.array([*a["count_a"], *(-b["count_b"])], dtype=float)[::-1]
        label = f"word count (right: {pair.group_a}, left: {pair.group_b}; one side has no words)"
    fig = new_figure(6.5, 1.2 + 0.22 * max(len(words), 1))
    ax = fig.add_subplot()
    colours = (["#b2182b"] * len(a) + ["#2166ac"] * len(b))[::-1]
    ax.barh(range(len(words)), values, color=colours)
    ax.set_yticks(range(len(words)), words, fontsize=8)
    ax.axvline(0, color="#444", linewidth=0.8)
    ax.set_xlabel(label)
    ax.set_title(f"{pair.pair}: distinguishing words", fontsize=10)
    return fig


def masked_verdict(pair: PairExplanation) -> str:
    """``uk-us: differs, effect 0.077 → 0.071 with place names masked in 8% of texts``."""
    name = markdown_text(pair.pair)
    if pair.masked_differs is None:
        return f"{name}: differs, effect {pair.effect:.3g} (Holm p {p_text(pair.p_adjusted)})"
    where = f"with place names masked in {pair.masked_share:.0%} of texts"
    change = (
        f"effect {pair.effect:.3g} → {pair.masked_effect:.3g} {where} (Holm p "
        f"{p_text(pair.p_adjusted)} → {p_text(pair.masked_p_adjusted)})"
    )
    if pair.masked_differs:
        return f"{name}: differs, {change}"
    return f"{name}: differs, but not shown to differ once place names are masked: {change}"


#: Words that are HTML entities the shipped tweets keep (``&quot;`` as ``quot``), with the
#: character each stands for.
ENTITY_WORDS = {"quot": '"', "amp": "&", "lt": "<", "gt": ">"}


def explain_section(explained: Explanations, pool: str = "") -> str:
    """Markdown: per differing pair its top words each way, typical texts, masked verdict.

    ``pool``: how the training pool behind ``baseline`` was drawn (said where a pair has it).
    """
    lines = ["## What carries each difference", ""]
    if explained.skipped:
        lines.append(markdown_text(explained.skipped))
        return "\n".join(lines) + "\n"
    if not explained.pairs:
        lines.append("The test of record finds no pair that differs: there is nothing to explain.")
        return "\n".join(lines) + "\n"
    s = explained.settings
    prior = "the pair's pooled counts" if s.prior == "pair" else "every group's counts"
    lines += [
        "For each pair the test of record calls different, on the texts that test used: its "
        "distinguishing words (log-odds ratio with an informative Dirichlet prior, Monroe, "
        f"Colaresi and Quinn 2008; prior: {prior}; lower-cased words), its typical texts (those "
        "of each side furthest along the difference of the sides' mean sentence vectors, with "
        "their projection)"
        + (" and the place-name control" if explained.controlled else "")
        + ". A word's z ranks it and is descriptive, not a test: the words are chosen by it and "
        "no multiplicity is held.",
        "",
    ]
    if explained.controlled:
        lines += [
            "The place-name control runs the test of record again, with its own settings, seed, "
            f"families and Holm, on every group's texts with place names and demonyms replaced "
            f"by {markdown_code(MASK)} ({markdown_text(explained.gazetteer)}). A pair not shown "
            "to differ once they are masked may differ through place names, or the test may have "
            "lost the power to see it (a non-rejection shows neither); one that still "
            "differs is not shown to be free of them (which place is named is gone, that one "
            "is named is not; a place the gazetteer lacks stays). Names that are mostly "
            "ordinary words are left out, a few that are places only with a capital (turkey, "
            "jersey, chile, kiwi, oz, the languages) count only capitalised, and phrases such "
            "as french fries are kept (docs/method.md); each pair lists the names masked in "
            "its texts.",
            "",
        ]
    elif explained.note:
        lines += [markdown_text(explained.note), ""]
    else:
        lines += [
            "The place-name control did not run: `analysis.explain.mask_places=true` runs the "
            "test of record again with place names masked (a second test of record: "
            "docs/scale.md).",
            "",
        ]
    lines += place_share_lines(explained)
    lines += reading_notes(explained, pool)
    for pair in explained.pairs:
        lines += _pair_lines(pair)
    lines += [
        f"Every pair's words ({s.top_words} each way): {paths.EXPLAIN_FOLDER}/<pair>.csv (a "
        "name with a '-' or a character no file name takes adds a short hash); its "
        f"typical texts ({s.typical_texts} a side): {paths.EXPLAIN_FOLDER}/<pair>_typical.csv"
        + (f"; the masked test: {paths.MASKED_TESTS_CSV}." if explained.controlled else ".")
    ]
    return "\n".join(lines) + "\n"


def place_share_lines(explained: Explanations) -> list[str]:
    """Each differing pair's groups' share of texts naming a place, control or not."""
    shares = explained.place_shares
    if not shares:
        return []
    listed = ", ".join(f"{markdown_text(g)} {v:.1%}" for g, v in shares.items())
    return [
        f"Texts that name a place (the control's gazetteer, measured whether or not the control "
        f"runs): {listed}. A pair can differ through place names only as far as its texts name "
        "places.",
        "",
    ]


def reading_notes(explained: Explanations, pool: str = "") -> list[str]:
    """What the word lists show that is not the regions: the pool's dates, HTML entities."""
    notes = []
    if pool and any(BASELINE in (p.group_a, p.group_b) for p in explained.pairs):
        # How the pool was drawn is said once a page, in its Groups section.
        notes.append("`baseline`'s words are its training pool's (how it was drawn: Groups).")
    shown = {
        str(word)
        for pair in explained.pairs
        for side in ("a", "b")
        for word in pair.side_words(side).head(SHOWN_WORDS)["word"]
    }
    entities = [w for w in ENTITY_WORDS if w in shown]
    if entities:
        listed = ", ".join(f"`{w}` ({markdown_text(ENTITY_WORDS[w])})" for w in entities)
        notes.append(
            f"{listed}: HTML entities the shipped tweets keep (`&quot;` as `quot`), not words "
            "their authors typed: read them as those characters (the paper's data is kept as "
            "it is)."
        )
    return [*notes, ""] if notes else []


def _pair_lines(pair: PairExplanation) -> list[str]:
    name = markdown_text(pair.pair)
    lines = [f"### {name}", "", f"- **{masked_verdict(pair)}**"]
    if pair.masked_differs is not None:
        lines.append(f"- {masked_names_line(pair)}")
    for side, group in (("a", pair.group_a), ("b", pair.group_b)):
        lines.append(f"- {side_words_line(pair, side, group)}")
    for side, group in (("a", pair.group_a), ("b", pair.group_b)):
        for _, r in pair.side_texts(side).head(SHOWN_TEXTS).iterrows():
            lines.append(
                f"- typical of {markdown_text(group)} (projection {float(r['projection']):.3g}): "
                f"“{markdown_text(_short(str(r['text'])))}”"
            )
    lines += ["", f"![{name} words]({paths.explain_figure(pair_file(pair))})", ""]
    return lines


def side_words_line(pair: PairExplanation, side: str, group: str) -> str:
    """``words of uk: cuppa (z 3.1; 12 vs 0), ...``, each side its own words.

    A side whose texts hold no word says so; the other side then lists its words by count.
    """
    shown = markdown_text(group)
    if not pair.has_words(side):
        return f"words of {shown}: none, its texts have no words (emoji or punctuation only)"
    words = pair.side_words(side).head(SHOWN_WORDS)
    if not pair.ranked:
        listed = ", ".join(
            f"{markdown_text(r['word'])} ({int(r[f'count_{side}'])})" for _, r in words.iterrows()
        )
        return (
            f"words of {shown} (most used; the other side's texts have no words to rank them "
            f"against): {listed or 'none'}"
        )
    listed = ", ".join(
        f"{markdown_text(r['word'])} (z {float(r['z']):.1f}; {int(r['count_a'])} vs "
        f"{int(r['count_b'])})"
        for _, r in words.iterrows()
    )
    return f"words of {shown}: {listed or 'none'}"


def masked_names_line(pair: PairExplanation) -> str:
    """``place names masked: in uk's texts london 51, ...; in us's texts none``."""
    parts = []
    for side, group in (("a", pair.group_a), ("b", pair.group_b)):
        names = pair.masked_names(side)
        listed = ", ".join(f"{markdown_text(n)} {c}" for n, c in list(names.items())[:SHOWN_NAMES])
        if len(names) > SHOWN_NAMES:
            listed += f" and {len(names) - SHOWN_NAMES} more ({paths.EXPLAIN_JSON})"
        parts.append(f"in {markdown_text(group)}'s texts {listed or 'none'}")
    return "place names masked: " + "; ".join(parts)


def _short(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"
