from numerix.testing.suite import *  # noqa: F403
