"""Stage I: fine-tune classifiers per fold (Lightning) and predict every group's texts."""
