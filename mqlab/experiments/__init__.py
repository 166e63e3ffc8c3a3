"""mqlab.experiments."""
