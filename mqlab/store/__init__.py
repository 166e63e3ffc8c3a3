"""mqlab.store."""
