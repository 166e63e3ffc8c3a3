"""mqlab.broker."""
