"""Items 10, 12 and 16 of issue 27: valid inputs and presets run without an error or a warning."""

from __future__ import annotations

import csv

from regbias.data.csv_corpus import read_csv_corpus

# Item 10: a valid CSV with one very long text is read, not called malformed.


def test_a_five_megabyte_text_is_a_valid_field(tmp_path):
    long_text = "word " * 1_000_000  # 5 MB in one field, quoted, with a comma inside
    path = tmp_path / "long.csv"
    rows = ["text,label,group", "short one,0,a", f'"{long_text}, end",1,a', "fine,0,b", "ok,1,b"]
    path.write_text("\n".join(rows) + "\n")
    corpus = read_csv_corpus(path, text_column="text", label_column="label", group_column="group")
    assert corpus.groups["a"].texts == ["short one", " ".join(f"{long_text}, end".split())]
    assert csv.field_size_limit() < 2**31  # raised to what the file needs, never overflowing
