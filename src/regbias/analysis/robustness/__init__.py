"""Does a correlation survive its own evidence: bootstrap, leave-one-out."""
