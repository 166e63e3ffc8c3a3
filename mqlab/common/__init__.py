"""mqlab.common."""
