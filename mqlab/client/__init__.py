"""mqlab.client."""
