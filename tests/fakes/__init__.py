"""Stand-ins for what cannot be reached from here: the clouds' APIs."""
