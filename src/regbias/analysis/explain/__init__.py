"""What carries each difference the test of record finds: words, typical texts, place names."""
