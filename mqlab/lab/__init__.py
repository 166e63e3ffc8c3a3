"""mqlab.lab."""
