"""Does a correlation survive its own evidence: bootstrap, attenuation, leave-one-out."""
