"""What a run writes for people: the report, its figures, headline and comparisons."""
