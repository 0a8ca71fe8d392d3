"""What the tests could detect: planted differences at the study's own sizes."""
