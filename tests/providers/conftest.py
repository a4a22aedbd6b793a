from tests.replay import replay_server  # noqa: F401  (the fixture, shared with other test folders)
