"""The extraction domain: the attribute vocabulary, the prompts, and the offline rule-based extractor."""
