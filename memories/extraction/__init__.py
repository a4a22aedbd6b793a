"""The extraction domain: what an episode's text becomes before resolution and reconciliation.

- `vocabulary.py`: the attributes, which are single-valued, their other spellings;
- `schemas.py`: the Extraction / ReconcileDecision contract (pydantic);
- `prompts.py`: what a language model is asked;
- `extractors.py`: the offline rules or a model behind one interface, and the clean-up of model replies;
- `offline/`: the rule-based English extractor;
- `lexicon.py`: the first-person words extraction, resolution and retrieval agree on.
"""
