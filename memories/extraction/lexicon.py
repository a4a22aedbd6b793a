"""Words the extractor, resolution and retrieval agree on."""

# How a speaker names themself. Every first-person test (resolution, question analysis, the
# offline extractor) reads this one set; contractions are split off before the lookup.
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})
# How a language model names the speaker when it does not use "I".
SPEAKER_REFERENCES = FIRST_PERSON | frozenset({"user", "the user", "speaker", "the speaker"})
# "We moved to Boston": in a team's scope both extractors take a first-person plural subject for
# the team (an entity named as the team, with these words among its aliases); in a personal scope
# for the speaker.
FIRST_PERSON_PLURAL = frozenset({"we", "us"})
TEAM_WORDS = FIRST_PERSON_PLURAL | frozenset({"our", "ours", "our team", "the team"})
